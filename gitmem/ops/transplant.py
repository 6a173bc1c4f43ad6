"""Carrying the changes between two commits onto another tip, file by file, with plumbing.

``transplant(repo, tip, [(a, b)])`` returns the tree of ``tip`` with the change
from ``a`` to ``b`` applied: a cherry-pick when ``a`` is ``b``'s parent, a revert
when the pair is reversed. Files the tip left alone take ``b``'s version; files
changed on both sides go through ``git merge-file``; a clash raises Conflict
naming the file. Nothing touches the working tree or the index.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable

from gitmem.errors import Conflict, GitError, UnsafePath
from gitmem.git.formats import BLOB_MODE, EXEC_MODE, LINK_MODE, TreeEntry
from gitmem.git.runner import Sha
from gitmem.memory.repo import MemoryRepo

# Append-only files (DESIGN §2): both sides' lines are kept, as .gitattributes says.
UNION_PREFIXES = ("sessions/", "logs/")


def merge_contents(
    repo: MemoryRepo, ours: bytes, base: bytes, theirs: bytes, *options: str
) -> tuple[int, bytes]:
    """``git merge-file -p`` over three contents: (exit status, merged bytes).

    The status is the number of conflicts (0: clean); a negative one is an error.
    """
    with tempfile.TemporaryDirectory(prefix="gitmem-merge-") as tmp:
        files = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = os.path.join(tmp, name)
            with open(path, "wb") as fh:
                fh.write(data)
            files.append(path)
        proc = repo.git.run("merge-file", "-p", *options, *files, check=False)
    if proc.returncode < 0 or proc.returncode > 127:
        raise GitError(["git", "merge-file"], proc.returncode, proc.stderr.decode())
    return proc.returncode, proc.stdout


def merge_text(repo: MemoryRepo, ours: bytes, base: bytes, theirs: bytes, label: str) -> bytes:
    """Three-way merge of one file's contents; Conflict if both sides changed the same lines."""
    union = ["--union"] if label.startswith(UNION_PREFIXES) and label.endswith(".jsonl") else []
    status, merged = merge_contents(repo, ours, base, theirs, *union)
    if status != 0:
        raise Conflict(f"{label} was changed on both sides; the change does not apply cleanly")
    return merged


def changed_paths(repo: MemoryRepo, a: Sha, b: Sha) -> list[str]:
    out = repo.git.run("diff-tree", "-r", "-z", "--no-renames", "--name-only", a, b)
    return [p for p in out.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


# How a file the tip changed too takes a change: (path, base, ours, theirs) -> its content.
Settle = Callable[[str, bytes | None, bytes | None, bytes | None], bytes | None]


def transplant(
    repo: MemoryRepo, tip: Sha, pairs: list[tuple[Sha | None, Sha | None]]
) -> tuple[Sha, list[str]]:
    """The tree of ``tip`` with each pair's change (from, to) applied in order; touched paths."""
    return apply_changes(repo, tip, pairs, lambda *f: merge_changed(repo, *f))


def merge_changed(
    repo: MemoryRepo, path: str, base: bytes | None, ours: bytes | None, theirs: bytes | None
) -> bytes:
    """A file both sides changed, merged line by line (Conflict when one removed it)."""
    if ours is None or theirs is None:
        raise Conflict(f"{path} was changed on one side and removed on the other")
    return merge_text(repo, ours, base or b"", theirs, path)


def apply_changes(
    repo: MemoryRepo, tip: Sha, pairs: list[tuple[Sha | None, Sha | None]], settle: Settle
) -> tuple[Sha, list[str]]:
    """The tree of ``tip`` with each pair's change (from, to) applied in order; touched paths.

    A file takes the change's end where the tip holds its start (or its end already);
    one the tip changed otherwise is ``settle(path, base, ours, theirs)``: base the
    start's version, ours the tip's (as the pairs before left it), theirs the end's.
    None stands for the empty tree (written only when a pair needs it) and for a file
    that is not there. Files are compared by their tree entries, so a mode is carried
    like a content, and a symlink or submodule is never read: a change may take one
    away (a revert of the commit that made it), never bring one in.
    """
    root = repo.store.read(f"{tip}^{{tree}}")
    tree: Sha | None = root.sha if root else None
    current: dict[str, TreeEntry | None] = {}
    touched: list[str] = []
    for a, b in pairs:
        ends = [c or repo.store.write_tree([]) for c in (a, b)]
        for path in changed_paths(repo, *ends):
            if path not in current:
                current[path] = _file(repo, tip, path)
                touched.append(path)
            base = _file(repo, a, path) if a else None
            theirs = _file(repo, b, path) if b else None
            current[path] = _applied(repo, path, base, current[path], theirs, settle)
    for path in touched:
        tree = repo.store.update_path(tree, path, current[path])
    return tree or repo.store.write_tree([]), touched


_FILE_MODES = (BLOB_MODE, EXEC_MODE)


def _file(repo: MemoryRepo, rev: str, path: str) -> TreeEntry | None:
    """``path``'s entry in ``rev``; None for none, or for a folder (its files are paths too)."""
    entry = repo.store.entry(rev, path)
    return None if entry is None or entry.is_tree else entry


def _applied(
    repo: MemoryRepo,
    path: str,
    base: TreeEntry | None,
    ours: TreeEntry | None,
    theirs: TreeEntry | None,
    settle: Settle,
) -> TreeEntry | None:
    """What ``path`` becomes when the change base -> theirs is applied onto ours."""
    odd = [e for e in (base, ours, theirs) if e is not None and e.mode not in _FILE_MODES]
    if odd and _same(ours, base):
        if theirs is not None and theirs.mode not in _FILE_MODES:
            what = "a symlink" if theirs.mode == LINK_MODE else "a submodule"
            raise UnsafePath(f"{path} would become {what}; gitmem never brings one where it "
                             "keeps memory")  # fmt: skip
        return theirs
    if odd and not _same(ours, theirs):
        raise Conflict(f"{path} was changed since, and one side holds a symlink or submodule")
    if odd:
        return ours
    mode = _mode(base, ours, theirs)
    if _sha(ours) == _sha(base):
        data = theirs.sha if theirs else None
    elif _sha(ours) == _sha(theirs):
        data = ours.sha if ours else None
    else:
        merged = settle(path, _read(repo, base), _read(repo, ours), _read(repo, theirs))
        data = repo.store.write("blob", merged) if merged is not None else None
    return TreeEntry(mode, b"", data) if data is not None else None


def _mode(base: TreeEntry | None, ours: TreeEntry | None, theirs: TreeEntry | None) -> bytes:
    """A file's mode merged as its content is: ours where the tip changed it, else theirs."""
    if ours is not None and (base is None or ours.mode != base.mode):
        return ours.mode
    return theirs.mode if theirs is not None else BLOB_MODE


def _same(one: TreeEntry | None, other: TreeEntry | None) -> bool:
    return (one and (one.mode, one.sha)) == (other and (other.mode, other.sha))


def _sha(entry: TreeEntry | None) -> Sha | None:
    return entry.sha if entry else None


def _read(repo: MemoryRepo, entry: TreeEntry | None) -> bytes | None:
    return repo.store.read_blob(entry.sha) if entry else None
