"""A sync round's integration: main brought up to the fetched tip without rewriting a
local commit. A fast-forward when only the remote moved, else a merge commit built with
plumbing (``merge.merge_trees``), section by section; the same section edited on both
sides stops the round and keeps both versions (``state.keep``). main moves by the
compare-and-swap every writer publishes with, and its working tree follows under the
working-tree lock, which is let go before the push."""

from __future__ import annotations

from dataclasses import dataclass

from gitmem.errors import Conflict, NotFound
from gitmem.git.runner import Sha
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops.merge import Merged, merge_trees
from gitmem.ops.publish import PlannedCommit, publish_once
from gitmem.ops.transplant import changed_paths
from gitmem.ops.worktree import ensure_clean, worktree_guard
from gitmem.sync import state as sync_state
from gitmem.sync.result import SyncResult
from gitmem.wording import count


class MainMoved(Exception):
    """main moved under us (a concurrent writer): do the round again."""


@dataclass(frozen=True)
class Integrated:
    how: str  # none | fast-forward | merge
    received: int
    sent: int  # what main has that the remote has not, after integrating


Counted = tuple[Sha, int, int]  # main's tip, commits only it has, commits only theirs has


def sides(repo: MemoryRepo, ours: Sha, theirs: Sha | None) -> Counted:
    """What main has that ``theirs`` has not and the other way round: one rev-list."""
    if theirs is None:
        return ours, int(repo.git.out("rev-list", "--count", ours) or 0), 0
    ahead, _, behind = repo.git.out(
        "rev-list", "--left-right", "--count", f"{ours}...{theirs}"
    ).partition("\t")
    return ours, int(ahead), int(behind)


def integrate(
    repo: MemoryRepo, remote: str, theirs: Sha | None, counted: Counted | None = None
) -> SyncResult | Integrated:
    """Bring main up to ``theirs``; a SyncResult (status conflict) when the round stops.
    ``counted``: ``sides`` of main and ``theirs``, used while main is still at it."""
    ours = repo.tip(MAIN)
    if ours is None:
        raise NotFound("no main branch")
    if counted is None or counted[0] != ours:
        counted = sides(repo, ours, theirs)
    ahead, behind = counted[1:]
    if theirs is None or behind == 0:
        return Integrated("none", 0, ahead)
    if ahead == 0:
        _fast_forward(repo, ours, theirs)
        return Integrated("fast-forward", behind, 0)
    base = merge_base(repo, ours, theirs, remote)
    labels = (f"{MAIN} (this machine)", f"{remote}/main")
    with worktree_guard(repo, MAIN) as live:
        changed = changed_paths(repo, base, theirs)
        if live:
            ensure_clean(repo, changed)
        if repo.tip(MAIN) != ours:
            raise MainMoved
        merged = merge_trees(repo, base, ours, theirs, labels, changed=changed)
        if merged.conflicts:
            return stop(repo, remote, ours, theirs, merged, live)
        commit_merge(repo, remote, ours, theirs, merged, live, [], behind)
    return Integrated("merge", behind, ahead + 1)


def _fast_forward(repo: MemoryRepo, ours: Sha, theirs: Sha) -> None:
    paths = changed_paths(repo, ours, theirs)
    with worktree_guard(repo, MAIN) as live:
        if live:
            ensure_clean(repo, paths)
        planned = PlannedCommit(paths, lambda: (theirs, {}))
        reason = "gitmem sync: fast-forward"
        if publish_once(repo, MAIN, ours, planned, live=live, reason=reason) is None:
            raise MainMoved


def merge_base(repo: MemoryRepo, ours: Sha, theirs: Sha, remote: str) -> Sha:
    proc = repo.git.run("merge-base", ours, theirs, check=False)
    if proc.returncode:
        raise Conflict(
            f"main and {remote}/main share no history; clone {remote} on this machine "
            "instead of syncing a separately created memory"
        )
    return Sha(proc.stdout.decode().strip())


def commit_merge(
    repo: MemoryRepo,
    remote: str,
    ours: Sha,
    theirs: Sha,
    merged: Merged,
    live: bool,
    extra: list[str],
    n: int,
) -> Sha:
    """Commit ``merged`` on main (parents ``ours`` and ``theirs``); MainMoved when main
    moved meanwhile. ``extra``: paths the person resolved; ``n``: commits received."""
    tree = merged.tree
    assert tree is not None
    message = (
        f"gitmem sync: merge {remote}/main\n\n"
        f"{count(n, 'commit')} from {remote} joined to the local ones; "
        "no local commit was rewritten.\n"
    )
    paths = sorted(set(merged.touched) | set(extra))
    planned = PlannedCommit(paths, lambda: (repo.write_commit(tree, [ours, theirs], message), {}))
    reason = f"gitmem sync: merge {remote}/main"
    done = publish_once(repo, MAIN, ours, planned, live=live, reason=reason)
    if done is None:
        raise MainMoved
    return done.commit


def stop(
    repo: MemoryRepo, remote: str, ours: Sha, theirs: Sha, merged: Merged, live: bool
) -> SyncResult:
    """Keep both versions and the state for --continue/--abort; main does not move."""
    written = sync_state.keep(repo, remote, ours, theirs, merged, live)
    note = ""
    if written:
        verb = "shows" if len(written) == 1 else "show"
        note = f"{', '.join(written)} in the working tree {verb} both versions between <<<<<<< and >>>>>>>."
    return SyncResult(remote, "conflict", ours, conflicts=merged.conflicts, note=note)
