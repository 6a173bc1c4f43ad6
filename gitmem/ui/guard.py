"""The page's gate: a request is served only with the token (from the printed URL, then
a cookie), a Host naming this server (DNS rebinding) and, when it names one, this
server's Origin. Every answer carries headers that forbid framing and foreign scripts."""

from __future__ import annotations

import hmac
from urllib.parse import parse_qs, urlencode

from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "gitmem_ui"
HEADERS = [
    (b"content-security-policy", b"default-src 'self'; frame-ancestors 'none'; base-uri 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # no-referrer: a form posts Origin: null
    (b"cache-control", b"no-store"),
]


class Guard:
    def __init__(self, app: ASGIApp, token: str, netlocs: list[str]) -> None:
        self.app = app
        self.token = token
        self.netlocs = set(netlocs)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if headers.get("host") not in self.netlocs:
            return await _refuse(send, 403, "refused: this server is not named by that Host")
        origin = headers.get("origin")
        if origin is not None and origin not in {f"http://{n}" for n in self.netlocs}:
            return await _refuse(send, 403, "refused: a page from another origin")
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        given = query.pop("token", [""])[0]
        if given and self._good(given):
            rest = urlencode(query, doseq=True)
            where = scope["path"] + (f"?{rest}" if rest else "")
            cookie = f"{COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/"
            return await _send(
                send, 303, b"", [(b"location", where.encode()), (b"set-cookie", cookie.encode())]
            )
        if not self._good(_cookie(headers.get("cookie", ""))):
            return await _refuse(
                send, 401, "refused: open the URL gitmem ui printed (it carries the token)"
            )

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)

    def _good(self, given: str) -> bool:
        return hmac.compare_digest(given.encode(), self.token.encode())


def _cookie(header: str) -> str:
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE:
            return value
    return ""


async def _refuse(send: Send, status: int, text: str) -> None:
    await _send(
        send, status, text.encode() + b"\n", [(b"content-type", b"text/plain; charset=utf-8")]
    )


async def _send(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [*headers, *HEADERS]})
    await send({"type": "http.response.body", "body": body})
