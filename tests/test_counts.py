"""Counts people read: clients' last activity, usage totals per model, what a session left."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem.agent import usage
from gitmem.fakeapi import FakeAnthropicServer, RuleModel
from gitmem.features.edit import write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.review import session_branches as sessions

from helpers import git, gm

EXPECTED = Path(__file__).parent / "expected"


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(RuleModel()) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        yield server


def set_toml(client: Path, old: str, new: str) -> None:
    toml = client / "gitmem.toml"
    assert old in toml.read_text()
    toml.write_text(toml.read_text().replace(old, new))
    git(client, "commit", "-qam", "settings")


def test_a_chat_without_a_memory_edit_says_so(client: Path, api: FakeAnthropicServer) -> None:
    res = gm("-C", str(client), "ask", "hello")
    assert res.code == 0, res.err
    assert res.err.strip().endswith("ended: no memory edits")
    assert "commit" not in res.err  # the transcript commit is not a memory edit


def test_chat_and_review_count_the_same_waiting_edits(
    client: Path, api: FakeAnthropicServer
) -> None:
    set_toml(client, 'review = "auto"', 'review = "review"')
    res = gm("-C", str(client), "chat", stdin="remember acme Budget: 40k agreed\nhello\n")
    assert res.code == 0, res.err
    sid = res.err.split("session ")[1].split()[0]
    assert f"ended: 1 memory edit waits for review: `gitmem review {sid}`" in res.err
    listed = json.loads(gm("-C", str(client), "review", "--json").out)
    assert [(s["session"], s["edits"]) for s in listed] == [(sid, 1)]
    shown = gm("-C", str(client), "review", sid).out
    assert shown.startswith(f"Session {sid} (pending): 1 edit to 1 card,")


def test_a_landed_edit_is_counted_without_the_transcript(
    client: Path, api: FakeAnthropicServer
) -> None:
    res = gm("-C", str(client), "ask", "remember acme Budget: 40k agreed")
    assert res.code == 0, res.err
    assert "ended: 1 memory edit landed on main" in res.err


def test_clients_last_activity_is_the_last_memory_edit(
    hermetic: Path, api: FakeAnthropicServer
) -> None:
    assert gm("init", "--client", "acme").code == 0
    client = hermetic / "gitmem/acme"
    assert gm("--client", "acme", "ask", "remember acme Budget: 40k agreed").code == 0
    assert gm("--client", "acme", "ask", "hello").code == 0  # a transcript and usage, no edit
    subjects = git(client, "log", "--format=%s", "-3").splitlines()
    assert subjects[0].startswith("usage: session") and "transcript" in subjects[1]
    (listed,) = json.loads(gm("clients", "--json").out)
    edit = (
        git(
            client,
            "log",
            "--format=%aI%x00%(trailers:key=Gitmem-Summary,valueonly)",
            "-1",
            "--",
            "cards",
        )
        .strip()
        .split("\0")
    )
    assert (listed["last_activity"], listed["last_subject"]) == (edit[0], edit[1])
    shown = gm("clients").out.splitlines()
    assert shown[0].split() == ["CLIENT", "LAST", "EDIT", "SUMMARY"]
    assert shown[1] == f"acme    {edit[0][:16].replace('T', ' ')}  {edit[1]}"


def test_usage_gives_totals_across_sessions_and_per_model(
    client: Path, api: FakeAnthropicServer
) -> None:
    def chat(sid: str, line: str) -> None:
        res = gm("-C", str(client), "chat", "--session", sid, stdin=line + "\n")
        assert res.code == 0, res.err

    chat("20261130-100000-aa01", "hello")
    chat("20261130-100000-aa02", "remember acme Budget: 40k agreed")
    set_toml(client, 'name = "claude-sonnet-5-5"', 'name = "claude-haiku-4-5"')
    chat("20261130-100000-aa03", "hello again")
    with MemoryRepo(client) as repo:
        records = usage.load_usage(repo)
    models = sorted({r["model"] for r in records})
    assert models == ["claude-haiku-4-5", "claude-sonnet-5-5"]
    data = json.loads(gm("-C", str(client), "usage", "--json").out)
    assert len(data["sessions"]) == 3
    total = data["total"]
    assert total["sessions"] == 3 and total["requests"] == len(records)
    sent = sum(
        r["input_tokens"] + r["cache_creation_input_tokens"] + r["cache_read_input_tokens"]
        for r in records
    )
    assert total["input_tokens"] == sent
    assert total["output_tokens"] == sum(r["output_tokens"] for r in records)
    assert [m["name"] for m in data["models"]] == models
    assert sum(m["requests"] for m in data["models"]) == len(records)
    haiku = next(m for m in data["models"] if m["name"] == "claude-haiku-4-5")
    assert haiku["requests"] == sum(1 for r in records if r["model"] == "claude-haiku-4-5")
    text = gm("-C", str(client), "usage").out
    assert f"total over 3 sessions: {len(records)} requests" in text
    one = [s for s in data["sessions"] if s["requests"] == 1]
    assert one and f"session {one[0]['session']}: 1 request\n" in text
    assert f"  claude-haiku-4-5: {haiku['requests']} request" in text
    if os.environ.get("REGEN_EXPECTED"):
        (EXPECTED / "usage.txt").write_text(text)
    assert text == (EXPECTED / "usage.txt").read_text()


def test_reindex_counts_in_the_singular(client: Path) -> None:
    args = ["--section", "budget", "--keywords", "money", "--summary", "first"]
    assert (
        gm("-C", str(client), "write", "site", "--old", "", "--new", "## Budget\n1\n", *args).code
        == 0
    )
    assert gm("-C", str(client), "reindex").out.startswith("Reindexed 1 card, 1 section:")


def test_a_session_with_one_hunk_says_one_hunk(repo: MemoryRepo, client: Path) -> None:
    s = sessions.start_session(repo, "20261130-101200-ab12")
    write_card(
        repo,
        "acme",
        "",
        "## Budget\n30k\n",
        IndexEntry.make("budget", ["budget"], "Budget 30k"),
        session=s.id,
        actor="agent",
        branch=s.branch,
    )
    sessions.finish_session(repo, s, "review")
    res = gm("-C", str(client), "review", s.id, "--accept", "--hunks", "2")
    assert res.code == 2 and "has 1 hunk (1-1)" in res.err
