"""Moving refs with compare-and-swap, telling a lost race from a stale lock."""

from __future__ import annotations

import time
from pathlib import Path

from gitmem.errors import GitError, StaleLock
from gitmem.git.runner import Sha
from gitmem.memory.refs import SEEN
from gitmem.memory.repo import MemoryRepo


def zero(repo: MemoryRepo) -> str:
    return repo.store.zero_sha


# A lock git holds for a few milliseconds; one still there after this long, on a ref we
# could not move although nobody moved it, was left by a killed process.
LOCK_PATIENCE_S = 1.0


def lock_files(repo: MemoryRepo, ref: str) -> list[Path]:
    """The lock files git takes to move ``ref``."""
    common = repo.store.common_dir
    files = [common / f"{ref}.lock", common / "packed-refs.lock"]
    if repo.head_branch() is not None and ref == f"refs/heads/{repo.head_branch()}":
        files.append(repo.git_dir / "HEAD.lock")  # git logs the move in HEAD's reflog too
    return files


def wait_for_locks(files: list[Path], patience: float = LOCK_PATIENCE_S) -> None:
    """Return once none of ``files`` exists; StaleLock for one that stays ``patience`` s."""
    while True:
        held = [f for f in files if f.exists()]
        if not held:
            return
        for lock in held:
            try:
                age = time.time() - lock.stat().st_mtime
            except FileNotFoundError:
                continue
            if age >= patience:
                raise StaleLock(str(lock))
        time.sleep(0.005)


def failed_cas(repo: MemoryRepo, ref: str, old: Sha | None, err: str) -> bool:
    """After a refused compare-and-swap: False when another writer moved ``ref`` (retry).

    Decided from the ref itself and git's lock files, never from git's message, which
    a translated git words differently.
    """
    if repo.store.resolve(ref) != old:
        repo.unexplained_cas = 0
        return False
    locks = lock_files(repo, ref)
    if any(f.exists() for f in locks):
        wait_for_locks(locks)  # StaleLock if one stays
        repo.unexplained_cas = 0
        return False  # a writer held it and let go: try again
    # Nobody moved it and no lock is left: another writer may have held the lock and let
    # go without moving it. Again and again means git cannot write here at all.
    repo.unexplained_cas += 1
    if repo.unexplained_cas < 3:
        time.sleep(0.002 * repo.unexplained_cas)
        return False
    repo.unexplained_cas = 0
    raise GitError(["git", "update-ref", ref], 1, err)


def cas(repo: MemoryRepo, ref: str, new: Sha, old: Sha | None, reason: str) -> bool:
    """Point ``ref`` at ``new`` only if it still points at ``old``; False if someone moved it."""
    proc = repo.git.run("update-ref", "-m", reason, ref, new, old or zero(repo), check=False)
    if proc.returncode == 0:
        return True
    return failed_cas(repo, ref, old, proc.stderr.decode("utf-8", "replace"))


def cas_fast(repo: MemoryRepo, ref: str, new: Sha, old: Sha | None) -> bool:
    """``cas`` through the repo's long-running update-ref (reflog reason "gitmem write")."""
    moved, err = repo.ref_tx.cas(ref, new, old or zero(repo))
    return moved or failed_cas(repo, ref, old, err)


def saw(repo: MemoryRepo, old: Sha | None, new: Sha) -> None:
    """gitmem moved main from ``old`` to ``new``: ``new`` is what this clone has seen, unless
    the seen main is not in ``old``'s history (rolled back or rewritten outside gitmem:
    kept, for ``gitmem verify`` to report)."""
    seen = repo.store.resolve(SEEN)
    if seen not in (None, old) and (
        old is None
        or repo.git.run("merge-base", "--is-ancestor", seen, old, check=False).returncode
    ):
        return
    repo.ref_tx.cas(SEEN, new, seen or zero(repo))  # lost to another writer: theirs is newer
