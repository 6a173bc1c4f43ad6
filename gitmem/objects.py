"""Reading and writing git objects without a process per object.

Reads go through one long-running ``git cat-file --batch`` (git-revise style).
Writes of blobs, trees and commits are serialised here and stored as loose
objects -- the exact bytes ``git hash-object -w`` would write -- so an edit costs
no process at all until the compare-and-swap ``update-ref`` that publishes it.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import subprocess
import zlib
from dataclasses import dataclass
from pathlib import Path

from .errors import GitError
from .git import Git, Sha

TREE_MODE = b"40000"
BLOB_MODE = b"100644"


@dataclass(frozen=True)
class TreeEntry:
    mode: bytes
    name: bytes
    sha: Sha

    @property
    def is_tree(self) -> bool:
        return self.mode == TREE_MODE


def _sort_key(entry: TreeEntry) -> bytes:
    # git orders a tree as if directory names ended with "/".
    return entry.name + b"/" if entry.is_tree else entry.name


class ObjectStore:
    def __init__(self, git: Git, git_dir: Path) -> None:
        self.git = git
        self.git_dir = git_dir
        common = git_dir / "commondir"
        base = (git_dir / common.read_text().strip()).resolve() if common.exists() else git_dir
        self.objects_dir = base / "objects"
        config = base / "config"
        text = config.read_text("utf-8", "replace").lower() if config.exists() else ""
        self._sha256 = "objectformat = sha256" in text
        self._raw_len = 32 if self._sha256 else 20
        self._proc: subprocess.Popen[bytes] | None = None
        self._trees: dict[str, tuple[list[TreeEntry], list[bytes]]] = {}

    # -- reading ------------------------------------------------------------
    def _batch(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = self.git.popen("cat-file", "--batch")
        return self._proc

    def read(self, name: str) -> tuple[Sha, str, bytes] | None:
        """(sha, type, content) of any object name git resolves, or None if missing."""
        if "\n" in name:
            return None
        proc = self._batch()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline()
        except BrokenPipeError as exc:  # pragma: no cover - git died under us
            raise GitError(["git", "cat-file", "--batch"], -1, str(exc)) from exc
        if not header:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise GitError(["git", "cat-file", "--batch"], proc.wait(), err)
        if _not_found(header):
            return None
        parts = header.split()
        size = int(parts[2])
        data = proc.stdout.read(size + 1)[:size]
        return Sha(parts[0].decode()), parts[1].decode(), data

    def read_blob(self, name: str) -> bytes | None:
        got = self.read(name)
        return got[2] if got and got[1] == "blob" else None

    def read_tree(self, name: str) -> list[TreeEntry]:
        return self._tree(name)[0]

    def _tree(self, name: str) -> tuple[list[TreeEntry], list[bytes]]:
        """A tree's entries in git order, with each entry's raw bytes (cached by id)."""
        cached = self._trees.get(name)
        if cached is not None:
            return cached
        got = self.read(name)
        if got is None or got[1] != "tree":
            return [], []
        parsed = self._parse(got[2])
        self._remember(got[0], parsed)
        return parsed

    def _remember(self, sha: str, parsed: tuple[list[TreeEntry], list[bytes]]) -> None:
        # Trees are immutable: a small cache by id is always right. Oldest out first.
        while len(self._trees) >= 64:
            del self._trees[next(iter(self._trees))]
        self._trees[sha] = parsed

    def parse_tree(self, data: bytes) -> list[TreeEntry]:
        return self._parse(data)[0]

    def _parse(self, data: bytes) -> tuple[list[TreeEntry], list[bytes]]:
        entries: list[TreeEntry] = []
        chunks: list[bytes] = []
        pos, n = 0, self._raw_len
        while pos < len(data):
            sp = data.index(b" ", pos)
            nul = data.index(b"\0", sp)
            end = nul + 1 + n
            entries.append(TreeEntry(data[pos:sp], data[sp + 1 : nul], Sha(data[nul + 1 : end].hex())))
            chunks.append(data[pos:end])
            pos = end
        return entries, chunks

    def resolve(self, ref: str) -> Sha | None:
        got = self.read(ref)
        return got[0] if got else None

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.stdin:
                self._proc.stdin.close()
            self._proc.wait()
            for stream in (self._proc.stdout, self._proc.stderr):
                if stream:
                    stream.close()
            self._proc = None

    # -- writing ------------------------------------------------------------
    def write(self, kind: str, data: bytes) -> Sha:
        """Store a loose object as git would (temp file, then rename); its id."""
        raw = f"{kind} {len(data)}\0".encode() + data
        digest = (hashlib.sha256(raw) if self._sha256 else hashlib.sha1(raw)).hexdigest()
        folder = f"{self.objects_dir}/{digest[:2]}"
        path = f"{folder}/{digest[2:]}"
        if os.path.exists(path):
            return Sha(digest)
        tmp = f"{folder}/tmp_obj_{os.getpid()}_{digest[2:10]}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        try:
            fd = os.open(tmp, flags, 0o444)
        except FileNotFoundError:
            os.makedirs(folder, exist_ok=True)
            fd = os.open(tmp, flags, 0o444)
        try:
            os.write(fd, zlib.compress(raw, 1))
        finally:
            os.close(fd)
        os.replace(tmp, path)
        return Sha(digest)

    def write_tree(self, entries: list[TreeEntry]) -> Sha:
        ordered = sorted(entries, key=_sort_key)
        return self._write_tree(ordered, [_chunk(e) for e in ordered])

    def _write_tree(self, ordered: list[TreeEntry], chunks: list[bytes]) -> Sha:
        sha = self.write("tree", b"".join(chunks))
        self._remember(sha, (ordered, chunks))
        return sha

    def write_commit(
        self, tree: Sha, parents: list[Sha], author: str, committer: str, message: str
    ) -> Sha:
        lines = [f"tree {tree}", *(f"parent {p}" for p in parents)]
        lines += [f"author {author}", f"committer {committer}", "", message]
        text = "\n".join(lines)
        if not text.endswith("\n"):
            text += "\n"
        return self.write("commit", text.encode("utf-8"))

    def update_path(self, root: Sha | None, path: str, blob: Sha | None) -> Sha | None:
        """The tree ``root`` with the file at ``path`` set to ``blob`` (None removes it).

        Returns None when the result is empty (git stores no empty subtrees). Only the
        changed entry is re-serialised: a 1,000-card folder costs one list splice.
        """
        head, _, rest = path.partition("/")
        entries, chunks = self._tree(root) if root else ([], [])
        name = head.encode()
        at = next((i for i, e in enumerate(entries) if e.name == name), None)
        entries, chunks = list(entries), list(chunks)
        old = entries[at] if at is not None else None
        if at is not None:
            del entries[at], chunks[at]
        new: TreeEntry | None = None
        if rest and blob is None and old is not None and not old.is_tree:
            new = old  # nothing to remove below a file
        elif rest:
            sub = self.update_path(old.sha if old and old.is_tree else None, rest, blob)
            new = TreeEntry(TREE_MODE, name, sub) if sub is not None else None
        elif blob is not None:
            new = TreeEntry(BLOB_MODE, name, blob)
        elif old is not None and old.is_tree:
            new = old  # removing a file never removes a folder of the same name
        if new is not None:
            i = bisect.bisect(entries, _sort_key(new), key=_sort_key)
            entries.insert(i, new)
            chunks.insert(i, _chunk(new))
        return self._write_tree(entries, chunks) if entries else None


def _not_found(header: bytes) -> bool:
    """True for ``<name> missing`` / ``<name> ambiguous``: read from the right, as the
    name is echoed verbatim and may itself hold spaces (``cards/sp ace.md missing``)."""
    return header.rstrip(b"\n").rpartition(b" ")[2] in (b"missing", b"ambiguous")


def _chunk(e: TreeEntry) -> bytes:
    return e.mode + b" " + e.name + b"\0" + bytes.fromhex(e.sha)
