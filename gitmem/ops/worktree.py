"""A checked-out branch's working tree and index follow its ref, even across a crash.

A writer moves the branch first (compare-and-swap), then updates the files and git's
index. A crash in between would leave the card "modified" against HEAD, so
``move_here`` records the intent (branch, old tip, new tip, paths) in
``.git/gitmem/follow`` before the move and removes it once the files followed. Whoever
takes the working-tree lock next (every writer, every gitmem command and hook through
``recover``) finishes an interrupted follow first: each path that still holds the old
tip's or the new one's version is brought to the tip; one a person edited is left alone.

git brings the paths to the commit (``git restore --staged --worktree``): the index gets
each committed blob as it is and git writes the file from it as a checkout does, so
whatever .gitattributes says ``git status`` is clean. Where memory lives a symlink on the
way is refused first (``safe_files``); outside, a commit may hold a symlink or a submodule,
which git brings as it does any path.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from gitmem.errors import DirtyCard, GitError, GitmemError, StaleLock, UnsafePath, from_os_error
from gitmem.git import safe_files
from gitmem.git.objects import GITLINK_MODE, LINK_MODE
from gitmem.git.runner import Sha
from gitmem.git.staging import staged, staged_modes
from gitmem.memory import path_rule
from gitmem.memory.repo import MAIN, MemoryRepo, where_memory_lives
from gitmem.ops.refs import LOCK_PATIENCE_S, cas, cas_fast, lock_files, saw, wait_for_locks

INTENT = "follow"

# Files that say git is in the middle of something in this working tree.
_OPERATIONS = {
    "MERGE_HEAD": ("a merge", "git merge --continue", "git merge --abort"),
    "CHERRY_PICK_HEAD": ("a cherry-pick", "git cherry-pick --continue", "git cherry-pick --abort"),
    "REVERT_HEAD": ("a revert", "git revert --continue", "git revert --abort"),
    "rebase-merge": ("a rebase", "git rebase --continue", "git rebase --abort"),
    "rebase-apply": ("a rebase or git am", "git rebase --continue", "git rebase --abort"),
}


def checked_out(repo: MemoryRepo, branch: str) -> bool:
    return repo.head_branch() == branch and (repo.root / ".git").exists()


def operation_in_progress(repo: MemoryRepo, branch: str) -> None:
    """Refuse to move ``branch`` while git is merging, rebasing or picking onto it."""
    for name, (what, done, undo) in _OPERATIONS.items():
        marker = repo.git_dir / name
        if not marker.exists():
            continue
        if name.startswith("rebase"):
            head = marker / "head-name"
            target = head.read_text().strip() if head.is_file() else ""
            if target and target != f"refs/heads/{branch}":
                continue  # rebasing another branch: this one is free
        elif not checked_out(repo, branch):
            continue
        raise DirtyCard(
            f"{what} is in progress in {repo.root}; finish it (`{done}`) or abort it "
            f"(`{undo}`) before gitmem changes {branch!r}",
        )


@contextlib.contextmanager
def worktree_guard(repo: MemoryRepo, branch: str) -> Iterator[bool]:
    """Hold the working-tree lock while ``branch`` is the checked-out one; yields whether
    it is. An interrupted follow is finished first: the caller sees a working tree in step."""
    operation_in_progress(repo, branch)
    if not checked_out(repo, branch) and not _intent_path(repo).exists():
        yield False
        return
    with repo.lock("worktree"):
        finish_follow(repo)
        yield checked_out(repo, branch)


def recover(repo: MemoryRepo) -> list[str]:
    """Finish a follow a crash interrupted (the branch moved, the files not yet); the
    paths brought up to date (usually none; one ``stat``). A person's edit is left alone."""
    if not _intent_path(repo).exists():
        return []
    with repo.lock("worktree"):
        return finish_follow(repo)


def pending_paths(repo: MemoryRepo) -> list[str]:
    """The paths of a follow a crash interrupted ([] when there is none)."""
    try:
        return list(json.loads(_intent_path(repo).read_text("utf-8"))["paths"])
    except FileNotFoundError:
        return []
    except (ValueError, KeyError, TypeError):
        return ["(unreadable record)"]


# -- the intent ------------------------------------------------------------------------
def _intent_path(repo: MemoryRepo) -> Path:
    return repo.git_dir / "gitmem" / INTENT


def record_intent(repo: MemoryRepo, branch: str, old: Sha, new: Sha, paths: list[str]) -> None:
    path = repo.private_dir() / INTENT
    tmp = path.with_name(INTENT + ".tmp")
    data = {"branch": branch, "old": old, "new": new, "paths": paths}
    tmp.write_text(json.dumps(data), "utf-8")
    os.replace(tmp, path)


def clear_intent(repo: MemoryRepo) -> None:
    with contextlib.suppress(FileNotFoundError):
        _intent_path(repo).unlink()


def finish_follow(repo: MemoryRepo) -> list[str]:
    """Roll an interrupted follow forward (the working-tree lock is held)."""
    try:
        intent = json.loads(_intent_path(repo).read_text("utf-8"))
        branch, old, paths = intent["branch"], Sha(intent["old"]), list(intent["paths"])
    except FileNotFoundError:
        return []
    except (ValueError, KeyError, TypeError):
        clear_intent(repo)  # a torn record: written before the move, so nothing moved
        return []
    for path in paths:
        safe_files.clean_temporaries(repo.root, path)
    tip = repo.tip(branch)
    if tip is None or not checked_out(repo, branch):
        clear_intent(repo)  # the branch is gone or no longer checked out: git owns the files now
        return []
    todo = [p for p in paths if _untouched(repo, p, old, tip)]
    if todo:
        sync_worktree(repo, tip, todo)
    clear_intent(repo)
    return todo


def _untouched(repo: MemoryRepo, path: str, old: Sha, tip: Sha) -> bool:
    """Whether ``path`` in the working tree and index still holds ``old``'s or ``tip``'s
    version (so gitmem left it there); False when a person has edited it since."""
    if _for_git(repo, (old, tip), path):
        entries = staged(repo.git, path)
        tree = [repo.store.entry(rev, path) for rev in (old, tip)]
        return any(entries == ([(0, e.sha)] if e else []) for e in tree)
    versions = [repo.store.read(f"{rev}:{path}") for rev in (old, tip)]
    blobs = {got.sha if got else None for got in versions}
    contents = {got.data if got else None for got in versions}
    entries = staged(repo.git, path)
    if not any(entries == ([(0, b)] if b else []) for b in blobs):
        return False
    data = safe_files.read(repo.root, path)
    if data in contents:
        return True
    # Checked out through .gitattributes (an encoding, line endings): what git would store.
    proc = repo.git.run("hash-object", "--", path, check=False) if data is not None else None
    return proc is not None and proc.returncode == 0 and proc.stdout.decode().strip() in blobs


# -- moving and following --------------------------------------------------------------
@dataclass(frozen=True)
class Moved:
    moved: bool  # the compare-and-swap succeeded
    behind: str | None = None  # why the working tree did not follow (the next command will)


def move_here(
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
    """Compare-and-swap ``branch`` from ``old`` to ``new``; when it is checked out here
    (``live``, the working-tree lock held), make ``paths`` follow, crash-safely. This
    worktree only: callers move a branch with ``linked_worktrees.move_and_follow``."""
    ref = f"refs/heads/{branch}"
    if live:
        check_index_lock(repo)
        record_intent(repo, branch, old, new, paths)
    try:
        moved = cas(repo, ref, new, old, reason) if reason else cas_fast(repo, ref, new, old)
    except GitmemError:
        if live and repo.store.resolve(ref) == old:
            clear_intent(repo)  # refused before anything moved: nothing to follow
        raise
    if not moved:
        if live:
            clear_intent(repo)
        return Moved(False)
    if branch == MAIN:
        saw(repo, old, new)
    if not live:
        return Moved(True)
    return Moved(True, follow(repo, new, paths, known))


def follow(
    repo: MemoryRepo, new: Sha, paths: list[str], known: dict[str, tuple[Sha, bytes]] | None
) -> str | None:
    """Bring ``paths`` to ``new`` and forget the intent; why not, when they could not."""
    try:
        sync_worktree(repo, new, paths, known)
    except (OSError, GitmemError) as exc:
        err = exc if isinstance(exc, GitmemError) else from_os_error(exc)
        if err is None:
            raise
        return (
            f"the commit landed but the working tree did not follow ({err}); "
            "the next gitmem command finishes it"
        )
    clear_intent(repo)
    return None


def check_index_lock(repo: MemoryRepo) -> None:
    """StaleLock before any move when git's ``index.lock`` stays: the index could not follow."""
    wait_for_locks([repo.git_dir / "index.lock"])


def check_locks(repo: MemoryRepo, branch: str, live: bool) -> None:
    """StaleLock before anything is written when a lock git needs to move ``branch`` (or,
    when it is checked out, to update the index) was left behind; a few stat calls."""
    files = lock_files(repo, f"refs/heads/{branch}")
    wait_for_locks([*files, repo.git_dir / "index.lock"] if live else files)


# -- the files ---------------------------------------------------------------------------
def dirty_paths(repo: MemoryRepo, paths: list[str]) -> list[str]:
    """Paths among ``paths`` that differ in the working tree or index from HEAD."""
    if not paths:
        return []
    out = repo.git.run(
        "--no-optional-locks",
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--",
        *paths,
    ).stdout.decode("utf-8", "surrogateescape")
    return sorted({item[3:] for item in out.split("\0") if len(item) > 3})


def card_is_clean(repo: MemoryRepo, path: str, blob: Sha | None, content: bytes | None) -> bool:
    """Whether ``path`` in the index and working tree equals HEAD's ``blob``.

    The fast check for one card on every edit: the index entry must be HEAD's blob
    at stage 0, and the file must hold exactly HEAD's bytes.
    """
    entries = staged(repo.git, path)
    if entries != ([(0, blob)] if blob else []):
        return False
    return safe_files.read(repo.root, path) == content


def ensure_clean(
    repo: MemoryRepo,
    paths: list[str],
    known: dict[str, tuple[Sha | None, bytes | None]] | None = None,
) -> None:
    """Refuse (DirtyCard) when a person has uncommitted edits to any of ``paths``.

    ``known`` gives HEAD's (blob, content) for paths the caller has read already,
    which lets the check run without starting ``git status``. A symlink on the way
    to any of them is refused (UnsafePath) before anything is written.
    """
    rest = []
    for path in paths:
        if known and path in known and card_is_clean(repo, path, *known[path]):
            continue
        if where_memory_lives(path):  # outside, a symlinked folder is git's (``_restore``)
            safe_files.stat(repo.root, path)  # UnsafePath through a symlinked folder
        rest.append(path)
    dirty = dirty_paths(repo, rest)
    if dirty:
        raise DirtyCard(
            f"uncommitted edits to {', '.join(dirty)}; commit or stash them first",
            hint="gitmem never writes over a person's uncommitted work",
        )


def sync_worktree(
    repo: MemoryRepo,
    commit: Sha,
    paths: list[str],
    known: dict[str, tuple[Sha, bytes]] | None = None,
) -> None:
    """Make ``paths`` in the working tree and index match ``commit`` (after a CAS moved
    HEAD); ``known``: the (blob, content) the caller just wrote."""
    for path in paths:  # git would replace a symlink where memory lives: refused instead
        st = safe_files.stat(repo.root, path) if where_memory_lives(path) else None
        if st is not None and (st.st_mode & 0o170000) == 0o120000 and not _checked_out(repo, path):
            raise UnsafePath(
                f"{path} is a symlink in the working tree; gitmem never follows one where it "
                "keeps memory",
                hint=f"replace it with a real file (git rm --cached {path!r}) and try again",
            )
    _update_index(repo, commit, paths, known or {})


def _checked_out(repo: MemoryRepo, path: str) -> bool:
    """Whether the symlink at ``path`` is the one git's staging area holds, as a checkout
    left it: git replaces it (never writing through it) as it follows a commit."""
    entries = staged_modes(repo.git, path)
    if len(entries) != 1 or entries[0][:2] != (0, LINK_MODE):
        return False
    return repo.store.read_blob(entries[0][2]) == os.fsencode(os.readlink(repo.root / path))


def _for_git(repo: MemoryRepo, revs: tuple[Sha, ...], path: str) -> bool:
    """Whether git rather than gitmem brings ``path`` to a commit: it is not where memory
    lives, and one of ``revs`` holds it as a symlink or a submodule, or the working tree
    does (a symlink)."""
    if where_memory_lives(path):
        return False
    for rev in revs:
        entry = repo.store.entry(rev, path)
        if entry is not None and entry.mode in (LINK_MODE, GITLINK_MODE):
            return True
    try:
        st = safe_files.stat(repo.root, path)
    except UnsafePath:
        return True  # a symlinked folder on the way: git's own checks decide
    return st is not None and (st.st_mode & 0o170000) == 0o120000


def _followed(repo: MemoryRepo, commit: Sha, path: str, known: Mapping[str, object]) -> bool:
    """Whether git brings ``path`` to ``commit``: it is there, or git holds it now. A name
    the path rule refuses (``cards/git~1/config``, brought by an older gitmem) is left out
    of a checkout git would refuse whole; ``gitmem status`` names it."""
    if path in known:
        return True
    if repo.store.entry(commit, path) is not None and path_rule.path_problem(path) is None:
        return True
    return bool(staged(repo.git, path))


def _update_index(
    repo: MemoryRepo, commit: Sha, paths: list[str], known: dict[str, tuple[Sha, bytes]]
) -> None:
    """git brings ``paths`` in the index and working tree to ``commit``: created, changed
    or deleted as there (a path neither has is left alone, as git would leave it). The
    index gets the committed blob as it is and git writes the file from it as a checkout
    does, so whatever .gitattributes says (an encoding, line endings, a filter) the
    person's ``git status`` is clean and their commit takes none of it (``git add`` of the
    file would store the filtered bytes instead)."""
    tracked = [p for p in paths if _followed(repo, commit, p, known)]
    if not tracked:
        return
    # No hooks: gitmem's post-checkout would wait for the lock held here.
    args = ["-c", "core.hooksPath=/dev/null", "--literal-pathspecs", "restore"]
    args += [f"--source={commit}", "--staged", "--worktree"]
    args += ["--pathspec-from-file=-", "--pathspec-file-nul"]
    listed = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in tracked)
    lock = repo.git_dir / "index.lock"
    deadline = time.monotonic() + 10 * LOCK_PATIENCE_S
    while True:
        proc = repo.git.run(*args, input=listed, check=False)
        if proc.returncode == 0:
            return
        err = proc.stderr.decode("utf-8", "replace")
        if not lock.exists():
            raise GitError(["git", *args], proc.returncode, err)
        wait_for_locks([lock])  # StaleLock if it stays; otherwise a person's git let go
        if time.monotonic() > deadline:
            raise StaleLock(str(lock))
