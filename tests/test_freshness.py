"""Stale index entries: a section whose text changed after its summary was written is marked
stale in the I block (CLI, chat, MCP) and in `gitmem index --json`; a new entry makes it fresh."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import anyio
from mcp.client import ClientSession

from gitmem.agent.chat import run_chat
from gitmem.bridges.memory_tool import GitMemoryTool
from gitmem.fakeapi import FakeAnthropicServer, QueueModel
from gitmem.features.edit import write_card
from gitmem.features.revert import revert_commit
from gitmem.index import build as index
from gitmem.memory.cards import digests
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry

from helpers import git, gm, index_summaries

CARD = "# Acme\n\n## People\nDana is PM; Dana leaves in Jan\n\n## Budget\n30k\n"


def seed(repo: MemoryRepo) -> str:
    return write_card(
        repo, "acme", "", CARD, IndexEntry.make("people", ["pm"], "Dana leaves in Jan")
    ).commit


def by_hand(repo: MemoryRepo, old: str, new: str, message: str = "Bob replaced Dana") -> None:
    card = repo.root / "cards/acme.md"
    card.write_text(card.read_text().replace(old, new))
    git(repo.root, "commit", "-qam", message)


def entry(client: Path, key: str) -> dict[str, Any]:
    res = gm("-C", str(client), "index", "--json")
    assert res.code == 0, res.err
    card, sid = key.split("/")
    (c,) = [c for c in json.loads(res.out) if c["project"] == card]
    (s,) = [s for s in c["sections"] if s["id"] == sid]
    return dict(s)


def test_a_persons_commit_makes_the_entry_stale_in_index_and_json(
    repo: MemoryRepo, client: Path
) -> None:
    seed(repo)
    assert "- people: Dana leaves in Jan [pm]" in gm("-C", str(client), "index").out
    assert entry(client, "acme/people")["stale"] is False
    by_hand(repo, "Dana is PM; Dana leaves in Jan", "Bob replaced Dana as PM")
    out = gm("-C", str(client), "index").out
    assert "- people: (stale) Dana leaves in Jan [pm]" in out
    assert entry(client, "acme/people")["stale"] is True
    assert entry(client, "acme/budget")["indexed"] is False  # never described: unindexed, not stale
    index_summaries(repo)  # the incremental cache equals a full replay, marks included
    rebuilt, cached = index.rebuild(repo)
    assert cached == rebuilt and rebuilt.cards[0].sections[0].stale


def test_a_new_entry_or_a_redescription_makes_it_fresh(repo: MemoryRepo, client: Path) -> None:
    seed(repo)
    by_hand(repo, "Dana is PM; Dana leaves in Jan", "Bob replaced Dana as PM")
    assert entry(client, "acme/people")["stale"] is True
    # old_text == new_text: a commit that only re-describes the section
    res = gm(
        "-C",
        str(client),
        "write",
        "acme",
        "--old",
        "Bob replaced Dana as PM",
        "--new",
        "Bob replaced Dana as PM",
        "--section",
        "people",
        "--keywords",
        "pm",
        "--summary",
        "Bob is PM now",
    )
    assert res.code == 0, res.err
    assert git(client, "diff", "HEAD~1", "HEAD", "--stat") == ""  # the text is unchanged
    got = entry(client, "acme/people")
    assert got["stale"] is False and got["summary"] == "Bob is PM now"
    # a redescription still needs text that is in the card
    bad = gm(
        "-C",
        str(client),
        "write",
        "acme",
        "--old",
        "Carol",
        "--new",
        "Carol",
        "--section",
        "people",
        "--keywords",
        "pm",
        "--summary",
        "x",
    )
    assert bad.code != 0 and "not found" in bad.err


def test_editing_or_adding_another_section_leaves_the_entry_fresh(
    repo: MemoryRepo, client: Path
) -> None:
    seed(repo)
    by_hand(repo, "30k", "35k")  # another section changed by hand
    write_card(
        repo, "acme", "", "## Risks\nnone yet\n", IndexEntry.make("risks", ["risk"], "None yet")
    )
    assert entry(client, "acme/people")["stale"] is False
    assert entry(client, "acme/risks")["stale"] is False


def test_revert_of_the_hand_change_makes_it_fresh_again(repo: MemoryRepo, client: Path) -> None:
    seed(repo)
    by_hand(repo, "Dana leaves in Jan", "Dana stays")
    assert entry(client, "acme/people")["stale"] is True
    git(client, "revert", "--no-edit", "HEAD")
    assert entry(client, "acme/people")["stale"] is False


def test_a_memory_tool_edit_of_a_described_section_makes_it_stale(
    repo: MemoryRepo, client: Path
) -> None:
    seed(repo)
    write_card(repo, "acme", "30k", "40k", IndexEntry.make("budget", ["money"], "Budget 40k"))
    tool = GitMemoryTool(repo, "main")
    # the tool's entry is for the section it touched first; the other one it changed goes stale
    tool.call(
        {
            "command": "str_replace",
            "path": "/memories/acme.md",
            "old_str": "Dana leaves in Jan\n\n## Budget\n40k",
            "new_str": "Bob is PM\n\n## Budget\n45k",
        }
    )
    got = entry(client, "acme/budget"), entry(client, "acme/people")
    assert [g["stale"] or not g["indexed"] for g in got] == [True, True]
    assert any(g["stale"] for g in got)
    index_summaries(repo)


def test_a_partial_accept_makes_its_entry_stale(repo: MemoryRepo, client: Path) -> None:
    from test_review import SID, agent_session, person_writes

    person_writes(repo)
    agent_session(repo)
    res = gm("-C", str(client), "review", SID, "--accept", "--hunks", "1,3")
    assert res.code == 0, res.err
    # hunk 2 ("Owner: Bob") of the next-steps commit was left out: its summary says more
    assert entry(client, "acme-website/next-steps")["stale"] is True
    assert entry(client, "acme-website/budget")["stale"] is False  # accepted whole
    assert "- next-steps: (stale) Call Bob on Monday" in gm("-C", str(client), "index").out
    index_summaries(repo)


def test_the_agent_sees_the_mark_and_the_rules_tell_it_to_refresh(repo: MemoryRepo) -> None:
    seed(repo)
    by_hand(repo, "Dana is PM; Dana leaves in Jan", "Bob replaced Dana as PM")
    model = QueueModel(["noted"])
    with FakeAnthropicServer(model) as server:
        sdk = anthropic.Anthropic(api_key="test", base_url=server.base_url, max_retries=0)
        run_chat(
            repo, iter(["who is PM?"]), client=sdk, write=lambda _t: None, warn=lambda _w: None
        )
        sdk.close()
    system = model.seen[0]["system"]
    assert "- people: (stale) Dana leaves in Jan [pm]" in system[1]["text"]
    rules = system[0]["text"]
    assert "(stale)" in rules and "refresh" in rules


def test_mcp_index_resource_marks_stale_entries(client: Path, tmp_path: Path) -> None:
    from test_mcp_server import connect

    with MemoryRepo(client) as repo:
        seed(repo)
        by_hand(repo, "Dana is PM; Dana leaves in Jan", "Bob replaced Dana as PM")
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with connect(client, tmp_path / "mcp.err") as session:
            assert isinstance(session, ClientSession)
            got = await session.read_resource("gitmem://index")
            seen["text"] = got.contents[0].text  # type: ignore[union-attr]
            seen["instructions"] = session.instructions

    anyio.run(main)
    assert "- people: (stale) Dana leaves in Jan [pm]" in seen["text"]
    assert "(stale)" in seen["instructions"]


def test_revert_of_an_entry_brings_back_the_older_one_fresh(repo: MemoryRepo, client: Path) -> None:
    seed(repo)
    second = write_card(
        repo,
        "acme",
        "Dana leaves in Jan",
        "Dana leaves in Feb",
        IndexEntry.make("people", ["pm"], "Dana leaves in Feb"),
    ).commit
    revert_commit(repo, second)
    got = entry(client, "acme/people")
    assert got["summary"] == "Dana leaves in Jan" and got["stale"] is False


def test_after_a_sync_conflict_the_section_both_sides_described_is_stale(tmp_path: Path) -> None:
    from test_sync import CARDS, make_pair, sync

    from helpers import write_sha

    _, laptop, desktop = make_pair(tmp_path)
    write_sha(laptop, "acme-website", "30k", "40k", "budget", "Budget 40k")
    write_sha(laptop, "acme-website", "Call Bob", "Call Bob today", "next-steps", "Call Bob today")
    assert sync(laptop)[0] == 0
    write_sha(desktop, "acme-website", "30k", "50k", "budget", "Budget 50k")
    assert sync(desktop)[0] == 4
    # the person keeps this machine's text: one side's summary matches it, the other's not
    (desktop / "cards/acme-website.md").write_text(
        CARDS["acme-website"].replace("30k", "50k").replace("Call Bob", "Call Bob today")
    )
    code, _, err = sync(desktop, "--continue")
    assert code == 0, err
    assert entry(desktop, "acme-website/budget")["stale"] is True
    assert entry(desktop, "acme-website/next-steps")["stale"] is False  # one side only
    assert sync(laptop)[0] == 0
    assert entry(laptop, "acme-website/budget")["stale"] is True  # the same on both machines
    with MemoryRepo(desktop) as repo:
        index_summaries(repo)
        rebuilt, cached = index.rebuild(repo)
        assert cached == rebuilt
    write_sha(desktop, "acme-website", "50k", "50k, agreed", "budget", "Budget 50k agreed")
    assert entry(desktop, "acme-website/budget")["stale"] is False


def test_both_sides_writing_the_same_text_with_different_summaries_is_stale(tmp_path: Path) -> None:
    from test_sync import make_pair, sync

    from helpers import write_sha

    _, laptop, desktop = make_pair(tmp_path)
    write_sha(laptop, "acme-website", "30k", "40k", "budget", "Budget raised to 40k")
    assert sync(laptop)[0] == 0
    write_sha(desktop, "acme-website", "30k", "40k", "budget", "Budget cut to 40k")
    code, _, err = sync(desktop)
    assert code == 0, err  # the same change on both sides merges silently
    assert entry(desktop, "acme-website/budget")["stale"] is True


def test_status_lists_stale_entries(repo: MemoryRepo, client: Path) -> None:
    seed(repo)
    by_hand(repo, "Dana is PM; Dana leaves in Jan", "Bob replaced Dana as PM")
    out = gm("-C", str(client), "status").out
    assert "Stale entries (1)" in out and "  acme § people" in out
    assert json.loads(gm("-C", str(client), "status", "--json").out)["stale"] == ["acme § people"]


def test_a_damaged_freshness_cache_is_never_believed(repo: MemoryRepo, client: Path) -> None:
    seed(repo)
    by_hand(repo, "Dana is PM; Dana leaves in Jan", "Bob replaced Dana as PM")
    assert entry(client, "acme/people")["stale"] is True
    cache = client / ".git/gitmem/index-main.marshal"  # the facts are kept with the index
    data = bytearray(cache.read_bytes())
    data[-5] ^= 0xFF  # in the facts: their digest no longer matches
    cache.write_bytes(bytes(data))
    assert entry(client, "acme/people")["stale"] is True  # (the resolved index's own record)
    assert "cache differed and was replaced" in gm("-C", str(client), "reindex").out
    assert "cache matched" in gm("-C", str(client), "reindex").out


def test_an_entry_carries_its_section_digest_and_the_mark_compares_it(
    repo: MemoryRepo, client: Path
) -> None:
    sha = seed(repo)
    message = git(repo.root, "log", "-1", "--format=%B", sha)
    assert f"Gitmem-Digest: {digests(CARD)['people']}\n" in message
    # A commit whose digest names other text than the section has: the entry was written
    # for that text, so it is stale without reading the card as it was.
    text = CARD.replace("Budget\n30k", "Budget\n40k")
    (repo.root / "cards/acme.md").write_text(text)
    git(repo.root, "add", "cards/acme.md")
    trailers = "Gitmem-Card: acme\nGitmem-Section: budget\nGitmem-Keywords: money\n"
    trailers += "Gitmem-Summary: 40k\nGitmem-Digest: 0123456789abcdef\n"
    git(repo.root, "commit", "-qm", f"budget\n\n{trailers}")
    assert entry(client, "acme/budget")["stale"] is True
    assert entry(client, "acme/people")["stale"] is False
    index_summaries(repo)


def test_an_entry_without_a_digest_is_checked_against_its_commit_s_card(
    repo: MemoryRepo, client: Path
) -> None:
    (repo.root / "cards").mkdir(exist_ok=True)
    (repo.root / "cards/acme.md").write_text(CARD)
    git(repo.root, "add", "cards/acme.md")
    trailers = "Gitmem-Card: acme\nGitmem-Section: people\nGitmem-Keywords: pm\n"
    git(repo.root, "commit", "-qm", f"people\n\n{trailers}Gitmem-Summary: Dana leaves\n")
    assert entry(client, "acme/people")["stale"] is False  # an older gitmem's entry
    by_hand(repo, "Dana is PM; Dana leaves in Jan", "Bob replaced Dana as PM")
    assert entry(client, "acme/people")["stale"] is True
    index_summaries(repo)
