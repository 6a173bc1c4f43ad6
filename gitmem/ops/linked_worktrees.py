"""The other worktrees of the repository (``git worktree add``) follow a branch they have
checked out, as the current one does (``worktree.py``).

A write that moves a branch checked out in another worktree holds that worktree's
working-tree lock, finishes a follow interrupted there, and refuses (DirtyCard) before
the move when that worktree has uncommitted edits to the paths. The intent is recorded
in that worktree's own ``gitmem/follow`` before the move, so a crash in between is
finished there by its next gitmem command (or hook), by the next write of the branch
from anywhere, and by ``recover`` from any worktree.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from gitmem.errors import DirtyCard, GitmemError
from gitmem.git.runner import Sha
from gitmem.memory.repo import MemoryRepo
from gitmem.ops import worktree
from gitmem.ops.worktree import (
    Moved,
    check_index_lock,
    checked_out,
    clear_intent,
    finish_follow,
    follow,
    operation_in_progress,
    record_intent,
)
from gitmem.ops.worktree import ensure_clean as ensure_clean_here


def others(repo: MemoryRepo, branch: str | None = None) -> list[Path]:
    """The roots of the repository's other worktrees (those with ``branch`` checked out,
    when given), sorted; one ``stat`` when there is no linked worktree."""
    if not (repo.store.common_dir / "worktrees").is_dir():
        return []
    proc = repo.git.run("worktree", "list", "--porcelain", "-z", check=False)
    sep = "\0"
    if proc.returncode:  # git before 2.36 has no -z: one field a line
        proc, sep = repo.git.run("worktree", "list", "--porcelain"), "\n"
    out = proc.stdout.decode("utf-8", "surrogateescape")
    here, found = repo.root.resolve(), []
    for record in out.split(sep + sep):
        fields = dict(item.partition(" ")[::2] for item in record.split(sep) if item)
        root = Path(fields.get("worktree", ""))
        if "bare" in fields or not fields.get("worktree") or not root.is_dir():
            continue  # the bare repository itself, or a worktree whose folder is gone
        if root.resolve() == here:
            continue
        if branch is None or fields.get("branch") == f"refs/heads/{branch}":
            found.append(root)
    return sorted(found)


@contextlib.contextmanager
def _held(root: Path, branch: str, paths: list[str]) -> Iterator[MemoryRepo | None]:
    """The worktree at ``root`` under its working-tree lock, an interrupted follow
    finished and ``paths`` checked free of a person's edits (None when ``branch`` is no
    longer checked out there)."""
    with MemoryRepo(root) as other, other.lock("worktree"):
        finish_follow(other)
        if not checked_out(other, branch):
            yield None
            return
        try:
            operation_in_progress(other, branch)
            ensure_clean_here(other, paths)
        except DirtyCard as err:
            raise DirtyCard(f"{branch} is checked out in {root}: {err}", hint=err.hint) from None
        check_index_lock(other)
        yield other


def ensure_clean(repo: MemoryRepo, branch: str, paths: list[str]) -> None:
    """Refuse (DirtyCard) when a worktree that has ``branch`` checked out has uncommitted
    edits to ``paths``: the check a caller makes before anything is written."""
    for root in others(repo, branch):
        with _held(root, branch, paths):
            pass


def move_and_follow(
    repo: MemoryRepo,
    branch: str,
    new: Sha,
    old: Sha,
    paths: list[str],
    *,
    live: bool,
    reason: str | None = None,
    known: dict[str, tuple[Sha, bytes]] | None = None,
) -> Moved:
    """Compare-and-swap ``branch`` from ``old`` to ``new`` (``worktree.move_here``), and
    every worktree that has it checked out follows: this one when ``live``, each other one
    with its lock held from the check to the follow. The one way gitmem moves a branch a
    worktree may have checked out."""
    roots = others(repo, branch)
    if not roots:
        return worktree.move_here(
            repo, branch, new, old, paths, live=live, reason=reason, known=known
        )
    with contextlib.ExitStack() as stack:
        held = [stack.enter_context(_held(root, branch, paths)) for root in roots]
        followers = [other for other in held if other is not None]
        for other in followers:
            record_intent(other, branch, old, new, paths)
        try:
            done = worktree.move_here(
                repo, branch, new, old, paths, live=live, reason=reason, known=known
            )
        except GitmemError:
            if repo.store.resolve(f"refs/heads/{branch}") == old:
                _forget(followers)  # refused before anything moved: nothing to follow
            raise
        if not done.moved:
            _forget(followers)
            return done
        behind = [follow(other, new, paths, known) for other in followers]
        return Moved(True, done.behind or next((b for b in behind if b), None))


def _forget(followers: list[MemoryRepo]) -> None:
    for other in followers:
        clear_intent(other)


def recover(repo: MemoryRepo) -> list[str]:
    """``worktree.recover`` here and in every other worktree a crash left a follow in
    (each of their paths named with its worktree); a few ``stat`` calls when none did."""
    done = worktree.recover(repo)
    common = repo.store.common_dir
    if not (common / "worktrees").is_dir():
        return done
    intents = [common / "gitmem", *(common / "worktrees").glob("*/gitmem")]
    left = {p.parent.resolve() for p in intents if (p / worktree.INTENT).is_file()}
    left.discard(repo.git_dir.resolve())
    if not left:
        return done
    for root in others(repo):
        with MemoryRepo(root) as other:
            if other.git_dir.resolve() in left:
                done += [str(root / path) for path in worktree.recover(other)]
    return done
