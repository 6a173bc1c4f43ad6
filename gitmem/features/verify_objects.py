"""What ``gitmem verify`` reads of main's tip: the objects of what the agent reads and what
trust rests on (cards, persona, synthesis, settings, signers), each hashed against its id,
so an object damaged on disk, or holding another object's bytes, is named, never passed."""

from __future__ import annotations

from collections.abc import Iterator

from gitmem.errors import CorruptObject, GitError, UnsafePath
from gitmem.features.verify_places import VerifyFinding
from gitmem.git import safe_files
from gitmem.git.formats import BLOB_MODE, EXEC_MODE, TREE_MODE, object_id, parse_tree
from gitmem.git.runner import Sha
from gitmem.memory import cards
from gitmem.memory.repo import MAIN, MemoryRepo

CHECKED = ("cards", "persona.md", "synthesis.md", "gitmem.toml", "allowed_signers")


def damaged(repo: MemoryRepo) -> list[VerifyFinding]:
    """A finding for each object of ``CHECKED`` on main git cannot read, or whose bytes
    are not the ones its id names (a folder's tree too: what is below it goes unread)."""
    tip = repo.store.resolve(f"refs/heads/{MAIN}^{{tree}}")
    if tip is None:
        return []
    files: list[tuple[str, Sha]] = []
    found = [_finding(repo, p, sha, why, "tree") for p, sha, why in _walk(repo, tip, "", files)]
    at = 0
    while at < len(files):  # one read of them all; on from the next when git dies on one
        try:
            for got in repo.store.resolved_all([sha for _, sha in files[at:]]):
                path, sha = files[at]
                if got is None or object_id(got.kind, got.data, len(sha) // 2) != sha:
                    found.append(_finding(repo, path, sha, _why(got is None), "blob"))
                at += 1
        except (CorruptObject, GitError):
            found.append(_finding(repo, *files[at], "git cannot read it", "blob"))
            at += 1
    return found


def _why(missing: bool) -> str:
    return (
        "git cannot read it (missing or damaged)"
        if missing
        else "its bytes are not the ones its id names (gitmem refuses them)"
    )


def _walk(
    repo: MemoryRepo, tree: Sha, prefix: str, files: list[tuple[str, Sha]]
) -> Iterator[tuple[str, Sha, str]]:
    """(path, id, why) of each damaged tree on the way; the files below into ``files``."""
    try:
        got = repo.store.resolved(tree)
    except (CorruptObject, GitError):
        yield prefix.rstrip("/") or ".", tree, "git cannot read it"
        return
    if got is None or got.kind != "tree" or object_id("tree", got.data, len(tree) // 2) != tree:
        yield prefix.rstrip("/") or ".", tree, _why(got is None)
        return
    for entry in parse_tree(got.data, len(tree) // 2):
        path = prefix + entry.name.decode("utf-8", "surrogateescape")
        if not prefix and path not in CHECKED:
            continue
        if entry.mode == TREE_MODE:
            yield from _walk(repo, entry.sha, f"{path}/", files)
        elif entry.mode in (BLOB_MODE, EXEC_MODE):  # a link or submodule: the commit's finding
            files.append((path, entry.sha))


def _finding(repo: MemoryRepo, path: str, sha: Sha, why: str, kind: str) -> VerifyFinding:
    card = cards.card_of(path)
    what = f"card {card}" if card else path
    loose = repo.store.common_dir / "objects" / sha[:2] / sha[2:]
    rel = loose.relative_to(repo.root) if loose.is_relative_to(repo.root) else loose
    here = kind == "blob" and loose.exists() and _intact_here(repo, path, sha)
    if here:
        action = (
            f"the working tree holds it intact: `rm -f {rel}` then "
            f"`git hash-object -w --no-filters -- {path}` writes it again (`git fsck --full` "
            "checks the rest)"
        )
    else:
        removed = f"`rm -f {rel}`, then " if loose.exists() else ""
        action = (
            f"`git fsck --full` shows the damage; {removed}copy it from a clone that has it: "
            f"`git -C CLONE cat-file {kind} {sha} | git hash-object -w -t {kind} --stdin`"
        )
    problem = f"main's {what} is object {sha[:12]}: {why}"
    return VerifyFinding("damaged-object", path, "", problem, action, path=path)


def _intact_here(repo: MemoryRepo, path: str, sha: Sha) -> bool:
    """Whether the file at ``path`` in the working tree holds exactly object ``sha``."""
    try:
        data = safe_files.read(repo.root, path)
    except (UnsafePath, OSError):
        return False
    return data is not None and object_id("blob", data, len(sha) // 2) == sha
