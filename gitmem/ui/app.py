"""The web app of ``gitmem ui`` and the server that runs it until Ctrl-C."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import socket
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import uvicorn

from gitmem.bridges.listen_address import Address, judge, listen, token_problem
from gitmem.errors import InvalidInput

from .guard import Guard
from .routes import build_app

if TYPE_CHECKING:
    from gitmem import MemoryRepo

TOKEN_VAR = "GITMEM_UI_TOKEN"


def serve_ui(
    repo: MemoryRepo,
    address: str,
    token: str | None = None,
    *,
    read_only: bool = False,
    say: Callable[[str], None] = print,
) -> None:
    """Serve the page at ``address`` (``[HOST:]PORT``, port 0 a free one) until SIGINT or
    SIGTERM. A host other than loopback needs a token given (``token``, else
    $GITMEM_UI_TOKEN); else one is made. With
    ``read_only`` no action is served. ``say`` gets the one line with the URL and its token."""
    token = token or os.environ.get(TOKEN_VAR)
    problem = token_problem(token, "the token") if token else None
    if problem:
        raise InvalidInput(problem)
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
        app = Guard(
            build_app(repo, secrets.token_urlsafe(24), read_only=read_only),
            token,
            where.host_headers(),
        )
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
