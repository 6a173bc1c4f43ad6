"""gitmem's memory tools as an MCP server over stdio (``gitmem mcp``).

Built on the official ``mcp`` package's low-level ``Server`` so the tools keep
exactly the input schemas chat sessions use (``gitmem.agent.tools.TOOLS``). Every call
goes through ``MemoryTools``: same validation, same errors (``isError`` results
with the same text), one commit per write. The index (layer I) is the resource
``gitmem://index``.

One connection is one session: its writes go to ``gitmem/session/<id>`` and,
when the client disconnects (stdin closes, once every request read is answered;
or SIGTERM/SIGHUP), the session ends under the repo's review policy -- landed on
main (``auto``) or left for ``gitmem review``. A session that wrote nothing is
archived either way, so read-only connections leave no branch behind. Stdin may
be a pipe, a file or /dev/null.
"""

from __future__ import annotations

import contextlib
import copy
import os
import signal
import stat
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.lowlevel
import mcp_types as types
from anyio import CancelScope
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from gitmem import __version__
from gitmem.agent import budget
from gitmem.agent.tools import TOOL_NAMES, TOOLS, MemoryTools
from gitmem.bridges.mcp_wire import RESOURCE_NOT_FOUND, wire_error
from gitmem.errors import ConfigError
from gitmem.git.runner import STOP_SIGNALS, StopSignals, held_stop_signals
from gitmem.index import build as index_mod
from gitmem.memory.repo import MemoryRepo
from gitmem.review import session_branches as sessions
from gitmem.review.render import finish_text

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

# What a client may assume of each tool (MCP tool annotations): the reads change
# nothing; a write is one commit (revertable, so not destructive) and repeating it
# is not a no-op (a second append appends again).
ANNOTATIONS = {
    "read_memory_card": types.ToolAnnotations(
        title="Read a memory card", read_only_hint=True, open_world_hint=False
    ),
    "write_memory_card": types.ToolAnnotations(
        title="Edit a memory card",
        read_only_hint=False,
        destructive_hint=False,
        idempotent_hint=False,
        open_world_hint=False,
    ),
    "search_history": types.ToolAnnotations(
        title="Search memory and past sessions", read_only_hint=True, open_world_hint=False
    ),
}


def tool_list() -> list[types.Tool]:
    """The chat tools as MCP tools: the same names, descriptions and schemas."""
    return [
        types.Tool(
            name=t["name"],
            title=ANNOTATIONS[t["name"]].title,
            description=t["description"],
            input_schema=copy.deepcopy(t["input_schema"]),
            annotations=ANNOTATIONS[t["name"]],
        )
        for t in TOOLS
    ]


def build_server(repo: MemoryRepo, session: sessions.Session) -> Server[Any]:
    """An MCP server for one connection: its writes go to ``session``'s branch."""
    tools = MemoryTools(repo, branch=session.branch, session=session.id, actor=ACTOR)

    def index_text() -> str:  # the index as of the session branch's tip, with its budget note
        text = index_mod.rendered(repo, session.branch)
        return budget.block(repo, session.branch, text=text)[0]

    async def list_tools(
        ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list())

    async def call_tool(ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in TOOL_NAMES:  # MCP: an unknown tool is a protocol error
            message = f"unknown tool {params.name!r}; tools are {', '.join(TOOL_NAMES)}"
            raise MCPError(types.INVALID_PARAMS, message, {"name": params.name})
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
            message = f"unknown resource {uri}; resources are {INDEX_URI}"
            raise MCPError(RESOURCE_NOT_FOUND, message, {"uri": uri})
        contents = types.TextResourceContents(
            uri=INDEX_URI, mime_type="text/markdown", text=index_text()
        )
        return types.ReadResourceResult(contents=[contents])

    async def list_templates(
        ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[])

    return Server(
        "gitmem",
        version=__version__,
        instructions=INSTRUCTIONS.format(client=repo.config.client) + index_text(),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_resource_templates=list_templates,
    )


def end_session(repo: MemoryRepo, session: sessions.Session) -> sessions.FinishResult:
    return sessions.finish_session(repo, session)


def serve_mcp(repo: MemoryRepo) -> sessions.FinishResult:
    """Serve one MCP connection on stdin/stdout; returns how its session ended.

    A client that goes away while it is answered (a broken pipe) is a disconnect like
    any other; a wire that fails otherwise (a full disk behind stdout) ends the session
    too, then raises ``ConfigError``.
    """
    if sys.stdin is None or sys.stdout is None:  # Python saw fd 0 or 1 closed at start
        raise ConfigError("stdin or stdout is closed: gitmem mcp talks to its client over both")
    failed: list[BaseException] = []
    with held_stop_signals() as stopped:  # from the branch's start to the session's end
        session = sessions.start_session(repo)
        try:
            anyio.run(_run, build_server(repo, session), stopped)
        except* BrokenPipeError:
            pass
        except* OSError as errors:
            failed.append(_first(errors))
        finally:
            stopped.hold()  # the event loop gave them back to the default
            done = end_session(repo, session)
    if failed:
        raise ConfigError(
            f"the connection to the MCP client failed ({failed[0]}); session {done.session} "
            f"ended: {finish_text(done)}"
        )
    return done


def _first(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


async def _run(server: Server[Any], stopped: StopSignals) -> None:
    async with anyio.create_task_group() as group:
        group.start_soon(_stop_on_signal, group.cancel_scope, stopped)
        asked = _Asked()
        try:
            with _claim_stdin(asked) as stdin:
                async with stdio_server(stdin=stdin) as (read, write):  # type: ignore[arg-type]
                    answers = _Answers(write, asked)
                    stdin.reply = answers  # set before the reader task first runs
                    await server.run(read, answers, server.create_initialization_options())
        finally:  # the end follows: a stop signal waits for it (``held_stop_signals``)
            signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        group.cancel_scope.cancel()


class _Asked:
    """Requests read from the wire and those answered.

    The end of input ends the connection and the MCP library then cancels the requests
    still running: a client that writes its requests and closes its end (or a file of
    requests on stdin) would lose their answers. The end of input waits for them.
    """

    IDLE_S = 30.0  # a request never answered (a client cancelled it) stops the wait

    def __init__(self) -> None:
        self.waiting: set[str] = set()
        self._answered = anyio.Event()

    def read(self, line: str) -> None:
        try:
            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValueError:
            return  # answered by _Lines (mcp_wire) or a notification: no answer to wait for
        if isinstance(message, types.JSONRPCRequest):
            self.waiting.add(repr(message.id))
        elif isinstance(message, types.JSONRPCNotification) and (
            message.method == "notifications/cancelled"
        ):  # a cancelled request gets no answer
            self.waiting.discard(repr((message.params or {}).get("requestId")))

    def answered(self, message: object) -> None:
        if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
            self.waiting.discard(repr(message.id))
            self._answered.set()
            self._answered = anyio.Event()

    async def all_answered(self) -> None:
        while self.waiting:
            with anyio.move_on_after(self.IDLE_S) as idle:
                await self._answered.wait()
            if idle.cancelled_caught:
                return


class _Answers:
    """The server's side of the wire, noting each answer as it goes out."""

    def __init__(self, inner: Any, asked: _Asked) -> None:
        self.inner, self.asked = inner, asked

    async def send(self, item: Any, /) -> None:
        await self.inner.send(item)
        self.asked.answered(item.message)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> _Answers:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self.inner.__aexit__(*exc)  # type: ignore[no-any-return]


async def _stop_on_signal(scope: CancelScope, stopped: StopSignals) -> None:
    # A client that stops the server with SIGTERM still gets its session ended.
    with anyio.open_signal_receiver(*STOP_SIGNALS) as received:
        if not stopped.got:  # (one noted before serving began)
            async for _ in received:
                break
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)  # until the end takes them
        scope.cancel()


class _Lines:
    """Lines read from a pipe without a worker thread, so a cancellation stops the read.

    ``stdio_server`` reads stdin in a thread that a cancelled task must wait for:
    SIGTERM would not end the server until the client closed the pipe. A line that is
    not a valid message is answered here with its JSON-RPC error (``mcp_wire``): the
    package would drop it unanswered.
    """

    def __init__(self, fd: int, asked: _Asked) -> None:
        self.fd = fd
        self.asked = asked
        self.reply: _Answers | None = None
        self.buffer = b""
        mode = os.fstat(fd).st_mode
        # A file or /dev/null cannot be polled (epoll refuses it) and never makes a read
        # wait: read it straight away.
        self.pollable = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            text = await self._line()
            error = wire_error(text)
            if error is None or self.reply is None:
                self.asked.read(text)
                return text
            await self.reply.send(SessionMessage(error))

    async def _line(self) -> str:
        while b"\n" not in self.buffer:
            if self.pollable:
                await anyio.wait_readable(self.fd)
            else:
                await anyio.lowlevel.checkpoint()
            chunk = os.read(self.fd, 65536)
            if not chunk:
                if not self.buffer:
                    await self.asked.all_answered()
                    raise StopAsyncIteration
                chunk = b"\n"
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode("utf-8", "replace") + "\n"


@contextlib.contextmanager
def _claim_stdin(asked: _Asked) -> Iterator[_Lines]:
    """Read the wire from a private copy of fd 0; fd 0 itself reads /dev/null meanwhile,
    so no git process we start can take a byte of it."""
    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        yield _Lines(wire, asked)
    finally:
        os.dup2(wire, 0)
        os.close(wire)
