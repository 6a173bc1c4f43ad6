"""Publishing a commit on a branch: the one loop every writer shares.

A writer plans its commit on the branch's tip; the branch then moves with a
compare-and-swap. When another writer moved it first, the plan is made again on
the new tip, so nobody's edit is lost. When the branch is checked out, the
working-tree lock is held throughout, the files the commit touches must have no
uncommitted edits (checked before any object is written), and afterwards the
working tree and index follow; so does every other worktree (``git worktree add``)
that has the branch checked out (``linked_worktrees``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gitmem.errors import Conflict, NotFound
from gitmem.git.runner import Sha
from gitmem.memory.repo import MemoryRepo
from gitmem.ops.linked_worktrees import move_and_follow
from gitmem.ops.worktree import check_locks, ensure_clean, worktree_guard

MAX_ATTEMPTS = 200

Blobs = dict[str, tuple[Sha, bytes]]


@dataclass
class PlannedCommit:
    """What a writer will commit on one tip."""

    paths: list[str]  # the files the commit changes
    make: Callable[[], tuple[Sha, Blobs]]  # write the objects: (commit, blobs written)
    # HEAD's (blob, content) of paths the writer read already: a clean check without git
    known: dict[str, tuple[Sha | None, bytes | None]] = field(default_factory=dict)


def commit_plan(
    repo: MemoryRepo, tip: Sha, tree: Sha, paths: list[str], message: str
) -> PlannedCommit:
    """The plan of committing ``tree`` (written already) on ``tip``."""
    return PlannedCommit(paths, lambda: (repo.write_commit(tree, [tip], message), {}))


@dataclass(frozen=True)
class Published:
    commit: Sha
    paths: list[str]
    worktree: bool  # the branch is checked out and its working tree followed
    behind: str | None = None  # why the working tree has not followed yet (it will)


def publish(
    repo: MemoryRepo,
    branch: str,
    plan: Callable[[Sha, Sha], PlannedCommit | None],
    reason: str | None = None,
) -> Published | None:
    """Plan on ``branch``'s (tip, root tree), commit, compare-and-swap; None if nothing to do.

    ``reason`` is the reflog message; without one the repo's long-running
    ``update-ref`` is used (reason "gitmem write"), the edit hot path.
    """
    for _ in range(MAX_ATTEMPTS):
        with worktree_guard(repo, branch) as live:
            head = repo.tip_and_tree(branch)
            if head is None:
                raise NotFound(f"no branch {branch!r} in {repo.root}")
            tip, root = head
            planned = plan(tip, root)
            if planned is None:
                return None
            if live:
                ensure_clean(repo, planned.paths, planned.known)
            done = publish_once(repo, branch, tip, planned, live=live, reason=reason)
            if done is not None:
                return done
    raise Conflict(f"gave up after {MAX_ATTEMPTS} concurrent updates of {branch!r}")


def publish_once(
    repo: MemoryRepo,
    branch: str,
    tip: Sha,
    planned: PlannedCommit,
    *,
    live: bool,
    reason: str | None = None,
) -> Published | None:
    """One compare-and-swap of ``planned`` from ``tip``, the working-tree lock held when
    ``live`` and the files checked clean by the caller; None when another writer moved
    ``branch`` first. Stale locks are refused before any object is written.

    Every writer publishes through this; ``publish`` loops over it, planning again on
    the new tip. ``gitmem sync`` calls it without that loop, because what it does when
    main moves under it differs: its retry is the whole round (fetch again, check the
    remote's history, what comes in and what leaves -- main has new local commits now
    -- then integrate), after a pause that spreads racing machines apart; and its merge
    checks what the remote changed before merging (on ``--continue``, less the person's
    own resolutions), under the same lock as a conflict's stop.
    """
    check_locks(repo, branch, live)
    commit, blobs = planned.make()
    done = move_and_follow(
        repo,
        branch,
        commit,
        tip,
        planned.paths,
        live=live,
        reason=reason,
        known=blobs,
    )
    if not done.moved:
        return None
    return Published(commit, planned.paths, live and not done.behind, done.behind)


def commit_files(
    repo: MemoryRepo,
    branch: str,
    build: Callable[[Sha], dict[str, bytes | None]],
    message: str,
    reason: str,
) -> Sha | None:
    """Commit files computed from the branch tip (``build(tip)`` -> path: content or None).

    Returns None when nothing changed. Plumbing plus compare-and-swap, retried.
    """
    return commit_changes(repo, branch, lambda tip: (build(tip), message), reason)


def commit_changes(
    repo: MemoryRepo,
    branch: str,
    build: Callable[[Sha], tuple[dict[str, bytes | None], str]],
    reason: str,
) -> Sha | None:
    """Like ``commit_files``, with the message planned on the tip too (it may depend on it)."""

    def plan(tip: Sha, root: Sha) -> PlannedCommit | None:
        files, message = build(tip)
        tree: Sha | None = root
        changed = []
        for path, data in sorted(files.items()):
            if repo.store.read_blob(f"{tip}:{path}") == data:
                continue
            blob = repo.store.write("blob", data) if data is not None else None
            tree = repo.store.update_path(tree, path, blob)
            changed.append(path)
        if not changed:
            return None
        return commit_plan(repo, tip, tree or repo.store.write_tree([]), changed, message)

    done = publish(repo, branch, plan, reason)
    return done.commit if done else None
