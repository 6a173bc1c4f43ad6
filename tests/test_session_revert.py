"""gitmem revert SESSION: one commit undoes a session's accepted edits and restores the index."""

from __future__ import annotations

import json
from pathlib import Path

from gitmem.features.edit import write_card
from gitmem.features.session_live import transcript_file
from gitmem.index import build as index
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.ops.history import read_log
from gitmem.review import session_branches as sessions

from helpers import git, gm, index_summaries, snapshot

SID = "20261130-101200-ab12"
CARD = "# Acme website\n\n## Budget\n30k\n\n## Team\nAnn\nBob\nCy\nDee\nEve\n\n## Next steps\nCall Bob\n"


def setup_card(repo: MemoryRepo) -> None:
    write_card(
        repo, "acme-website", "", CARD, IndexEntry.make("budget", ["budget"], "Budget set to 30k")
    )


def run_session(repo: MemoryRepo, sid: str = SID, policy: str = "auto") -> None:
    s = sessions.start_session(repo, sid)
    for project, old, new, section, summary in (
        ("acme-website", "30k", "40k", "budget", "Budget raised to 40k"),
        ("acme-website", "Call Bob", "Call Bob on Monday", "next-steps", "Call Bob on Monday"),
        ("beta", "", "## Goals\nShip v2\n", "goals", "Ship v2 by March"),
    ):
        write_card(
            repo,
            project,
            old,
            new,
            IndexEntry.make(section, ["kw"], summary),
            session=sid,
            actor="agent",
            branch=s.branch,
        )
    line = {"at": "2025-11-30T10:20:00Z", "role": "user", "text": "hello", "content": []}
    transcript_file(repo, sid).write_text(json.dumps(line) + "\n")
    sessions.finish_session(repo, s, policy)


summaries = index_summaries


def test_revert_session_undoes_every_edit_in_one_commit(repo: MemoryRepo, client: Path) -> None:
    setup_card(repo)
    before_index = summaries(repo)
    before_card = (client / "cards/acme-website.md").read_text()
    run_session(repo)
    write_card(
        repo, "acme-website", "Eve", "Eve (new)", IndexEntry.make("team", ["team"], "Eve joined")
    )
    assert summaries(repo)["acme-website/budget"] == "Budget raised to 40k"
    count = int(git(client, "rev-list", "--count", "main"))

    res = gm("-C", str(client), "revert", SID)
    assert res.code == 0, res.err
    assert f"reverted session {SID}: 3 edits undone" in res.out
    assert int(git(client, "rev-list", "--count", "main")) == count + 1
    # the person's later edit stays; the session's are gone; its transcript stays
    assert (client / "cards/acme-website.md").read_text() == before_card.replace("Eve", "Eve (new)")
    assert not (client / "cards/beta.md").exists()
    assert (client / f"sessions/{SID}.jsonl").exists()
    assert git(client, "status", "--porcelain") == ""
    after = summaries(repo)
    assert after == {**before_index, "acme-website/team": "Eve joined"}

    head = read_log(repo.git, "main", max_count=1)[0]
    landed = [
        c.sha
        for c in read_log(repo.git, "main~1")
        if c.get("Gitmem-Session") == SID and c.get("Gitmem-Layer") is None
    ]
    assert sorted(head.reverts) == sorted(landed) and len(landed) == 3
    body = git(client, "log", "-1", "--format=%B")
    parsed = git(client, "interpret-trailers", "--parse", input=body.encode())
    assert parsed.count("Gitmem-Reverts: ") == 3
    assert "reverted" in gm("-C", str(client), "review", "--all").out


def test_reverting_the_session_revert_brings_the_session_back(
    repo: MemoryRepo, client: Path
) -> None:
    setup_card(repo)
    run_session(repo)
    with_session = summaries(repo)
    card = (client / "cards/acme-website.md").read_text()
    assert gm("-C", str(client), "revert", SID).code == 0
    undo = git(client, "rev-parse", "main").strip()
    res = gm("-C", str(client), "revert", undo)
    assert res.code == 0, res.err
    assert summaries(repo) == with_session
    assert (client / "cards/acme-website.md").read_text() == card
    rebuilt, cached = index.rebuild(repo)
    assert cached == rebuilt


def test_edits_reverted_one_by_one_are_left_out(repo: MemoryRepo, client: Path) -> None:
    setup_card(repo)
    run_session(repo)
    beta = git(client, "log", "--format=%H", "-1", "--grep=Ship v2", "main").strip()
    assert gm("-C", str(client), "revert", beta).code == 0
    res = gm("-C", str(client), "revert", SID, "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert beta not in data["reverted"] and len(data["reverted"]) == 2
    assert summaries(repo)["acme-website/budget"] == "Budget set to 30k"
    again = gm("-C", str(client), "revert", SID)
    assert again.code == 3 and "no edits on main left to revert" in again.err


def test_revert_a_reviewed_session_after_partial_accept(repo: MemoryRepo, client: Path) -> None:
    setup_card(repo)
    run_session(repo, policy="review")
    assert gm("-C", str(client), "review", SID, "--accept", "--hunks", "1,3").code == 0
    assert summaries(repo)["beta/goals"] == "Ship v2 by March"
    res = gm("-C", str(client), "revert", SID)
    assert res.code == 0, res.err
    assert "2 edits undone" in res.out
    assert (client / "cards/acme-website.md").read_text() == CARD
    assert summaries(repo)["acme-website/budget"] == "Budget set to 30k"


def test_revert_commit_keeps_working(repo: MemoryRepo, client: Path) -> None:
    setup_card(repo)
    write_card(
        repo, "acme-website", "30k", "35k", IndexEntry.make("budget", ["budget"], "Budget 35k")
    )
    sha = git(client, "rev-parse", "main").strip()
    res = gm("-C", str(client), "revert", sha[:8])
    assert res.code == 0, res.err
    assert f"reverted {sha[:7]}" in res.out
    assert summaries(repo)["acme-website/budget"] == "Budget set to 30k"


def test_pending_or_unknown_sessions_are_refused_and_nothing_changes(
    repo: MemoryRepo, client: Path
) -> None:
    setup_card(repo)
    run_session(repo, policy="review")
    before = snapshot(client)
    pending = gm("-C", str(client), "revert", SID)
    assert (
        pending.code == 2 and pending.err.count("\n") == 1 and "waiting for review" in pending.err
    )
    unknown = gm("-C", str(client), "revert", "20990101-000000-zz99")
    assert unknown.code == 3 and unknown.err.count("\n") == 1
    assert snapshot(client) == before


def test_uncommitted_edits_block_a_session_revert(repo: MemoryRepo, client: Path) -> None:
    setup_card(repo)
    run_session(repo)
    (client / "cards/beta.md").write_text("# beta\n\nmine\n")
    main = git(client, "rev-parse", "main")
    res = gm("-C", str(client), "revert", SID)
    assert res.code == 4 and "uncommitted edits to cards/beta.md" in res.err
    assert git(client, "rev-parse", "main") == main
