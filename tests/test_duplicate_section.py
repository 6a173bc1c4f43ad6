"""An edit that adds a second heading with a section's id is refused on every write path."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anthropic
import anyio
import mcp_types as types
import pytest
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from gitmem.agent.chat import run_chat
from gitmem.bridges.memory_tool import GitMemoryTool
from gitmem.fakeapi import FakeAnthropicServer, ManualClock, QueueModel, Reply
from gitmem.features.edit import write_card
from gitmem.index import build as index
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.ops.history import read_log

from helpers import git, gm, index_summaries, snapshot, try_write

CARD = "## Budget\n30k\n\n## Team\nAnn\n"
REFUSED = (
    "cards/acme.md has a section 'budget' already (## Budget, line 3); "
    "edit that section or give the new heading another name"
)
SECOND = {
    "project": "acme",
    "old_text": "",
    "new_text": "\n## Budget\n50k for q4\n",
    "index_entry": {"section_id": "budget", "keywords": ["q4"], "summary": "Q4 budget is 50k"},
}


@pytest.fixture
def budget_and_team(repo: MemoryRepo) -> MemoryRepo:
    """The repo with card acme (CARD): an indexed Budget section and an unindexed Team."""
    write_card(repo, "acme", "", CARD, IndexEntry.make("budget", ["budget"], "Budget is 30k"))
    return repo


def test_cli_write_of_a_second_budget_heading_is_refused_and_changes_nothing(
    budget_and_team: MemoryRepo, client: Path
) -> None:
    before = snapshot(client)
    for section in ("budget", "budget-2"):
        res = try_write(client, "acme", "", "\n## Budget\n50k\n", section, "s")
        assert (res.code, res.err) == (4, f"gitmem: error: {REFUSED}\n")
    # the same id from another spelling, a heading renamed onto it, two at once in a new card
    assert try_write(client, "acme", "", "\n## budget!\n50k\n", "budget", "s").code == 4
    assert try_write(client, "acme", "## Team", "## Budget", "team", "s").code == 4
    both = gm(
        "-C",
        str(client),
        "write",
        "beta",
        "--old",
        "",
        "--new",
        "## A\nx\n\n## A\ny\n",
        "--section",
        "a",
        "--keywords",
        "k",
        "--summary",
        "s",
    )
    assert (both.code, both.err) == (
        4,
        "gitmem: error: the edit gives cards/beta.md 2 sections with the id 'a'; "
        "give each heading its own name\n",
    )
    assert snapshot(client) == before
    assert index_summaries(budget_and_team) == {"acme/budget": "Budget is 30k", "acme/team": None}


def test_a_duplicate_a_person_made_stays_editable(
    budget_and_team: MemoryRepo, client: Path
) -> None:
    (client / "cards/acme.md").write_text(f"# acme\n\n{CARD}\n## Budget\nq4 by hand\n")
    git(client, "commit", "-qam", "second budget by hand")
    res = try_write(client, "acme", "q4 by hand", "q4: 50k", "budget-2", "s")
    assert res.code == 0, res.err
    assert index_summaries(budget_and_team)["acme/budget-2"] == "s"
    # a third one is still refused
    assert try_write(client, "acme", "", "\n## Budget\nmore\n", "budget-3", "s").code == 4


def test_chat_tool_write_gets_an_is_error_result(budget_and_team: MemoryRepo) -> None:
    clock = ManualClock(1_000_000.0)
    model = QueueModel(
        [Reply.tool_use("write_memory_card", SECOND, id="toolu_1"), Reply.text("ok")]
    )
    with FakeAnthropicServer(model, clock=clock) as api:
        sdk = anthropic.Anthropic(api_key="test", base_url=api.base_url, max_retries=0)
        main = budget_and_team.tip("main")
        try:
            run_chat(
                budget_and_team,
                iter(["note the q4 budget"]),
                client=sdk,
                write=lambda _: None,
                warn=lambda _: None,
                clock=clock,
            )
        finally:
            sdk.close()
    last = model.seen[-1]["messages"][-1]["content"]
    results = [b for b in last if b["type"] == "tool_result"]
    assert [(r["tool_use_id"], r["is_error"], r["content"]) for r in results] == [
        ("toolu_1", True, f"Error: {REFUSED}")
    ]
    assert git(budget_and_team.root, "log", "--format=%H", f"{main}..main", "--", "cards") == ""


def test_mcp_write_gets_an_is_error_result(
    budget_and_team: MemoryRepo, client: Path, tmp_path: Path
) -> None:
    main = budget_and_team.tip("main")
    seen: dict[str, types.CallToolResult] = {}

    async def scenario() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-c", "from gitmem.cli import main; main()", "-C", str(client), "mcp"],
            env=dict(os.environ),
            cwd=str(client),
        )
        with open(tmp_path / "mcp.err", "w") as err:
            async with (
                stdio_client(params, errlog=err) as (read, send),
                ClientSession(read, send) as session,
            ):
                await session.initialize()
                seen["result"] = await session.call_tool("write_memory_card", SECOND)

    anyio.run(scenario)
    result = seen["result"]
    assert result.is_error
    (block,) = result.content
    assert isinstance(block, types.TextContent) and block.text == f"Error: {REFUSED}"
    assert git(client, "log", "--format=%H", f"{main}..main", "--", "cards") == ""


def test_the_memory_tool_names_a_repeated_heading_by_its_own_id(
    budget_and_team: MemoryRepo,
) -> None:
    """The memory tool acts as the SDK's on plain files, so it does not refuse: its commit
    names the new section ``budget-2``, which the index lists, and ``budget`` keeps its entry."""
    tool = GitMemoryTool(budget_and_team, "main")
    tool.call(
        {
            "command": "insert",
            "path": "/memories/acme.md",
            "insert_line": 7,
            "insert_text": "## Budget\n50k for q4",
        }
    )
    (last,) = read_log(budget_and_team.git, "main", max_count=1)
    assert last.get("Gitmem-Section") == "budget-2"
    summaries = index_summaries(budget_and_team)
    assert summaries["acme/budget"] == "Budget is 30k" and "acme/budget-2" in summaries
    assert index.refresh(budget_and_team) == index.rebuild(budget_and_team)[0]
