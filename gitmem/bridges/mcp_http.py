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
import json
import secrets
import signal
import socket
from collections.abc import Callable, Iterator
from types import FrameType

import uvicorn
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import (
    DEFAULT_MAX_REQUEST_BODY_SIZE,
    TransportSecurityMiddleware,
    TransportSecuritySettings,
)
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gitmem.bridges.listen_address import Address, judge, listen, token_problem
from gitmem.bridges.mcp_server import build_server
from gitmem.bridges.mcp_wire import wire_error
from gitmem.errors import InvalidInput
from gitmem.memory.repo import MemoryRepo
from gitmem.review import session_branches as sessions

PATH = "/mcp"
TOKEN_VAR = "GITMEM_MCP_TOKEN"  # read by the CLI; named when a token is made


def security(address: Address) -> TransportSecuritySettings:
    """The Host and Origin values a request may carry (``Address.host_headers``)."""
    netlocs = address.host_headers()
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=netlocs,
        allowed_origins=[f"http://{n}" for n in netlocs],
    )


class BearerToken:
    """ASGI middleware: an HTTP request without ``Authorization: Bearer <token>`` is 401,
    one with two ``Authorization`` headers 400 (a proxy may read the other one). Failed
    attempts wait their turn, each longer than the last (to 1 s) until one succeeds:
    guessing is slow, and a right token is never kept waiting."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.expected = app, token.encode()
        self.failures, self.turn = 0, asyncio.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = [v for k, v in scope["headers"] if k.lower() == b"authorization"]
            if len(given) > 1:
                body = b"refused: a request with two Authorization headers\n"
                return await _respond(send, 400, body, b"text/plain; charset=utf-8")
            scheme, _, value = (given or [b""])[0].strip().partition(b" ")
            # the scheme's name is case-insensitive (RFC 7235); the token is not
            ok = scheme.lower() == b"bearer" and hmac.compare_digest(value.strip(), self.expected)
            if not ok:
                async with self.turn:
                    self.failures += 1
                    await asyncio.sleep(min(0.05 * 2 ** (self.failures - 1), 1.0))
                return await _unauthorized(send)
            self.failures = 0
        await self.app(scope, receive, send)


class WireChecks:
    """ASGI middleware: a POSTed body that is not a valid JSON-RPC message gets the error
    the stdio server gives it (``mcp_wire``), as HTTP 400; the package would answer most
    with -32602 and id null. Host and Origin are checked first, as the package does.
    Once ``stopping``, a new ``tools/call`` is answered 503 with a JSON-RPC error (the
    call is not made); ``in_flight`` counts the POSTs not answered yet."""

    def __init__(self, app: ASGIApp, settings: TransportSecuritySettings) -> None:
        self.app, self.security = app, TransportSecurityMiddleware(settings)
        self.stopping, self.in_flight = False, 0

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
        if self.stopping and _is_call(body):
            return await _respond(send, 503, _STOPPING, b"application/json")
        queue: list[Message] = [{"type": "http.request", "body": body, "more_body": more}]
        queue += [other] if other else []

        async def replay() -> Message:
            return queue.pop(0) if queue else await receive()

        self.in_flight += 1
        try:
            await self.app(scope, replay, send)
        finally:
            self.in_flight -= 1


_STOPPING = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32000, "message": "gitmem mcp is stopping: the call was not made"},
    }
).encode()


def _is_call(body: bytes) -> bool:
    with contextlib.suppress(ValueError):
        message = json.loads(body)
        return isinstance(message, dict) and message.get("method") == "tools/call"
    return False


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
    signal afterwards (it would kill the process before the session ends). At the signal
    it makes no new tool call and answers every POST in flight; then it stops as uvicorn
    does (no new connection, each response finished) and ends each client's GET stream,
    which never ends by itself. A second signal stops it without waiting."""

    def __init__(
        self,
        config: uvicorn.Config,
        manager: StreamableHTTPSessionManager,
        calls: WireChecks,
        ready: Callable[[], None],
    ) -> None:
        super().__init__(config)
        self.manager, self.calls, self.ready = manager, calls, ready

    async def on_tick(self, counter: int) -> bool:
        if self.calls.stopping and not self.calls.in_flight:
            self.should_exit = True
        return await super().on_tick(counter)

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
        def stop(sig: int, frame: FrameType | None) -> None:
            # Not self.handle_exit: sse-starlette patches it, and watches a handler bound
            # to a server, to end every SSE stream at the signal, with them the answers
            # of the calls in flight.
            if self.calls.stopping:
                self.should_exit = self.force_exit = True
            self.calls.stopping = True

        stops = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
        old = {sig: signal.signal(sig, stop) for sig in stops}
        try:
            yield
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)


def serve_mcp_http(
    repo: MemoryRepo,
    address: str,
    token: str | None = None,
    *,
    say: Callable[[str], None] = print,
) -> sessions.FinishResult:
    """Serve the MCP tools over Streamable HTTP at ``address`` (``[HOST:]PORT``; port 0
    picks a free one) until SIGTERM, SIGINT or SIGHUP; returns how the server's session
    ended. Without ``token`` one is made; ``say`` gets it, then the URL once serving."""
    problem = token_problem(token, TOKEN_VAR) if token else None
    if problem:
        raise InvalidInput(problem)
    where = judge(
        address,
        option="--http",
        remote_ok=bool(token),
        why_not=f"set {TOKEN_VAR} to serve it (docs/mcp.md)",
    )
    sock = listen(where)
    where = Address(where.host, sock.getsockname()[1], where.given)
    if not token:
        token = secrets.token_urlsafe(32)
        say(f"gitmem mcp: no token given ({TOKEN_VAR} is not set); this server's token: {token}")
    session = sessions.start_session(repo)
    try:
        checks = security(where)
        tools = build_server(repo, session)
        app = tools.streamable_http_app(
            streamable_http_path=PATH, transport_security=checks, host=where.host
        )
        calls = WireChecks(app, checks)
        config = uvicorn.Config(
            BearerToken(calls, token),
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=5,  # for a request that came as the calls were done
        )
        serving = f"gitmem mcp: serving http://{where.netloc}{PATH} (session {session.id})"
        uvicorn_server = _Server(config, tools.session_manager, calls, lambda: say(serving))
        asyncio.run(uvicorn_server.serve(sockets=[sock]))
    finally:
        sock.close()
        done = sessions.finish_session(repo, session)
    return done
