"""A secret the model tries to write is refused as an is_error tool result it can act on:
the chat tool (real SDK against the fake Messages API), the memory tool, MCP."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import anthropic
import anyio
from mcp.client import ClientSession

from gitmem.agent.chat import run_chat
from gitmem.bridges.memory_tool import GitMemoryTool
from gitmem.fakeapi import FakeAnthropicServer, QueueModel, Reply
from gitmem.memory.repo import MemoryRepo

from helpers import git

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import secrets_corpus as corpus

KEY = corpus.anthropic_key(random.Random(5))
ENTRY = {"section_id": "access", "keywords": ["access"], "summary": "how to reach their API"}


def tool_results(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        b
        for r in requests
        for m in r["messages"][-1:]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]


def test_chat_write_with_a_key_is_an_is_error_result_and_the_retry_lands(repo: MemoryRepo) -> None:
    bad = {
        "project": "acme",
        "old_text": "",
        "new_text": f"## Access\n- key {KEY}\n",
        "index_entry": ENTRY,
    }
    good = {**bad, "new_text": "## Access\n- key in the team vault\n"}
    model = QueueModel(
        [
            Reply.tool_use("write_memory_card", bad, id="toolu_1"),
            Reply.tool_use("write_memory_card", good, id="toolu_2"),
            Reply.text("Saved, without the key."),
        ]
    )
    before = repo.tip("main")
    with FakeAnthropicServer(model) as server:
        sdk = anthropic.Anthropic(api_key="test", base_url=server.base_url, max_retries=0)
        out: list[str] = []
        run_chat(
            repo,
            iter([f"remember their key {KEY}"]),
            client=sdk,
            write=out.append,
            warn=lambda _w: None,
        )
        sdk.close()
    first, second = tool_results(model.seen)[:2]
    assert first["is_error"] is True
    assert "anthropic-key in new_text line 2" in str(first["content"])
    assert KEY not in str(first["content"])
    assert not second.get("is_error")
    cards = git(repo.root, "log", "--format=%H", f"{before}..main", "--", "cards").split()
    assert len(cards) == 1
    assert KEY not in git(repo.root, "show", "main:cards/acme.md")


def test_memory_tool_create_with_a_key_is_refused_and_commits_nothing(
    repo: MemoryRepo,
) -> None:
    calls = [
        {
            "command": "create",
            "path": "/memories/acme.md",
            "file_text": f"# Acme\n\n## Access\n- {KEY}\n",
        },
        {
            "command": "create",
            "path": "/memories/acme.md",
            "file_text": "# Acme\n\n## Access\n- vault\n",
        },
    ]
    model = QueueModel([*(Reply.tool_use("memory", c) for c in calls), "ok"])
    before = repo.tip("main")
    with FakeAnthropicServer(model) as server, GitMemoryTool(repo.root) as tool:
        client = anthropic.Anthropic(api_key="test", base_url=server.base_url, max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-sonnet-5-5",
            max_tokens=1024,
            tools=[tool],
            messages=[{"role": "user", "content": "remember the key"}],
        )
        runner.until_done()
        client.close()
    first, second = tool_results(model.seen)[:2]
    assert first.get("is_error") is True and "anthropic-key in file_text line 4" in str(
        first["content"]
    )
    assert KEY not in str(first["content"]) and not second.get("is_error")
    log = git(repo.root, "log", "--format=%s", f"{before}..main", "--", "cards").splitlines()
    assert log == ["acme: memory create § access"]


def test_mcp_write_with_a_key_is_an_error_result(client: Path, tmp_path: Path) -> None:
    from test_mcp_server import connect, text_of

    seen: dict[str, Any] = {}

    async def main() -> None:
        async with connect(client, tmp_path / "mcp.err") as session:
            assert isinstance(session, ClientSession)
            res = await session.call_tool(
                "write_memory_card",
                {
                    "project": "acme",
                    "old_text": "",
                    "new_text": f"## Access\n- {KEY}\n",
                    "index_entry": ENTRY,
                },
            )
            seen["error"], seen["text"] = res.is_error, text_of(res)

    before = git(client, "rev-parse", "main")
    anyio.run(main)
    assert seen["error"] is True and "anthropic-key in new_text line 2" in seen["text"]
    assert KEY not in seen["text"]
    assert git(client, "rev-parse", "main") == before
    assert KEY not in git(client, "log", "--all", "-p")


def test_a_synthesis_that_would_carry_a_key_is_not_committed_and_the_chat_goes_on(
    client: Path,
) -> None:
    from gitmem.fakeapi import ManualClock, RuleModel

    toml = client / "gitmem.toml"
    toml.write_text(toml.read_text().replace("synthesis_every = 30", "synthesis_every = 2"))
    git(client, "commit", "-qam", "synthesis every 2")
    token = corpus.slack_token(random.Random(3))
    clock = ManualClock(1_000_000.0)
    warnings: list[str] = []
    out: list[str] = []

    def lines() -> Any:
        for line in ["first point", f"the bot token is {token}", "third point"]:
            clock.advance(10.0)
            yield line

    with FakeAnthropicServer(RuleModel(), clock=clock) as server, MemoryRepo(client) as repo:
        sdk = anthropic.Anthropic(api_key="test", base_url=server.base_url, max_retries=0)
        run_chat(repo, lines(), client=sdk, write=out.append, warn=warnings.append, clock=clock)
        sdk.close()
    assert any("synthesis not saved" in w and "slack-token in synthesis.md" in w for w in warnings)
    assert all(token not in w for w in warnings)
    assert token not in git(client, "log", "-p", "main", "--", "synthesis.md")
    assert len(out) >= 3  # every turn was answered
