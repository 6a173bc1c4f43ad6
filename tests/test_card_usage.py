"""`gitmem usage --cards`: layer E tokens per card across chat sessions (the real SDK against
the fake Messages API), the sections read most and the ones never read."""

from __future__ import annotations

import json
from pathlib import Path

import anthropic

from gitmem.agent import usage as usage_mod
from gitmem.agent.chat import run_chat
from gitmem.fakeapi import FakeAnthropicServer, QueueModel, Reply
from gitmem.memory.repo import MemoryRepo

from helpers import git, gm, write


def sessions(repo: MemoryRepo, replies: list[Reply | str], *runs: list[str]) -> None:
    """One chat session per run of turns, against one server (message ids stay unique)."""
    with FakeAnthropicServer(QueueModel(replies)) as server:
        sdk = anthropic.Anthropic(api_key="test", base_url=server.base_url, max_retries=0)
        for turns in runs:
            run_chat(repo, iter(turns), client=sdk, write=lambda _t: None, warn=lambda _w: None)
        sdk.close()


def test_reads_per_card_and_section_across_sessions(repo: MemoryRepo, client: Path) -> None:
    write(client, "acme", "", "## Budget\n30k for Q3, owner Ann\n\n## Team\nAnn, Bob\n", "budget")
    write(client, "beta", "", "## Goals\nShip v2\n", "goals")
    write(client, "gamma", "", "## Risks\nvenue booked\n", "risks")
    read = "read_memory_card"
    sessions(
        repo,
        [
            Reply.tool_use(read, {"project": "acme", "section_id": "budget"}, id="t1"),
            "30k",
            Reply.tool_use(read, {"project": "acme", "section_id": "budget"}, id="t2"),
            "still",
            Reply.tool_use(read, {"project": "beta"}, id="t3"),
            "v2",
            Reply.tool_use(read, {"project": "nope"}, id="t4"),
            "no such card",
        ],
        ["budget?", "again?"],
        ["goals?", "nope?"],
    )
    res = gm("-C", str(client), "usage", "--cards", "--json")
    assert res.code == 0, res.err
    got = json.loads(res.out)
    cards = {c["card"]: c for c in got["cards"]}
    assert set(cards) == {"acme", "beta"}  # a failed read costs no card tokens
    assert cards["acme"]["reads"] == 2 and cards["acme"]["whole_reads"] == 0
    assert cards["beta"]["whole_reads"] == 1 and got["sessions"] == 2
    # E is counted on the request that carries the card text (the one after the read's
    # response, which names the reads): summed over the sessions' turn lines
    logged = [r for r in usage_mod.load_usage(repo) if r.get("purpose") == "turn"]
    assert any(r.get("card_reads") for r in logged)
    assert (
        sum(r["layers"]["E"] for r in logged)
        >= cards["acme"]["tokens"] + cards["beta"]["tokens"]
        > 0
    )
    assert got["sections"] == [{"section": "acme § budget", "reads": 2}]
    # the whole of beta was read; acme § team and all of gamma never were
    assert got["never_read"] == ["acme § team", "gamma § risks"]
    text = gm("-C", str(client), "usage", "--cards").out
    assert "acme § budget: 2 reads" in text and "Never read (2)" in text and "gamma § risks" in text


def test_older_lines_without_card_names_are_unattributed(repo: MemoryRepo, client: Path) -> None:
    old = {"session": "s1", "message_id": "m1", "purpose": "turn", "layers": {"E": 120}}
    (client / "logs/usage.jsonl").write_text(json.dumps(old) + "\n")
    git(client, "add", "logs/usage.jsonl")
    git(client, "commit", "-qm", "older usage")
    got = json.loads(gm("-C", str(client), "usage", "--cards", "--json").out)
    assert got["unattributed_tokens"] == 120 and got["cards"] == []
    assert "No card reads recorded yet." in gm("-C", str(client), "usage", "--cards").out


def test_a_bad_session_id_is_a_usage_error(client: Path) -> None:
    res = gm("-C", str(client), "usage", "--cards", "--session", "../x")
    assert res.code == 2 and res.err.count("\n") == 1 and "invalid session id" in res.err
