"""Layer I, grown: whether a branch's new commits fold onto a cached replay as a full
replay would order them (one line of commits, or a merge of two that describe no
section on both sides); ``index.build`` then reads only ``git log LAST..TIP``.
"""

from __future__ import annotations

from gitmem.errors import GitError
from gitmem.index.replay import Replay
from gitmem.memory import trailers as T
from gitmem.memory.repo import MemoryRepo
from gitmem.ops.history import Commit, iter_log, read_log


def is_revert(c: Commit) -> bool:
    return bool(c.reverts or c.get(T.REVERTS))


def _keys(commits: list[Commit]) -> set[str]:
    state = Replay()
    state.apply_all(commits)
    return set(state.entries)


def _merged(repo: MemoryRepo, state: Replay, new: list[Commit]) -> str | None:
    """Whether ``new`` (a merge on top, as ``gitmem sync`` and ``git pull`` make) folds onto
    ``state`` exactly as a full replay orders it: each side since the fork one line of
    commits without reverts, no section described on both sides (then the order git
    interleaves them in changes nothing). The merge, which then contests nothing; else None."""
    tip = new[-1]
    if len(tip.parents) != 2 or is_revert(tip) or state.commit is None:
        return None
    # ``state`` is in the tip's history exactly when a commit since it has it as a parent
    # (the one above it on any path down): ``new`` says so, no merge-base asked.
    if not any(state.commit in c.parents for c in new):
        return None
    ours, theirs = tip.parents
    try:  # both sides since the fork in one log
        forked = read_log(repo.git, f"{ours}...{theirs}")
    except GitError:  # a commit gone
        return None
    if any(len(c.parents) != 1 or is_revert(c) for c in forked):
        return None
    lines = {c.sha for c in forked}
    if any(c.sha not in lines for c in new[:-1]):  # ``state`` is below the fork
        return None
    mine, side = _line(forked, ours), _line(forked, theirs)
    return tip.sha if not _keys(mine) & _keys(side) else None


def _line(commits: list[Commit], top: str) -> list[Commit]:
    """The commits of ``commits`` (one parent each) from ``top`` down, newest first."""
    by_sha: dict[str, Commit] = {c.sha: c for c in commits}
    down = []
    while top in by_sha:
        down.append(by_sha[top])
        top = by_sha[top].parents[0]
    return down


def advance(repo: MemoryRepo, state: Replay, tip: str) -> list[Commit] | None:
    """Fold ``git log LAST..TIP`` into ``state`` (at LAST) if history grew from LAST: the
    commits folded in (a merge among them contests no section); None (``state``
    untouched) otherwise."""
    if state.commit is None:
        return None
    if state.commit == tip:
        return []
    try:
        new = list(iter_log(repo.git, f"{state.commit}..{tip}", reverse=True))
    except GitError:  # the cached commit is gone (gc after a rewrite)
        return None
    if not new or new[-1].sha != tip:
        return None
    below = [state.commit, *(c.sha for c in new[:-1])]
    linear = all(c.parents == (p,) for c, p in zip(new, below, strict=True))
    if not linear and _merged(repo, state, new) is None:
        return None
    state.apply_all(new)
    return new
