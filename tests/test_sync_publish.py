"""gitmem sync moves main through the compare-and-swap every writer publishes with."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from test_sync import make_pair

from gitmem.memory.repo import MemoryRepo
from gitmem.ops import refs
from gitmem.ops import remote as remote_mod

from helpers import git, gm, write_sha


class GitLetsGo:
    """Another git holding ``lock``, letting go while gitmem waits for it (its first pause)."""

    def __init__(self, lock: Path) -> None:
        self.lock, self.pauses = lock, 0

    def time(self) -> float:
        return time.time()

    def sleep(self, _seconds: float) -> None:
        self.pauses += 1
        self.lock.unlink(missing_ok=True)


def test_a_lock_on_main_held_for_a_moment_is_waited_for_without_another_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, laptop, desktop = make_pair(tmp_path)
    theirs = write_sha(laptop, "beta", "Ship v2", "Ship v3", "goals", "Ship v3")
    assert gm("-C", str(laptop), "sync").code == 0
    lock = desktop / ".git/refs/heads/main.lock"
    other = GitLetsGo(lock)
    monkeypatch.setattr(refs, "time", other)
    real_fetch = remote_mod.fetch_main
    fetches: list[str] = []

    def fetch_then_git_takes_the_lock(repo: MemoryRepo, *args: Any, **kwargs: Any) -> Any:
        got = real_fetch(repo, *args, **kwargs)
        fetches.append(str(got))
        if len(fetches) == 1:
            lock.write_text("")  # e.g. a person's `git gc` packing refs
        return got

    monkeypatch.setattr(remote_mod, "fetch_main", fetch_then_git_takes_the_lock)
    res = gm("-C", str(desktop), "sync", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert other.pauses >= 1 and not lock.exists()  # it did wait for the other git
    assert (data["status"], data["received"], data["rounds"]) == ("synced", 1, 1)
    assert fetches == [theirs]  # one fetch: the round was not started again
    assert git(desktop, "rev-parse", "main").strip() == theirs
    assert (
        git(desktop, "reflog", "-1", "--format=%gs", "main").strip() == "gitmem sync: fast-forward"
    )
    assert "Ship v3" in (desktop / "cards/beta.md").read_text()  # the working tree followed


def test_a_merge_moves_main_with_its_own_reflog_reason(tmp_path: Path) -> None:
    _, laptop, desktop = make_pair(tmp_path)
    write_sha(laptop, "beta", "Ship v2", "Ship v3", "goals", "Ship v3")
    assert gm("-C", str(laptop), "sync").code == 0
    ours = write_sha(
        desktop, "acme-website", "Call Bob", "Call Bob today", "next-steps", "Call today"
    )
    res = gm("-C", str(desktop), "sync", "--json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["merged"] is True
    assert git(desktop, "rev-parse", "main^1").strip() == ours
    assert (
        git(desktop, "reflog", "-1", "--format=%gs", "main").strip()
        == "gitmem sync: merge origin/main"
    )
    assert "Ship v3" in (desktop / "cards/beta.md").read_text()
    assert git(desktop, "status", "--porcelain") == ""  # the working tree and index followed
