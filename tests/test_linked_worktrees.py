"""A branch checked out in a linked worktree (``git worktree add``) follows gitmem's
writes from any other worktree, as the current worktree does: its files and git's index
are brought to the new commit, or the write is refused when that worktree has
uncommitted edits to the card; a kill -9 between the move and the follow is finished
by the next command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, gm, try_write, write

CARD = "cards/acme.md"


@pytest.fixture
def linked(client: Path, tmp_path: Path) -> Path:
    """``main`` checked out in a linked worktree; the main worktree on another branch."""
    write(client, "acme", "", "## budget\nBudget: 30k\n")
    git(client, "switch", "-q", "-c", "work")
    other = tmp_path / "linked"
    git(client, "worktree", "add", "-q", str(other), "main")
    return other


def test_a_write_from_the_main_worktree_moves_the_linked_one(client: Path, linked: Path) -> None:
    write(client, "acme", "30k", "40k")
    assert "Budget: 40k" in (linked / CARD).read_text()
    assert git(linked, "status", "--porcelain") == ""
    # The person's next commit there keeps the agent's edit.
    (linked / "notes.txt").write_text("mine\n")
    git(linked, "add", "notes.txt")
    git(linked, "commit", "-q", "-m", "my notes")
    assert "Budget: 40k" in git(linked, "show", f"main:{CARD}")


def test_a_write_from_a_linked_worktree_moves_the_main_one(client: Path, tmp_path: Path) -> None:
    write(client, "acme", "", "## budget\nBudget: 30k\n")
    other = tmp_path / "linked"
    git(client, "worktree", "add", "-q", "-b", "work", str(other), "main")
    write(other, "acme", "30k", "40k")  # writes main, checked out in the main worktree
    assert "Budget: 40k" in (client / CARD).read_text()
    assert git(client, "status", "--porcelain") == ""
    git(client, "commit", "-q", "--allow-empty", "-m", "mine")
    assert "Budget: 40k" in git(client, "show", f"main:{CARD}")


def test_uncommitted_edits_there_refuse_the_write(client: Path, linked: Path) -> None:
    (linked / CARD).write_text((linked / CARD).read_text() + "my own line\n")
    before = git(client, "rev-parse", "main")
    res = try_write(client, "acme", "30k", "40k")
    assert res.code != 0
    assert f"main is checked out in {linked}" in res.err and CARD in res.err
    assert res.out == "" and len(res.err.strip().splitlines()) <= 2
    assert git(client, "rev-parse", "main") == before
    assert (linked / CARD).read_text().endswith("Budget: 30k\nmy own line\n")


def test_a_session_landing_follows_there(client: Path, linked: Path) -> None:
    from gitmem.bridges.memory_tool import GitMemoryTool

    with GitMemoryTool(client) as tool:
        tool.call({"command": "str_replace", "path": "/memories/acme.md",
                      "old_str": "30k", "new_str": "45k"})  # fmt: skip
        done = tool.finish()
    assert done is not None and done.landed, done
    assert "Budget: 45k" in (linked / CARD).read_text()
    assert git(linked, "status", "--porcelain") == ""


# A write killed between moving main and the linked worktree's follow.
KILLED = """
import os, sys
import gitmem.ops.worktree as w
point = os.environ["CRASH_AT"]
name = {"after-cas": "cas_fast", "files-written": "_update_index"}[point]
real = getattr(w, name)
def wrapped(*a, **k):
    if point == "files-written":
        os.kill(os.getpid(), 9)
    out = real(*a, **k)
    os.kill(os.getpid(), 9)
setattr(w, name, wrapped)
from gitmem.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize("point", ["after-cas", "files-written"])
@pytest.mark.parametrize("then", ["recover", "status", "commit"])
def test_a_follow_killed_midway_is_finished(
    client: Path, linked: Path, point: str, then: str
) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", KILLED, "-C", str(client), "write", "acme", "--old", "30k",
         "--new", "40k", "--section", "budget", "--keywords", "b", "--summary", "40k"],
        env={**os.environ, "CRASH_AT": point}, capture_output=True, check=False,
    )  # fmt: skip
    assert proc.returncode == -9, proc.stderr
    assert "Budget: 40k" in git(client, "show", f"main:{CARD}")
    if then == "commit":  # the person's commit there is refused until the follow is finished
        (linked / "notes.txt").write_text("mine\n")
        git(linked, "add", "notes.txt")
        refused = subprocess.run(
            ["git", "commit", "-q", "-m", "mine"], cwd=linked, capture_output=True, check=False
        )
        assert refused.returncode != 0
        assert b"gitmem recover" in refused.stderr
        assert gm("-C", str(linked), "recover").code == 0
        git(linked, "commit", "-q", "-m", "mine")
    else:  # any next command, from the main worktree
        assert gm("-C", str(client), then).code == 0
    assert "Budget: 40k" in (linked / CARD).read_text()
    assert git(linked, "status", "--porcelain") == ""
    assert "Budget: 40k" in git(linked, "show", f"HEAD:{CARD}")


def test_a_revert_and_an_accepted_review_follow_there(client: Path, linked: Path) -> None:
    from gitmem.bridges.memory_tool import GitMemoryTool

    write(client, "acme", "30k", "40k")
    res = gm("-C", str(client), "revert", git(client, "rev-parse", "main").strip())
    assert res.code == 0, res.err
    assert "Budget: 30k" in (linked / CARD).read_text()
    assert git(linked, "status", "--porcelain") == ""
    toml = client / "gitmem.toml"  # sessions run here wait for review
    toml.write_text(toml.read_text().replace('review = "auto"', 'review = "review"'))
    git(client, "commit", "-qam", "sessions wait for review")
    with GitMemoryTool(client) as tool:
        tool.call({"command": "str_replace", "path": "/memories/acme.md",
                   "old_str": "30k", "new_str": "60k"})  # fmt: skip
        done = tool.finish()
    assert done is not None and done.pending
    res = gm("-C", str(client), "review", done.session, "--accept")
    assert res.code == 0, res.err
    assert f"checked out in {linked}, which follows it" in res.out
    assert "Budget: 60k" in (linked / CARD).read_text()
    assert git(linked, "status", "--porcelain") == ""


def test_an_accepted_review_is_refused_before_anything_moves_when_dirty_there(
    client: Path, linked: Path
) -> None:
    from gitmem.bridges.memory_tool import GitMemoryTool

    toml = client / "gitmem.toml"  # sessions run here wait for review
    toml.write_text(toml.read_text().replace('review = "auto"', 'review = "review"'))
    git(client, "commit", "-qam", "sessions wait for review")
    with GitMemoryTool(client) as tool:
        tool.call({"command": "str_replace", "path": "/memories/acme.md",
                   "old_str": "30k", "new_str": "60k"})  # fmt: skip
        done = tool.finish()
    assert done is not None and done.pending
    (linked / CARD).write_text((linked / CARD).read_text() + "mine\n")
    main = git(client, "rev-parse", "main")
    res = gm("-C", str(client), "review", done.session, "--accept")
    assert res.code == 4 and f"main is checked out in {linked}" in res.err
    assert git(client, "rev-parse", "main") == main
    assert gm("-C", str(client), "review", done.session).code == 0  # still pending


def test_a_sync_follows_there(tmp_path: Path) -> None:
    from test_sync import diverged, sync

    _laptop, desktop = diverged(tmp_path)
    git(desktop, "switch", "-q", "-c", "work")
    other = tmp_path / "desktop-main"
    git(desktop, "worktree", "add", "-q", str(other), "main")
    code, _out, err = sync(desktop)
    assert code == 0, err
    assert "Ship v2 in May" in (other / "cards/beta.md").read_text()
    assert git(other, "status", "--porcelain") == ""
    assert git(other, "rev-parse", "HEAD") == git(tmp_path / "remote.git", "rev-parse", "main")


def test_a_session_checked_out_in_a_linked_worktree_is_not_decided(
    client: Path, tmp_path: Path
) -> None:
    from gitmem.bridges.memory_tool import GitMemoryTool

    write(client, "acme", "", "## budget\nBudget: 30k\n")
    toml = client / "gitmem.toml"
    toml.write_text(toml.read_text().replace('review = "auto"', 'review = "review"'))
    git(client, "commit", "-qam", "sessions wait for review")
    with GitMemoryTool(client) as tool:
        tool.call({"command": "str_replace", "path": "/memories/acme.md",
                   "old_str": "30k", "new_str": "60k"})  # fmt: skip
        done = tool.finish()
    assert done is not None and done.pending
    other = tmp_path / "session"
    git(client, "worktree", "add", "-q", str(other), f"gitmem/session/{done.session}")
    main = git(client, "rev-parse", "main")
    for decide in ("--accept", "--reject"):
        res = gm("-C", str(client), "review", done.session, decide)
        assert res.code == 2 and f"checked out in {other}" in res.err, res.err
    assert git(client, "rev-parse", "main") == main
    assert git(other, "status", "--porcelain") == ""
    assert (
        git(other, "rev-parse", "--abbrev-ref", "HEAD").strip() == f"gitmem/session/{done.session}"
    )


def test_a_merge_in_progress_there_refuses_the_write(client: Path, linked: Path) -> None:
    git(linked, "switch", "-q", "-c", "side")
    (linked / CARD).write_text((linked / CARD).read_text().replace("30k", "35k"))
    git(linked, "commit", "-qam", "side")
    git(linked, "switch", "-q", "main")
    (linked / CARD).write_text((linked / CARD).read_text().replace("30k", "33k"))
    git(linked, "commit", "-qam", "mine", "--no-verify")
    git(linked, "merge", "-q", "side", check=False)  # stops at the conflict
    main = git(client, "rev-parse", "main")
    res = try_write(client, "acme", "", "## other\nmore\n")
    assert res.code == 4 and "a merge is in progress in" in res.err and str(linked) in res.err, (
        res.err
    )
    assert git(client, "rev-parse", "main") == main
