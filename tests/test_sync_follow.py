"""A sync's merge moves main and main's working tree follows before git pushes: while
the remote receives, the files are the merge's and the working-tree lock is free (no
lock is held across a network call); a sync killed between the move and the follow is
finished by the next command."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from test_sync import diverged, make_pair, sync

from gitmem.git import progress
from gitmem.memory.repo import MemoryRepo
from gitmem.sync import exchange

from helpers import git, gm, write_sha

CARD = "cards/beta.md"  # the laptop changed it: the desktop's sync brings it

# The remote's pre-receive hook: what the desktop looks like while git pushes to it.
_HOOK = """#!{python}
import fcntl, json, os, subprocess, sys
env = {{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}}  # not the remote's
desktop = {desktop!r}
pushed = sys.stdin.read().split()
with open(desktop + "/.git/gitmem/worktree.lock", "a+") as fh:
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        free = True
    except BlockingIOError:
        free = False
card = open(desktop + "/{card}").read()
main = subprocess.run(
    ["git", "-C", desktop, "rev-parse", "main"], capture_output=True, text=True, env=env
)
with open({seen!r}, "a") as out:
    out.write(json.dumps({{"free": free, "card": card, "main": main.stdout.strip(), "pushed": pushed}}) + "\\n")
"""


@pytest.mark.parametrize("watched", [False, True])
def test_while_git_pushes_the_files_have_followed_and_the_lock_is_free(
    tmp_path: Path, watched: bool
) -> None:
    laptop, desktop = diverged(tmp_path)
    seen = tmp_path / "seen.jsonl"
    hook = tmp_path / "remote.git" / "hooks" / "pre-receive"
    hook.write_text(
        _HOOK.format(python=sys.executable, desktop=str(desktop), card=CARD, seen=str(seen))
    )
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    with MemoryRepo(desktop) as repo, progress.shown(watched):
        assert exchange.sync_repo(repo).merged
    merge = git(desktop, "rev-parse", "main").strip()
    (during,) = [json.loads(line) for line in seen.read_text().splitlines()]
    assert during["free"]  # another gitmem command could write meanwhile
    assert during["main"] == merge and merge in during["pushed"]
    assert during["card"] == git(desktop, "show", f"main:{CARD}")  # followed already
    assert "Ship v2 in May" in during["card"]
    assert git(desktop, "status", "--porcelain") == ""
    assert git(laptop, "ls-remote", "origin", "main").split()[0] == merge


# The sync of argv[1], killed (SIGKILL) once main moved and before its files follow.
_KILLED = """
import os, signal, sys
from gitmem.ops import worktree
def killed(*args, **kw):
    os.kill(os.getpid(), signal.SIGKILL)
worktree.sync_worktree = killed
from gitmem.cli import main
main(["-C", sys.argv[1], "sync"])
"""


def test_a_sync_killed_before_the_files_follow_is_finished_by_the_next_command(
    tmp_path: Path,
) -> None:
    laptop, desktop = diverged(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED, str(desktop)], capture_output=True, check=False
    )
    assert proc.returncode == -9, proc.stderr
    assert "Ship v2 in May" in git(desktop, "show", f"main:{CARD}")  # main moved...
    assert "in May" not in (desktop / CARD).read_text()  # ...its files not yet
    assert git(desktop, "status", "--porcelain") != ""
    res = gm("-C", str(desktop), "status")
    assert res.code == 0, res.err
    assert "finished an interrupted update" in res.err
    assert (desktop / CARD).read_text() == git(desktop, "show", f"main:{CARD}")
    assert git(desktop, "status", "--porcelain") == ""
    code, _out, err = sync(desktop)  # and the sync goes on from there
    assert code == 0, err
    assert sync(laptop)[0] == 0
    assert git(laptop, "rev-parse", "main") == git(desktop, "rev-parse", "main")


def test_a_killed_follow_of_a_symlink_outside_memory_is_finished_by_git(tmp_path: Path) -> None:
    _bare, laptop, desktop = make_pair(tmp_path)
    (laptop / "docs").mkdir()
    os.symlink("/etc", laptop / "docs" / "etc")
    git(laptop, "add", "docs/etc")
    git(laptop, "commit", "-qm", "a link outside memory", "--no-verify")
    write_sha(laptop, "beta", "Ship v2", "Ship v2 in May", "goals", "Ship v2 in May")
    assert sync(laptop)[0] == 0
    write_sha(desktop, "acme-website", "Call Bob", "Call Bob today", "next-steps", "Call Bob today")
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED, str(desktop)], capture_output=True, check=False
    )
    assert proc.returncode == -9, proc.stderr
    assert not os.path.lexists(desktop / "docs" / "etc")
    res = gm("-C", str(desktop), "status")
    assert res.code == 0 and "finished an interrupted update" in res.err, res.err
    assert os.readlink(desktop / "docs" / "etc") == "/etc"
    assert (desktop / CARD).read_text() == git(desktop, "show", f"main:{CARD}")
    assert git(desktop, "status", "--porcelain") == ""
