"""gitmem status, gitmem cards and gitmem search over a repo with some of everything."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gitmem.features.edit import write_card
from gitmem.index.build import card_created
from gitmem.index.card_list import list_cards
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.review import session_branches as sessions
from gitmem.search.ranked import search
from gitmem.search.snippets import from_hit, lines

from helpers import git, gm, snapshot

EXPECTED = Path(__file__).parent / "expected"
SID = "20261130-101200-ab12"


def entry(section: str, kws: list[str], summary: str) -> IndexEntry:
    return IndexEntry.make(section, kws, summary)


@pytest.fixture
def busy(repo: MemoryRepo, tmp_path: Path) -> MemoryRepo:
    """Two cards, a hand-made section, a synced remote, a pending session, an uncommitted edit."""
    write_card(
        repo,
        "acme",
        "",
        "# Acme website\n\n## Budget\nBudget: 30k\n\n## Team\nAnn\n",
        entry("budget", ["budget", "q3"], "Budget set to 30k"),
    )
    write_card(
        repo, "beta", "", "## Goals\nShip v2\n", entry("goals", ["roadmap"], "Ship v2 by March")
    )
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo.root, "remote", "add", "origin", str(remote))
    assert gm("-C", str(repo.root), "sync").code == 0
    write_card(
        repo,
        "acme",
        "Budget: 30k",
        "Budget: 40k",
        entry("budget", ["budget", "invoice"], "Q3 budget raised to 40k after the call"),
    )
    s = sessions.start_session(repo, SID)
    write_card(
        repo,
        "beta",
        "Ship v2",
        "Ship v2 in April",
        entry("goals", ["roadmap"], "v2 slips to April"),
        session=SID,
        actor="agent",
        branch=s.branch,
    )
    sessions.finish_session(repo, s, "review")
    (repo.root / "cards/beta.md").write_text("# beta\n\n## Goals\nShip v2\n\n## Notes\nby hand\n")
    return repo


def normalise(root: Path, text: str) -> str:
    text = text.replace(str(root.parent), "<tmp>")
    known = git(root, "log", "--all", "--format=%H").split()
    names: dict[str, str] = {}

    def name(m: re.Match[str]) -> str:
        full = next((k for k in known if k.startswith(m.group(0))), None)
        return m.group(0) if full is None else names.setdefault(full, f"<{len(names) + 1}>")

    return re.sub(r"\b[0-9a-f]{7,40}\b", name, text)


def check_expected(root: Path, name: str, got: str) -> None:
    got = normalise(root, got)
    if os.environ.get("REGEN_EXPECTED"):
        (EXPECTED / name).write_text(got)
    assert got == (EXPECTED / name).read_text()


def test_status_reports_what_this_machine_knows(busy: MemoryRepo) -> None:
    root = busy.root

    def state() -> dict[str, str]:  # the index caches under .git/gitmem are derived: left out
        return {k: v for k, v in snapshot(root).items() if not k.startswith(".git/gitmem/index-")}

    before = state()
    res = gm("-C", str(root), "status")
    assert res.code == 0, res.err
    check_expected(root, "status.txt", res.out)
    data = json.loads(gm("-C", str(root), "status", "--json").out)
    assert state() == before  # status changes nothing
    assert data["branch"] == "main"
    assert [(c["path"], c["card"]) for c in data["uncommitted"]] == [("cards/beta.md", True)]
    assert data["pending"] == [{"session": SID, "edits": 1, "cards": ["beta"]}]
    assert data["unindexed"] == ["acme § team"]  # the hand edit is not committed: main's index
    index_text = gm("-C", str(root), "index").out
    assert data["index_bytes"] == len(index_text.encode()) and data["index_tokens"] > 0
    (origin,) = data["remotes"]
    assert origin["name"] == "origin" and origin["ahead"] == 1 and origin["behind"] == 0
    assert origin["last_synced"] == git(root, "rev-parse", "main~1").strip()
    assert origin["last_synced_date"] == git(root, "log", "-1", "--format=%cI", "main~1").strip()
    assert "never contacts a remote" in data["note"]


def test_status_sees_a_commit_fetched_with_git_and_a_stopped_sync(
    busy: MemoryRepo, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", "-b", "main", str(tmp_path / "remote.git"), str(other))
    (other / "cards/acme.md").write_text(
        (other / "cards/acme.md").read_text() + "\n## Risks\nLate\n"
    )
    git(other, "commit", "-qam", "risks", "--no-verify")
    git(other, "push", "-q", "origin", "main")
    git(busy.root, "fetch", "-q", "origin")
    data = json.loads(gm("-C", str(busy.root), "status", "--json").out)
    assert data["remotes"][0]["tracking_behind"] == 1
    assert (
        "origin/main (from a git fetch) has 1 commit main has not"
        in gm("-C", str(busy.root), "status").out
    )


def test_status_on_another_branch_and_without_remotes(client: Path) -> None:
    git(client, "switch", "-qc", "side")
    out = gm("-C", str(client), "status").out
    assert out.startswith("On branch side\n  memory lives on main")
    assert "No remotes:" in out and "No sessions waiting for review." in out


def test_cards_lists_sections_sizes_and_the_last_change(busy: MemoryRepo) -> None:
    root = busy.root
    res = gm("-C", str(root), "cards")
    assert res.code == 0, res.err
    check_expected(root, "cards.txt", res.out)
    data = json.loads(gm("-C", str(root), "cards", "--json").out)
    assert [c["project"] for c in data] == ["acme", "beta"]
    for c in data:
        assert (
            c["last_commit"]
            == git(root, "log", "-1", "--format=%H", "main", "--", c["path"]).strip()
        )
        text = git(root, "show", f"main:{c['path']}")
        assert c["bytes"] == len(text.encode())
    acme = data[0]
    assert [(s["id"], s["indexed"]) for s in acme["sections"]] == [
        ("budget", True),
        ("team", False),
    ]
    assert acme["sections"][0]["summary"] == "Q3 budget raised to 40k after the call"


def test_cards_last_changes_follow_history_as_it_grows_and_is_rewritten(busy: MemoryRepo) -> None:
    root = busy.root

    def agree() -> None:
        found = list_cards(busy)
        assert found
        for c in found:
            last = git(root, "log", "-1", "--format=%H %aI", "main", "--", c.path).split()
            assert [c.last_commit, c.last_date] == last
            assert (
                card_created(busy, c.project)
                == git(  # the walk of a card's history stops there
                    root,
                    "log",
                    "--full-history",
                    "--diff-filter=A",
                    "--format=%H",
                    "main",
                    "--",
                    c.path,
                ).split()[-1]
            )
        assert card_created(busy, "no-such-card") is None

    for n in range(3):
        write_card(busy, f"card-{n}", "", f"## Part\n{n}\n", entry("part", ["x"], f"part {n}"))
    agree()
    write_card(busy, "card-1", "Part\n1", "Part\none", entry("part", ["x"], "part one"))
    git(root, "commit", "-qam", "a hand edit, no trailers")  # beta's uncommitted edit
    agree()
    git(root, "reset", "-q", "--hard", "HEAD~2")  # history rewritten under the kept answer
    write_card(busy, "card-9", "", "## Part\n9\n", entry("part", ["x"], "part 9"))
    agree()
    git(root, "checkout", "-qb", "side", "HEAD~1")
    (root / "cards/acme.md").write_text("# Acme website\n\n## Budget\nBudget: 50k\n")
    git(root, "commit", "-qam", "acme by hand on a side branch")
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    agree()


def test_cards_on_a_repo_without_cards(client: Path) -> None:
    assert (
        gm("-C", str(client), "cards").out
        == "No cards on main yet; the agent's first write creates one.\n"
    )
    assert json.loads(gm("-C", str(client), "cards", "--json").out) == []
    assert gm("-C", str(client), "cards", "--branch", "nope").code == 3


def test_search_shows_what_search_history_finds_as_card_and_section(busy: MemoryRepo) -> None:
    root = busy.root
    res = gm("-C", str(root), "search", "budget")
    assert res.code == 0, res.err
    check_expected(root, "search.txt", res.out)
    hits = search(busy, "budget", 10)
    data = json.loads(gm("-C", str(root), "search", "budget", "--json").out)
    assert data["query"] == "budget" and len(data["hits"]) == len(hits.hits) >= 1
    assert [h["commit"] for h in data["hits"]] == [h.commit for h in hits.hits]
    assert {(h["card"], h["section"]) for h in data["hits"]} == {("acme", "budget")}
    assert data["hits"][0]["snippet"] == hits.hits[0].snippet
    assert data["hits"][0]["state"] == "current"
    assert gm("-C", str(root), "search", "zebra").out == "No matches for 'zebra'.\n"
    assert gm("-C", str(root), "search", " ").code == 2


@dataclass(frozen=True)
class FutureHit:
    """A hit as a ranked engine may give it: more fields, the section named by fields."""

    card: str
    section: str
    snippet: str
    kind: str
    date: str
    ref: str
    score: float
    current: bool

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


def test_the_output_keeps_working_when_the_hit_type_gains_fields() -> None:
    hit = from_hit(
        FutureHit("acme", "budget", "Budget: 40k", "card", "2025-11-30T10:20:00Z", "", 3.25, False)
    )
    assert (hit.card, hit.section, hit.snippet) == ("acme", "budget", "Budget: 40k")
    assert lines([hit]) == [
        "acme § budget  (2025-11-30, past, score 3.25)",
        "    Budget: 40k",
    ]
    assert hit.to_json()["score"] == 3.25 and hit.to_json()["current"] is False
