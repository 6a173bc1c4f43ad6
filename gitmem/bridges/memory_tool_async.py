"""``AsyncGitMemoryTool``: ``GitMemoryTool`` for the SDK's async tool runner.

``AsyncAnthropic().beta.messages.tool_runner`` takes only async tools
(``BetaAsyncAbstractMemoryTool``). This one holds a ``GitMemoryTool`` and runs each of
its commands in a worker thread: the same checks, results, errors and commits, and
the event loop never waits on git.
"""

from __future__ import annotations

import os

import anyio.to_thread
from anthropic.tools import BetaAsyncAbstractMemoryTool
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818Command,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from gitmem.bridges.memory_tool import ACTOR, GitMemoryTool
from gitmem.git.runner import Sha
from gitmem.memory.repo import MemoryRepo
from gitmem.review import session_branches as sessions


class AsyncGitMemoryTool(BetaAsyncAbstractMemoryTool):
    """``GitMemoryTool`` as an async tool: each command runs the sync tool's in a thread.

    Takes what ``GitMemoryTool`` takes; ``branch=None`` starts a session branch that
    ``await finish()`` (or leaving an ``async with`` block) ends under the review policy.
    """

    def __init__(
        self,
        repo: MemoryRepo | str | os.PathLike[str],
        branch: str | None = None,
        *,
        session: str | None = None,
        actor: str = ACTOR,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.sync = GitMemoryTool(
            repo, branch, session=session, actor=actor, cache_control=cache_control
        )

    @property
    def repo(self) -> MemoryRepo:
        return self.sync.repo

    @property
    def branch(self) -> str:
        return self.sync.branch

    @property
    def session_id(self) -> str | None:
        return self.sync.session_id

    @property
    def commits(self) -> list[Sha]:
        return list(self.sync.commits)

    async def finish(self) -> sessions.FinishResult | None:
        """End the session this tool started: land it (auto) or leave it for review."""
        return await anyio.to_thread.run_sync(self.sync.finish)

    async def close(self) -> None:
        await anyio.to_thread.run_sync(self.sync.close)

    async def __aenter__(self) -> AsyncGitMemoryTool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self.finish()
        finally:
            await self.close()

    # The sync tool's call and execute check the input and scan for secrets first.
    async def call(self, input: object) -> str:
        return await anyio.to_thread.run_sync(self.sync.call, input)

    async def execute(self, command: BetaMemoryTool20250818Command) -> str:
        return await anyio.to_thread.run_sync(self.sync.execute, command)

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await self.execute(command)

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await self.execute(command)

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await self.execute(command)

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await self.execute(command)

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await self.execute(command)

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await self.execute(command)

    async def clear_all_memory(self) -> str:
        return await anyio.to_thread.run_sync(self.sync.clear_all_memory)
