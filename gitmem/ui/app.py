"""The web app of ``gitmem ui`` and the server that runs it until Ctrl-C."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import signal
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from gitmem.bridges.mcp_http import Address, _is_loopback, _listen, parse_address
from gitmem.errors import InvalidInput
from gitmem.status import status

from .guard import Guard

if TYPE_CHECKING:
    from gitmem import MemoryRepo

TOKEN_VAR = "GITMEM_UI_TOKEN"
TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=True,  # everything memory holds is untrusted text
)


def build_app(repo: MemoryRepo) -> Starlette:
    async def overview(request: Request) -> HTMLResponse:
        st = status(repo)
        page = TEMPLATES.get_template("overview.html").render(st=st, root=str(repo.root))
        return HTMLResponse(page)

    static = StaticFiles(directory=Path(__file__).parent / "static")
    return Starlette(routes=[Route("/", overview), Mount("/static", static)])


def serve(
    repo: MemoryRepo,
    address: str,
    token: str | None = None,
    *,
    say: Callable[[str], None] = print,
) -> None:
    """Serve the page at ``address`` (``[HOST:]PORT``, port 0 a free one) until SIGINT or
    SIGTERM. A host other than loopback needs a token given; else one is made. ``say``
    gets the one line with the URL and its token."""
    where = parse_address(address)
    if not _is_loopback(where.host) and not token:
        raise InvalidInput(
            f"--host {where.host} is not loopback: give --token (or {TOKEN_VAR}) to serve it"
        )
    token = token or secrets.token_urlsafe(24)
    sock = _listen(where)
    try:
        where = Address(where.host, sock.getsockname()[1])
        names = [where.netloc]
        if _is_loopback(where.host):
            names += [f"localhost:{where.port}", f"127.0.0.1:{where.port}"]
        app = Guard(build_app(repo), token, names)
        config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False)
        line = f"gitmem ui: serving http://{where.netloc}/?token={token}"
        asyncio.run(_Server(config, lambda: say(line)).serve(sockets=[sock]))
    finally:
        sock.close()


class _Server(uvicorn.Server):
    """Says its URL once it serves; Ctrl-C or SIGTERM stop it with exit 0 (uvicorn would
    raise the signal again after its shutdown)."""

    def __init__(self, config: uvicorn.Config, ready: Callable[[], None]) -> None:
        super().__init__(config)
        self.ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self.ready()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        stops = (signal.SIGTERM, signal.SIGINT)
        old = {sig: signal.signal(sig, self.handle_exit) for sig in stops}
        try:
            yield
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)
