"""``gitmem mcp --http [HOST:]PORT``: the MCP server's tools over Streamable HTTP at ``/mcp``.

The same ``Server`` as over stdio (``mcp_server.build_server``), served by the ``mcp``
package's Streamable HTTP transport under uvicorn. Every request must carry
``Authorization: Bearer <token>`` (401 otherwise); the package's DNS-rebinding check
refuses a Host header other than the bound address (421) and a browser Origin from
anywhere else (403). The server is one gitmem session, for every client it serves:
it ends under the review policy when the server stops (SIGTERM, SIGINT, SIGHUP).
Imported only for ``--http``: uvicorn is not loaded for stdio.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import secrets
import signal
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import uvicorn
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import (
    DEFAULT_MAX_REQUEST_BODY_SIZE,
    TransportSecurityMiddleware,
    TransportSecuritySettings,
)
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gitmem.bridges.mcp_server import build_server
from gitmem.bridges.mcp_wire import wire_error
from gitmem.errors import ConfigError, InvalidInput
from gitmem.features import session_branches as sessions
from gitmem.memory.repo import MemoryRepo

PATH = "/mcp"
TOKEN_VAR = "GITMEM_MCP_TOKEN"  # read by the CLI; named when a token is made
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


@dataclass(frozen=True)
class Address:
    host: str  # as bound: "127.0.0.1", "::1", "localhost"
    port: int

    @property
    def netloc(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.netloc}{PATH}"


def parse_address(text: str) -> Address:
    """``PORT``, ``HOST:PORT`` or ``[IPv6]:PORT``; the host defaults to 127.0.0.1."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host = "127.0.0.1"
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not port.isdigit() or not 0 <= int(port) <= 65535 or not host:
        raise InvalidInput(f"--http takes [HOST:]PORT (e.g. 8765 or 127.0.0.1:8765), not {text!r}")
    with contextlib.suppress(ValueError):
        if ipaddress.ip_address(host).is_unspecified:
            raise InvalidInput(
                f"--http {text}: bind one address, not all of them: clients' Host headers are "
                "checked against it (put a proxy in front to serve other names)"
            )
    return Address(host, int(port))


def security(address: Address) -> TransportSecuritySettings:
    """The Host and Origin values a request may carry: the bound address, and the
    loopback names when it is a loopback address."""
    netlocs = [address.netloc]
    if _is_loopback(address.host):
        netlocs += [f"{name}:{address.port}" for name in LOOPBACK_NAMES]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=netlocs,
        allowed_origins=[f"http://{n}" for n in netlocs],
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class BearerToken:
    """ASGI middleware: an HTTP request without ``Authorization: Bearer <token>`` is 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.expected = app, token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            scheme, _, value = given.strip().partition(b" ")
            # the scheme's name is case-insensitive (RFC 7235); the token is not
            ok = scheme.lower() == b"bearer" and hmac.compare_digest(value.strip(), self.expected)
            if not ok:
                await _unauthorized(send)
                return
        await self.app(scope, receive, send)


class WireChecks:
    """ASGI middleware: a POSTed body that is not a valid JSON-RPC message gets the error
    the stdio server gives it (``mcp_wire``), as HTTP 400; the package would answer most
    with -32602 and id null. Host and Origin are checked first, as the package does."""

    def __init__(self, app: ASGIApp, settings: TransportSecuritySettings) -> None:
        self.app, self.security = app, TransportSecurityMiddleware(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        refused = await self.security.validate_request(Request(scope), is_post=True)
        if refused is not None:
            return await refused(scope, receive, send)
        body, more, other = b"", True, None
        while more and len(body) <= DEFAULT_MAX_REQUEST_BODY_SIZE:  # past it: the package's 413
            message = await receive()
            if message["type"] != "http.request":
                other = message
                break
            body += message.get("body", b"")
            more = message.get("more_body", False)
        error = None if more or other else wire_error(body.decode("utf-8", "replace"))
        if error is not None:
            answer = error.model_dump_json(by_alias=True, exclude_unset=True).encode()
            return await _respond(send, 400, answer, b"application/json")
        queue: list[Message] = [{"type": "http.request", "body": body, "more_body": more}]
        queue += [other] if other else []

        async def replay() -> Message:
            return queue.pop(0) if queue else await receive()

        await self.app(scope, replay, send)


async def _respond(
    send: Send, status: int, body: bytes, kind: bytes, *extra: tuple[bytes, bytes]
) -> None:
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _unauthorized(send: Send) -> None:
    body = b"missing or wrong bearer token: send Authorization: Bearer <GITMEM_MCP_TOKEN>\n"
    challenge = (b"www-authenticate", b'Bearer realm="gitmem"')
    await _respond(send, 401, body, b"text/plain; charset=utf-8", challenge)


class _Server(uvicorn.Server):
    """uvicorn's server, stopped by SIGTERM, SIGINT or SIGHUP without re-raising the
    signal afterwards (it would kill the process before the session ends). Stopping, it
    ends each client's GET stream first: uvicorn waits for open responses, and that one
    never ends by itself (whether sse-starlette cuts it depends on its version)."""

    def __init__(
        self,
        config: uvicorn.Config,
        manager: StreamableHTTPSessionManager,
        ready: Callable[[], None],
    ) -> None:
        super().__init__(config)
        self.manager, self.ready = manager, ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:  # said now, the stop signals are ours: a stop at once ends it whole
            self.ready()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # the manager has no public list of its sessions
        for transport in list(self.manager._server_instances.values()):
            transport.close_standalone_sse_stream()
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        stops = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
        old = {sig: signal.signal(sig, self.handle_exit) for sig in stops}
        try:
            yield
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)


def serve_http(
    repo: MemoryRepo,
    address: str,
    token: str | None = None,
    *,
    say: Callable[[str], None] = print,
) -> sessions.FinishResult:
    """Serve the MCP tools over Streamable HTTP at ``address`` (``[HOST:]PORT``; port 0
    picks a free one) until SIGTERM, SIGINT or SIGHUP; returns how the server's session
    ended. Without ``token`` one is made; ``say`` gets it, then the URL once serving."""
    where = parse_address(address)
    sock = _listen(where)
    where = Address(where.host, sock.getsockname()[1])
    if token is not None and token.strip() != token:
        raise InvalidInput(f"{TOKEN_VAR} has spaces around it; an HTTP header cannot carry them")
    if not token:
        token = secrets.token_urlsafe(32)
        say(f"gitmem mcp: no token given ({TOKEN_VAR} is not set); this server's token: {token}")
    session = sessions.start(repo)
    try:
        checks = security(where)
        tools = build_server(repo, session)
        app = tools.streamable_http_app(
            streamable_http_path=PATH, transport_security=checks, host=where.host
        )
        config = uvicorn.Config(
            BearerToken(WireChecks(app, checks), token),
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=5,  # for a tool call in flight at the stop
        )
        serving = f"gitmem mcp: serving {where.url} (session {session.id})"
        uvicorn_server = _Server(config, tools.session_manager, lambda: say(serving))
        asyncio.run(uvicorn_server.serve(sockets=[sock]))
    finally:
        sock.close()
        done = sessions.finish(repo, session)
    return done


def _listen(address: Address) -> socket.socket:
    family = socket.AF_INET6 if ":" in address.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address.host, address.port))
        sock.listen(128)
    except OSError as err:
        sock.close()
        raise ConfigError(f"cannot listen on {address.netloc}: {err.strerror}") from None
    return sock
