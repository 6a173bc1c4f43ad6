"""A sync's merge moves main, and main's working tree follows it while git pushes: the
working-tree lock is held until the files are written, the follow is recorded before main
moves (so a process killed in between is finished by the next command), and where a
person watches progress the follow comes before the push, as it always did."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_sync import diverged, make_pair, sync, write

from gitmem.git import progress
from gitmem.memory import remote as remote_mod
from gitmem.memory import worktree
from gitmem.sync import exchange

from helpers import git, gm

CARD = "cards/beta.md"  # the laptop changed it: the desktop's sync brings it


def _lock_free(desktop: Path) -> bool:
    with open(desktop / ".git" / "gitmem" / "worktree.lock", "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(fh, fcntl.LOCK_UN)
        return True


def test_the_working_tree_follows_the_merge_while_git_pushes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    laptop, desktop = diverged(tmp_path)
    seen: dict[str, Any] = {}
    real = remote_mod._run_while

    def run_while(repo: Any, args: Any, work: Callable[[], None]) -> Any:
        def watched() -> None:
            seen["pushing"] = args[0] == "push"
            seen["main"] = git(desktop, "rev-parse", "main").strip()
            seen["card_before"] = (desktop / CARD).read_text()
            seen["intent"] = (desktop / ".git" / "gitmem" / worktree.INTENT).exists()
            seen["lock_free_before"] = _lock_free(desktop)
            work()
            seen["card_after"] = (desktop / CARD).read_text()
            seen["lock_free_after"] = _lock_free(desktop)

        return real(repo, args, watched)

    monkeypatch.setattr(remote_mod, "_run_while", run_while)
    code, out, err = sync(desktop)
    assert code == 0 and "merged" in out, err
    merge = git(desktop, "rev-parse", "main").strip()
    assert seen["pushing"] and seen["main"] == merge  # main had moved, git was pushing
    assert "in May" not in seen["card_before"] and seen["intent"]  # the files not yet...
    assert not seen["lock_free_before"]  # ...and nobody else could write them
    assert seen["card_after"] == git(desktop, "show", f"main:{CARD}")
    assert seen["lock_free_after"]
    assert git(desktop, "status", "--porcelain") == ""
    assert git(laptop, "ls-remote", "origin", "main").split()[0] == merge


# The sync of argv[1], killed (SIGKILL) once git is pushing and before the files follow.
_KILLED = """
import os, signal, sys
from gitmem.sync import exchange
def killed(*args):
    os.kill(os.getpid(), signal.SIGKILL)
exchange._while_pushing = killed
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
    write(laptop, "beta", "Ship v2", "Ship v2 in May", "goals", "Ship v2 in May")
    assert sync(laptop)[0] == 0
    write(desktop, "acme-website", "Call Bob", "Call Bob today", "next-steps", "Call Bob today")
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


def test_where_a_person_watches_progress_the_files_follow_before_the_push(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With progress drawn, the push runs in the foreground and its side work after it:
    the lock is never held for the push, so the follow comes first."""
    _laptop, desktop = diverged(tmp_path)
    order: list[str] = []
    real_follow, real_push = worktree._follow, remote_mod.push_updates

    def follow(*args: Any) -> Any:
        order.append("follow")
        return real_follow(*args)

    def push(*args: Any, **kw: Any) -> Any:
        order.append("push")
        return real_push(*args, **kw)

    monkeypatch.setattr(worktree, "_follow", follow)
    monkeypatch.setattr(remote_mod, "push_updates", push)
    from gitmem.memory.repo import MemoryRepo

    with MemoryRepo(desktop) as repo, progress.shown(True):
        assert exchange.sync(repo).merged
    assert order == ["follow", "push"]
    assert git(desktop, "status", "--porcelain") == ""
