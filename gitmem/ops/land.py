"""Landing commits from one branch onto another, keeping each commit's message and trailers.

Used when a session ends with the ``auto`` review policy and when a person accepts
a session's commits in review. Each commit is re-created on the target's tip
(fast-forward when the target has not moved), so history stays linear and the
index can be folded in incrementally; a card the target changed too is merged
section by section (``merge.land_tree``).
"""

from __future__ import annotations

from gitmem.errors import Conflict
from gitmem.git.objects import Commit
from gitmem.git.runner import Sha
from gitmem.memory.repo import MemoryRepo
from gitmem.ops.merge import land_tree
from gitmem.ops.publish import PlannedCommit, publish
from gitmem.ops.transplant import changed_paths


def commits_between(repo: MemoryRepo, base: str, tip: str) -> list[Sha]:
    """First-parent commits in ``base..tip``, oldest first."""
    out = repo.git.out("rev-list", "--reverse", "--first-parent", f"{base}..{tip}")
    return [Sha(s) for s in out.split()]


def land(repo: MemoryRepo, shas: list[Sha], onto: str, reason: str) -> list[Sha]:
    """Re-create ``shas`` (oldest first) on top of branch ``onto``; returns the new commits.

    Fast-forwards when the first commit's parent is the tip already. When ``onto``
    is checked out, refuses (DirtyCard) if a touched file has uncommitted edits.
    """
    if not shas:
        return []
    raws = [repo.store.read_commit(s) for s in shas]
    new: list[Sha] = []

    def plan(tip: Sha, _root: Sha) -> PlannedCommit:
        new[:], touched = _replay(repo, raws, tip)
        last = new[-1]
        return PlannedCommit(sorted(touched), lambda: (last, {}))

    publish(repo, onto, plan, reason)
    return list(new)


def check_lands(repo: MemoryRepo, shas: list[Sha], onto: str) -> None:
    """Raise ``Conflict`` if ``land(repo, shas, onto)`` would, on ``onto`` as it is now:
    a decision that must be published before it lands asks this first."""
    tip = repo.tip(onto)
    if shas and tip is not None:
        _replay(repo, [repo.store.read_commit(s) for s in shas], tip)


def _replay(repo: MemoryRepo, raws: list[Commit], tip: Sha) -> tuple[list[Sha], set[str]]:
    """``raws`` re-created on ``tip`` (those on it already kept: a fast-forward), and the
    paths they change."""
    new: list[Sha] = []
    parent = tip
    for raw in raws:  # those already on the tip: a fast-forward, same commits
        if raw.parents != (parent,):
            break
        new.append(raw.sha)
        parent = raw.sha
    # what the fast-forwarded run changed: one diff, not one per commit
    touched = set(changed_paths(repo, tip, parent)) if new else set()
    for raw in raws[len(new) :]:
        if len(raw.parents) != 1:
            raise Conflict(f"{raw.sha[:7]} is a merge; land its edits instead")
        tree, paths = land_tree(repo, parent, [(raw.parents[0], raw.sha)])
        touched.update(paths)
        parent = repo.write_commit(tree, [parent], raw.message, author=raw.author)
        new.append(parent)
    return new, touched
