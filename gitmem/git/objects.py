"""git objects read through one long-running ``git cat-file --batch`` (git-revise style:
git handles packs, replace refs and reftable) and written through ``git hash-object -w``;
the records and their parsers are in ``formats``.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from gitmem.errors import CorruptObject, GitError, NotFound, UnsafePath
from gitmem.git.formats import BLOB_MODE as BLOB_MODE
from gitmem.git.formats import EXEC_MODE as EXEC_MODE
from gitmem.git.formats import GITLINK_MODE as GITLINK_MODE
from gitmem.git.formats import LINK_MODE as LINK_MODE
from gitmem.git.formats import TREE_MODE as TREE_MODE
from gitmem.git.formats import Commit as Commit
from gitmem.git.formats import GitObject as GitObject
from gitmem.git.formats import TreeEntry as TreeEntry
from gitmem.git.formats import commit_object, object_id, parse_commit, tree_line, tree_order
from gitmem.git.formats import parse_tree as parse_tree
from gitmem.git.runner import Git, Sha

_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_OBJECT_IN = re.compile(rb"[0-9a-f]{40,64}")
_GROUP = 256  # names asked at once (256 full ids with ``:cards/<slug>.md``: < 64 KiB)


WRITE_BATCH = 400  # objects a round trip writes: their ids fit git's pipe (64 KiB), no deadlock


class ObjectStore:
    def __init__(self, git: Git, git_dir: Path) -> None:
        self.git = git
        self.git_dir = git_dir
        common = git_dir / "commondir"
        base = (git_dir / common.read_text().strip()).resolve() if common.exists() else git_dir
        self.common_dir = base  # where refs, packed-refs and their locks live
        self._raw_len: int | None = None  # (``sha_bytes``)
        self._proc: subprocess.Popen[bytes] | None = None
        self._writers: dict[str, subprocess.Popen[bytes]] = {}  # (``write``)
        # Parsed trees by id (ids name content: always right); reading many paths of one
        # commit, as the index does, parses its cards/ tree once.
        self._trees: dict[str, list[TreeEntry]] = {}

    # -- the object format ----------------------------------------------------
    @property
    def sha_bytes(self) -> int:
        """The length of an object id in bytes (as trees store it): sha1 20, sha256 32."""
        if self._raw_len is None:
            fmt = self.git.out("rev-parse", "--show-object-format")
            self._raw_len = 32 if fmt == "sha256" else 20
        return self._raw_len

    @property
    def zero_sha(self) -> Sha:
        """The all-zero id git reads as "no object" (``update-ref``'s "must not exist")."""
        return Sha("0" * (2 * self.sha_bytes))

    # -- reading ------------------------------------------------------------
    def _batch(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = self.git.popen("cat-file", "--batch")
        return self._proc

    def start(self) -> None:
        """Start ``git cat-file`` now (it is started on the first read otherwise)."""
        self._batch()

    def read(self, name: str) -> GitObject | None:
        """The object a name names (sha, kind, data), or None when it names nothing.

        ``REV:PATH`` is resolved here, one tree at a time, not by git: a symlink or a
        submodule on the way is refused (UnsafePath), and an object that a tree names
        but git cannot read is an error (CorruptObject), never "no such file". A full
        sha must exist: it came from a tree, a commit or a ref.
        """
        if "\n" in name:
            return None
        rev, colon, path = name.partition(":")
        if colon and rev and path:
            got = self._walk(rev, path, leaf=False)
            assert not isinstance(got, TreeEntry)
            return got
        got = self._cat(name)
        if got is None and _FULL_SHA.fullmatch(name):
            raise CorruptObject(name)
        if got is None and name.startswith("refs/"):
            ref = name.partition("^")[0]
            if self.git.run("rev-parse", "--verify", "-q", ref, check=False).returncode == 0:
                raise CorruptObject(ref, detail="the ref points at it")
        return got

    def resolved(self, name: str) -> GitObject | None:
        """The object ``name`` names as ``git cat-file --batch`` resolves it, ``REV:PATH``
        included (git's own lookup: a symlink's blob is the blob it gives), or None. For
        facts about history that compare object ids only, never to read a card through."""
        if "\n" in name:
            return None
        return self._cat(name)

    def entry(self, rev: str, path: str) -> TreeEntry | None:
        """The tree entry of ``path`` in ``rev`` (its mode and object), or None when there
        is none: a symlink or submodule there is given, not refused (one on the way is)."""
        got = self._walk(rev, path, leaf=True)
        assert got is None or isinstance(got, TreeEntry)
        return got

    def _walk(self, rev: str, path: str, leaf: bool) -> GitObject | TreeEntry | None:
        """``REV:PATH``'s object, or with ``leaf`` its tree entry."""
        root = self.read(f"{rev}^{{tree}}")
        if root is None:
            if _FULL_SHA.fullmatch(rev):
                raise CorruptObject(rev, path)
            return None
        entries = parse_tree(
            root.data, len(root.sha) // 2
        )  # (not kept: a replace ref may change it)
        parts = path.strip("/").split("/")
        for depth, part in enumerate(parts):
            raw = part.encode("utf-8", "surrogateescape")
            entry = next((e for e in entries if e.name == raw), None)
            last = depth == len(parts) - 1
            if entry is None or (leaf and last):
                return entry
            here = "/".join(parts[: depth + 1])
            if entry.mode in (LINK_MODE, GITLINK_MODE):
                what = "a symlink" if entry.mode == LINK_MODE else "a submodule"
                label = rev[:12] if _FULL_SHA.fullmatch(rev) else rev.removeprefix("refs/heads/")
                raise UnsafePath(
                    f"{here} is {what} in {label}; gitmem never follows one where it keeps memory",
                    hint=f"replace it with a real file or folder in a new commit (git rm {here!r})",
                )
            if not last and not entry.is_tree:
                return None  # a file where a folder would be: no such path
            if not last and entry.sha in self._trees:
                entries = self._trees[entry.sha]
                continue
            got = self._cat(entry.sha, here)
            if got is None:
                raise CorruptObject(entry.sha, here)
            if object_id(got.kind, got.data, len(entry.sha) // 2) != entry.sha:  # (other bytes)
                raise CorruptObject(entry.sha, here, "its bytes are not the ones its id names")
            if last:
                return got
            entries = self._remember(got.sha, got.data) if got.kind == "tree" else []
        raise AssertionError("unreachable: the last part returns")

    def resolved_all(self, names: Sequence[str]) -> Iterator[GitObject | None]:
        """``resolved`` of each of ``names``, asked a group at a time (one round trip per
        group, not per object: the index's stale marks read thousands)."""
        for at in range(0, len(names), _GROUP):
            group = [n if "\n" not in n else "" for n in names[at : at + _GROUP]]
            proc = self._batch()
            assert proc.stdin is not None
            # a group's names fit in the pipe: written whole before its answers are read
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.write(b"".join(_asked(n) for n in group if n))
                proc.stdin.flush()
            yield from [self._answer(proc, None) if n else None for n in group]

    def _cat(self, name: str, path: str | None = None) -> GitObject | None:
        proc = self._batch()
        assert proc.stdin is not None
        try:
            proc.stdin.write(_asked(name))
            proc.stdin.flush()
        except BrokenPipeError:
            pass  # (the reply's absence says git died)
        return self._answer(proc, path)

    def _answer(self, proc: subprocess.Popen[bytes], path: str | None) -> GitObject | None:
        assert proc.stdout is not None
        try:
            header = proc.stdout.readline()
        except BrokenPipeError:
            header = b""
        if not header:  # git died: a damaged object is the usual reason
            err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
            code = proc.wait()
            self._proc = None
            named = _OBJECT_IN.search(err.encode())  # an id in git's words, in any language
            if named:
                raise CorruptObject(named.group().decode(), path, "git cannot read it")
            raise GitError(["git", "cat-file", "--batch"], code, err)
        if _not_found(header):
            return None
        parts = header.rsplit(b" ", 2)
        if len(parts) != 3:
            raise GitError(["git", "cat-file", "--batch"], 0, f"unexpected reply {header!r}")
        size = int(parts[2])
        got = proc.stdout.read(size + 1)
        if len(got) != size + 1 or got[size:] != b"\n":  # git died inside the object
            proc.kill()  # (its stderr is not waited for: git may not have ended)
            proc.wait()
            self._proc = None
            raise CorruptObject(parts[0].decode(), path, "git could read only part of it")
        self._raw_len = len(parts[0]) // 2  # (the format, learnt without asking git)
        return GitObject(Sha(parts[0].decode()), parts[1].decode(), got[:size])

    def read_commit(self, rev: str) -> Commit:
        """The commit ``rev`` names (NotFound when it names none)."""
        got = self.read(f"{rev}^{{commit}}")
        if got is None:
            raise NotFound(f"no commit {rev!r}")
        return parse_commit(got.sha, got.data)

    def read_blob(self, name: str) -> bytes | None:
        """A blob's bytes (None when ``name`` names no blob); asked by its id, bytes that do
        not hash to it are refused (CorruptObject), as a read through a path refuses them."""
        got = self.read(name)
        if got is None or got.kind != "blob":
            return None
        if got.sha == name and object_id(got.kind, got.data, len(name) // 2) != name:
            raise CorruptObject(name, None, "its bytes are not the ones its id names")
        return got.data

    def read_tree(self, name: str) -> list[TreeEntry]:
        """A tree's entries in git order ([] when ``name`` names no tree)."""
        cached = self._trees.get(name)
        if cached is not None:
            return cached
        got = self.read(name)
        if got is None or got.kind != "tree":
            return []
        return self._remember(got.sha, got.data)

    def _remember(self, sha: str, data: bytes) -> list[TreeEntry]:
        while len(self._trees) >= 64:  # oldest out first
            del self._trees[next(iter(self._trees))]
        entries = self._trees[sha] = parse_tree(data, len(sha) // 2)
        return entries

    def resolve(self, ref: str) -> Sha | None:
        got = self.read(ref)
        return got.sha if got else None

    def close(self) -> None:
        for proc in [self._proc, *self._writers.values()]:
            if proc is not None:
                proc.communicate()  # (closes its pipes, waits for it)
        self._proc, self._writers = None, {}

    # -- writing ------------------------------------------------------------
    def write(self, kind: str, data: bytes) -> Sha:
        """Store an object through ``git hash-object -w``; its id."""
        # One long-running git per kind: a process per object puts an edit over its budget
        # (<= 1x git add + git commit: benchmarks/bench_object_writer.py).
        return self._write_batch(kind, [data])[0]

    def write_many(self, kind: str, datas: list[bytes]) -> list[Sha]:
        """``write`` of each of ``datas``, many to one round trip with git."""
        out: list[Sha] = []
        for at in range(0, len(datas), WRITE_BATCH):
            out += self._write_batch(kind, datas[at : at + WRITE_BATCH])
        return out

    def _write_batch(self, kind: str, datas: list[bytes]) -> list[Sha]:
        proc = self._writers.get(kind)
        if proc is None or proc.poll() is not None:
            args = ("hash-object", "-w", "--no-filters", "-t", kind, "--stdin-paths")
            proc = self._writers[kind] = self.git.popen(*args)
        assert proc.stdin is not None and proc.stdout is not None
        tmps = [self.git_dir / "gitmem" / f"object.{os.getpid()}.{i}" for i in range(len(datas))]
        try:
            tmps[0].parent.mkdir(exist_ok=True)
            for tmp, data in zip(tmps, datas, strict=True):
                tmp.write_bytes(data)
            names = b"".join(os.fsencode(os.path.relpath(t, self.git.cwd)) + b"\n" for t in tmps)
            proc.stdin.write(names)
            proc.stdin.flush()
            lines = [proc.stdout.readline() for _ in tmps]
        except BrokenPipeError:
            lines = [b""]
        finally:
            for tmp in tmps:
                tmp.unlink(missing_ok=True)
        if not all(lines):
            err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
            raise GitError(["git", "hash-object", "-w", "--stdin-paths"], proc.wait(), err)
        return [Sha(line.decode().strip()) for line in lines]

    def write_tree(self, entries: list[TreeEntry]) -> Sha:
        ordered = sorted(entries, key=tree_order)
        sha = self.write("tree", b"".join(tree_line(e) for e in ordered))
        self._trees[sha] = ordered
        return sha

    def write_commit(
        self, tree: Sha, parents: list[Sha], author: str, committer: str, message: str
    ) -> Sha:
        return self.write("commit", commit_object(tree, parents, author, committer, message))

    def update_path(self, root: Sha | None, path: str, blob: Sha | TreeEntry | None) -> Sha | None:
        """The tree ``root`` with the file at ``path`` set to ``blob`` (None removes it; a
        ``TreeEntry`` puts that entry there as it is, a symlink or a submodule too).

        Returns None when the result is empty (git stores no empty subtrees).
        """
        head, _, rest = path.partition("/")
        entries = list(self.read_tree(root)) if root else []
        name = head.encode()
        old = next((e for e in entries if e.name == name), None)
        if rest or isinstance(blob, str):  # removing a link, or setting an entry, writes none
            _refuse_link(head, old)
        if old is not None:
            entries.remove(old)
        new: TreeEntry | None = None
        if rest and blob is None and old is not None and not old.is_tree:
            new = old  # nothing to remove below a file
        elif rest:
            sub = self.update_path(old.sha if old and old.is_tree else None, rest, blob)
            new = TreeEntry(TREE_MODE, name, sub) if sub is not None else None
        else:
            new = _file_entry(name, old, blob)
        if new is not None:
            entries.append(new)
        return self.write_tree(entries) if entries else None

    def update_paths(
        self, root: Sha | None, changes: Mapping[str, Sha | TreeEntry | None]
    ) -> Sha | None:
        """``update_path`` for each of ``changes`` (path -> blob, None removes it), each
        changed tree written once instead of once per path: the same tree."""
        groups: dict[bytes, dict[str, Sha | TreeEntry | None]] = {}
        for path, blob in sorted(changes.items()):
            head, _, rest = path.partition("/")
            groups.setdefault(head.encode(), {})[rest] = blob
        entries = list(self.read_tree(root)) if root else []
        named = {e.name: e for e in entries}
        for name, group in groups.items():
            old = named.get(name)
            if ("" in group and len(group) > 1) or (
                "" not in group and old is not None and not old.is_tree
            ):
                # a file and paths below it at one name: one path after another
                for path, blob in sorted(changes.items()):
                    root = self.update_path(root, path, blob)
                return root
        for name, group in groups.items():
            old = named.get(name)
            if len(group) > 1 or "" not in group or isinstance(group[""], str):
                _refuse_link(name.decode(), old)
            if old is not None:
                entries.remove(old)
            new: TreeEntry | None = None
            if "" not in group:
                sub = self.update_paths(old.sha if old is not None else None, group)
                new = TreeEntry(TREE_MODE, name, sub) if sub is not None else None
            else:
                new = _file_entry(name, old, group[""])
            if new is not None:
                entries.append(new)
        return self.write_tree(entries) if entries else None


def _file_entry(
    name: bytes, old: TreeEntry | None, blob: Sha | TreeEntry | None
) -> TreeEntry | None:
    """The entry a file at ``name`` becomes (``blob`` None removes it)."""
    if isinstance(blob, TreeEntry):
        return TreeEntry(blob.mode, name, blob.sha)
    if blob is not None:
        keep = old is not None and old.mode == EXEC_MODE  # an executable card stays one
        return TreeEntry(EXEC_MODE if keep else BLOB_MODE, name, blob)
    if old is not None and old.is_tree:
        return old  # removing a file never removes a folder of the same name
    return None


def _refuse_link(head: str, old: TreeEntry | None) -> None:
    """UnsafePath when the entry a write goes through is a symlink or a submodule."""
    if old is not None and old.mode in (LINK_MODE, GITLINK_MODE):
        what = "a symlink" if old.mode == LINK_MODE else "a submodule"
        raise UnsafePath(
            f"{head} is {what} in the tree gitmem writes on; it never writes through one",
            hint=f"replace it with a real file or folder in a new commit (git rm {head!r})",
        )


def _asked(name: str) -> bytes:
    return name.encode("utf-8", "surrogateescape") + b"\n"


def _not_found(header: bytes) -> bool:
    """True for ``<name> missing`` / ``<name> ambiguous``: read from the right, as the
    name is echoed verbatim and may itself hold spaces (``cards/sp ace.md missing``)."""
    return header.rstrip(b"\n").rpartition(b" ")[2] in (b"missing", b"ambiguous")
