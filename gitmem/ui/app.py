"""The web app of ``gitmem ui`` and the server that runs it until Ctrl-C."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
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
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from gitmem.bridges.listen_address import Address, judge, listen
from gitmem.errors import GitmemError
from gitmem.status import status

from . import review
from .guard import Guard

if TYPE_CHECKING:
    from gitmem import MemoryRepo

TOKEN_VAR = "GITMEM_UI_TOKEN"
TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=True,  # everything memory holds is untrusted text
)


def _page(name: str, status_code: int = 200, **values: object) -> HTMLResponse:
    return HTMLResponse(TEMPLATES.get_template(name).render(**values), status_code=status_code)


def build_app(repo: MemoryRepo, csrf: str) -> Starlette:
    async def overview(request: Request) -> HTMLResponse:
        return _page("overview.html", st=status(repo), root=str(repo.root))

    async def review_page(request: Request) -> HTMLResponse:
        sid = request.path_params["sid"]
        try:
            view = review.session(repo, sid)
        except GitmemError as err:
            return _page("message.html", 404, title="Not pending", text=str(err))
        return _page("session.html", sid=sid, view=view, csrf=csrf)

    async def review_decide(request: Request) -> Response:
        form = await request.form()
        if not hmac.compare_digest(str(form.get("csrf", "")).encode(), csrf.encode()):
            return _page("message.html", 403, title="Refused", text="a form from another page")
        sid = request.path_params["sid"]
        hunks = [str(v) for v in form.getlist("hunk")]
        try:
            done = review.decide(
                repo, sid, str(form.get("action", "")), hunks, str(form.get("tip", ""))
            )
        except GitmemError as err:
            return _page("message.html", 409, title="Refused", text=str(err))
        return _page("message.html", title="Decided", text=done.text())

    static = StaticFiles(directory=Path(__file__).parent / "static")
    routes = [
        Route("/", overview),
        Route("/review/{sid}", review_page, methods=["GET"]),
        Route("/review/{sid}", review_decide, methods=["POST"]),
        Mount("/static", static),
    ]
    return Starlette(routes=routes)


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
    where = judge(
        address,
        option="--host",
        remote_ok=bool(token),
        why_not=f"give --token (or {TOKEN_VAR}) to serve it",
    )
    token = token or secrets.token_urlsafe(24)
    sock = listen(where)
    try:
        where = Address(where.host, sock.getsockname()[1], where.given)
        app = Guard(build_app(repo, secrets.token_urlsafe(24)), token, where.host_headers())
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
