"""gitmem's memory tools as an MCP server over stdio (``gitmem mcp``).

Built on the official ``mcp`` package's low-level ``Server`` so the tools keep
exactly the input schemas chat sessions use (``gitmem.tools.TOOLS``). Every call
goes through ``MemoryTools``: same validation, same errors (``isError`` results
with the same text), one commit per write. The index (layer I) is the resource
``gitmem://index``.

One connection is one session: its writes go to ``gitmem/session/<id>`` and,
when the client disconnects (stdin closes, or SIGTERM/SIGHUP), the session ends
under the repo's review policy -- landed on main (``auto``) or left for
``gitmem review``. A session that wrote nothing is archived either way, so
read-only connections leave no branch behind.
"""

from __future__ import annotations

import contextlib
import copy
import os
import signal
from collections.abc import Iterator
from typing import Any

import anyio
import mcp_types as types
from anyio import CancelScope
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from . import __version__, sessions
from . import index as index_mod
from .repo import MemoryRepo
from .tools import TOOLS, MemoryTools

INDEX_URI = "gitmem://index"
ACTOR = "mcp"
Ctx = ServerRequestContext[Any, Any]

INSTRUCTIONS = """\
Long-term memory for client {client}: Markdown cards, one per project, kept in git.
The memory index below (also the resource gitmem://index) lists every card and
section. Read a card, or one section, with read_memory_card before relying on
details. Record what should outlive this conversation with write_memory_card: a
surgical edit with an index entry for the section it is about. search_history
ranks card sections, their past values and past sessions for a few words (client or
project name and topic); use it when the index does not already point to the
section. This connection is one session: its edits
are merged into main when it ends, or wait for review.

"""


def build_server(repo: MemoryRepo, session: sessions.Session) -> Server[Any]:
    """An MCP server for one connection: its writes go to ``session``'s branch."""
    tools = MemoryTools(repo, branch=session.branch, session=session.id, actor=ACTOR)

    def index_text() -> str:  # the index as of the session branch's tip
        return index_mod.refresh(repo, session.branch).render()

    async def list_tools(
        ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=t["name"],
                    description=t["description"],
                    input_schema=copy.deepcopy(t["input_schema"]),
                )
                for t in TOOLS
            ]
        )

    async def call_tool(ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments if params.arguments is not None else {}
        result = tools.call(params.name, args)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text)], is_error=result.is_error
        )

    async def list_resources(
        ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        index = types.Resource(
            name="index",
            title="gitmem memory index",
            uri=INDEX_URI,
            description="Every card and section in long-term memory (layer I), as the agent sees it.",
            mime_type="text/markdown",
        )
        return types.ListResourcesResult(resources=[index])

    async def read_resource(
        ctx: Ctx, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri != INDEX_URI:
            raise MCPError(types.INVALID_PARAMS, f"unknown resource {uri}", {"uri": uri})
        contents = types.TextResourceContents(
            uri=INDEX_URI, mime_type="text/markdown", text=index_text()
        )
        return types.ReadResourceResult(contents=[contents])

    return Server(
        "gitmem",
        version=__version__,
        instructions=INSTRUCTIONS.format(client=repo.config.client) + index_text(),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def end_session(repo: MemoryRepo, session: sessions.Session) -> sessions.FinishResult:
    return sessions.finish(repo, session)


def serve(repo: MemoryRepo) -> sessions.FinishResult:
    """Serve one MCP connection on stdin/stdout; returns how its session ended."""
    session = sessions.start(repo)
    try:
        anyio.run(_run, build_server(repo, session))
    finally:
        done = end_session(repo, session)
    return done


async def _run(server: Server[Any]) -> None:
    async with anyio.create_task_group() as group:
        group.start_soon(_stop_on_signal, group.cancel_scope)
        with _claim_stdin() as stdin:
            async with stdio_server(stdin=stdin) as (read, write):  # type: ignore[arg-type]
                await server.run(read, write, server.create_initialization_options())
        group.cancel_scope.cancel()


async def _stop_on_signal(scope: CancelScope) -> None:
    # A client that stops the server with SIGTERM still gets its session ended.
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as received:
        async for _ in received:
            scope.cancel()
            return


class _Lines:
    """Lines read from a pipe without a worker thread, so a cancellation stops the read.

    ``stdio_server`` reads stdin in a thread that a cancelled task must wait for:
    SIGTERM would not end the server until the client closed the pipe.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while b"\n" not in self.buffer:
            await anyio.wait_readable(self.fd)
            chunk = os.read(self.fd, 65536)
            if not chunk:
                if not self.buffer:
                    raise StopAsyncIteration
                chunk = b"\n"
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode("utf-8", "replace") + "\n"


@contextlib.contextmanager
def _claim_stdin() -> Iterator[_Lines]:
    """Read the wire from a private copy of fd 0; fd 0 itself reads /dev/null meanwhile,
    so no git process we start can take a byte of it."""
    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        yield _Lines(wire)
    finally:
        os.dup2(wire, 0)
        os.close(wire)
