"""Moving refs with compare-and-swap, and keeping a checked-out working tree in step."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from .errors import DirtyCard, GitError
from .git import Sha
from .gitindex import restage, staged
from .reftx import lost_race
from .repo import MemoryRepo


def zero(repo: MemoryRepo) -> str:
    return "0" * (64 if repo.store._sha256 else 40)


def cas(repo: MemoryRepo, ref: str, new: Sha, old: Sha | None, reason: str) -> bool:
    """Point ``ref`` at ``new`` only if it still points at ``old``; False if someone moved it."""
    proc = repo.git.run("update-ref", "-m", reason, ref, new, old or zero(repo), check=False)
    if proc.returncode == 0:
        return True
    err = proc.stderr.decode("utf-8", "replace")
    if lost_race(err):
        return False
    raise GitError(["git", "update-ref", ref], proc.returncode, err)


def cas_fast(repo: MemoryRepo, ref: str, new: Sha, old: Sha | None) -> bool:
    """``cas`` through the repo's long-running update-ref (reflog reason "gitmem write")."""
    return repo.ref_tx.cas(ref, new, old or zero(repo))


def checked_out(repo: MemoryRepo, branch: str) -> bool:
    return repo.head_branch() == branch and (repo.root / ".git").exists()


@contextlib.contextmanager
def worktree_guard(repo: MemoryRepo, branch: str) -> Iterator[bool]:
    """Hold the working-tree lock while ``branch`` is the checked-out one; yields whether it is."""
    if not checked_out(repo, branch):
        yield False
        return
    with repo.lock("worktree"):
        yield checked_out(repo, branch)


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


def card_is_clean(
    repo: MemoryRepo, path: str, blob: Sha | None, content: bytes | None
) -> bool | None:
    """Whether ``path`` in the index and working tree equals HEAD's ``blob`` (None: ask git).

    The fast check for one card on every edit: the index entry must be HEAD's blob
    at stage 0, and the file must hold exactly HEAD's bytes.
    """
    entries = staged(repo.git_dir / "index", path, 32 if repo.store._sha256 else 20)
    if entries is None:
        return None
    if entries != ([(0, blob)] if blob else []):
        return False
    try:
        on_disk: bytes | None = (repo.root / path).read_bytes()
    except FileNotFoundError:
        on_disk = None
    except OSError:
        return None
    return on_disk == content


def ensure_clean(
    repo: MemoryRepo,
    paths: list[str],
    known: dict[str, tuple[Sha | None, bytes | None]] | None = None,
) -> None:
    """Refuse (DirtyCard) when a person has uncommitted edits to any of ``paths``.

    ``known`` gives HEAD's (blob, content) for paths the caller has read already,
    which lets the check run without starting ``git status``.
    """
    rest = []
    for path in paths:
        if known and path in known and card_is_clean(repo, path, *known[path]):
            continue
        rest.append(path)
    dirty = dirty_paths(repo, rest)
    if dirty:
        raise DirtyCard(
            f"uncommitted edits to {', '.join(dirty)}; commit or stash them first",
            hint="gitmem never writes over a person's uncommitted work",
        )


def _remove(root: Path, path: str) -> None:
    """Delete a file of the working tree, and the folders it leaves empty (as git does)."""
    target = root / path
    with contextlib.suppress(FileNotFoundError):
        target.unlink()
    for folder in target.parents:
        if folder == root or root not in folder.parents:
            break
        try:
            folder.rmdir()
        except OSError:
            break  # not empty, or gone


def sync_worktree(
    repo: MemoryRepo,
    commit: Sha,
    paths: list[str],
    known: dict[str, tuple[Sha, bytes]] | None = None,
) -> None:
    """Make ``paths`` in the working tree and index match ``commit`` (after a CAS moved HEAD).

    ``known`` gives the (blob, content) the caller just wrote, saving a read.
    """
    updates: dict[str, tuple[str, os.stat_result]] = {}
    contents: dict[str, tuple[Sha, bytes]] = {}
    removed = False
    for path in paths:
        got = (
            (known[path][0], "blob", known[path][1])
            if known and path in known
            else repo.store.read(f"{commit}:{path}")
        )
        if got is None or got[1] != "blob":
            removed = True
            _remove(repo.root, path)
        else:
            contents[path] = (got[0], got[2])
    # Deletions first: a file may take the place of a folder this commit emptied.
    for path, (blob, data) in contents.items():
        target = repo.root / path
        if target.is_dir():
            with contextlib.suppress(OSError):
                target.rmdir()  # an empty folder left behind; a full one makes the write fail
        tmp = target.with_name(f".{target.name}.gitmem-{os.getpid()}")
        try:
            tmp.write_bytes(data)
        except FileNotFoundError:  # a new folder; no mkdir otherwise (it costs like a create)
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(data)
        os.replace(tmp, target)
        updates[path] = (blob, target.stat())
    sha_len = 32 if repo.store._sha256 else 20
    if not removed and restage(repo.git_dir / "index", updates, sha_len):
        return  # the common case: no git process at all
    for attempt in range(50):
        proc = repo.git.run("update-index", "-q", "--add", "--remove", "--", *paths, check=False)
        if proc.returncode == 0:
            return
        if b"index.lock" not in proc.stderr:
            raise GitError(["git", "update-index"], proc.returncode, proc.stderr.decode())
        time.sleep(0.01 * (attempt + 1))
