"""`AsyncGitMemoryTool` under the SDK's async tool runner, against the fake Messages API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import anyio
from anthropic.tools import (
    BetaAbstractMemoryTool,
    BetaAsyncAbstractMemoryTool,
    BetaAsyncLocalFilesystemMemoryTool,
    ToolError,
)

import gitmem
from gitmem.fakeapi import FakeAnthropicServer, QueueModel, Reply
from gitmem.memory.repo import MemoryRepo
from gitmem.ops.history import read_log

CALLS: list[dict[str, Any]] = [
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": "/memories/acme.md", "file_text": "# Acme\n\n## Budget\n30k\n"},
    {"command": "str_replace", "path": "/memories/acme.md", "old_str": "30k", "new_str": "40k"},
    {"command": "view", "path": "/memories/nope.md"},
    {"command": "delete", "path": "/memories"},
]


async def outcome(tool: Any, cmd: object) -> tuple[str, str]:
    try:
        return ("ok", str(await tool.call(cmd)))
    except ToolError as err:
        return ("error", str(err.content))


def test_the_async_tool_runner_edits_memory_in_git(repo: MemoryRepo, tmp_path: Path) -> None:
    model = QueueModel([*(Reply.tool_use("memory", c) for c in CALLS), "Noted: 40k."])
    seen: dict[str, Any] = {}

    async def main() -> None:
        sdk = BetaAsyncLocalFilesystemMemoryTool(str(tmp_path / "sdk"))
        seen["expected"] = [await outcome(sdk, c) for c in CALLS]
        async with gitmem.AsyncGitMemoryTool(repo.root) as memory:
            client = anthropic.AsyncAnthropic(
                api_key="test", base_url=server.base_url, max_retries=0
            )
            runner = client.beta.messages.tool_runner(
                model="claude-sonnet-5-5",
                max_tokens=1024,
                tools=[memory],
                messages=[{"role": "user", "content": "Remember: the Acme budget is now 40k."}],
            )
            seen["final"] = await runner.until_done()
            seen["session"] = memory.session_id
            await client.close()

    with FakeAnthropicServer(model) as server:
        anyio.run(main)
    final = seen["final"]
    assert final.content[0].type == "text" and final.content[0].text == "Noted: 40k."
    assert model.seen[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    for request, (kind, text) in zip(model.seen[1:], seen["expected"], strict=True):
        (result,) = request["messages"][-1]["content"]
        assert result["content"] == text and bool(result.get("is_error")) == (kind == "error")
    # Leaving the block ended the session (auto review): both commits are on main.
    log = read_log(repo.git, "main", max_count=2)
    assert [c.subject for c in log] == [
        "acme: memory str_replace § budget",
        "acme: memory create § budget",
    ]
    assert all(c.get("Gitmem-Session") == seen["session"] for c in log)
    assert repo.git.run("show", "main:cards/acme.md").stdout == b"# Acme\n\n## Budget\n40k\n"


def test_the_memory_tools_are_public_names() -> None:
    assert {"GitMemoryTool", "AsyncGitMemoryTool"} <= set(gitmem.__all__)
    assert issubclass(gitmem.AsyncGitMemoryTool, BetaAsyncAbstractMemoryTool)
    assert issubclass(gitmem.GitMemoryTool, BetaAbstractMemoryTool)
