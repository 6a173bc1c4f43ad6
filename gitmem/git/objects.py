"""Reading and writing git objects without a process per object.

Reads go through one long-running ``git cat-file --batch`` (git-revise style).
Writes of blobs, trees and commits are serialised here and stored as loose
objects -- the exact bytes ``git hash-object -w`` would write -- so an edit costs
no process at all until the compare-and-swap ``update-ref`` that publishes it.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import re
import subprocess
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gitmem.errors import CorruptObject, GitError, UnsafePath
from gitmem.git import repo_format
from gitmem.git.runner import Git, Sha

TREE_MODE = b"40000"
BLOB_MODE = b"100644"
EXEC_MODE = b"100755"
LINK_MODE = b"120000"
GITLINK_MODE = b"160000"
_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_OBJECT_IN = re.compile(rb"[0-9a-f]{40,64}")


_TMP_PREFIX = "tmp_obj_gitmem_"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _named_in(err: str) -> str | None:
    m = _OBJECT_IN.search(err.encode())
    return m.group().decode() if m else None


@dataclass(frozen=True)
class TreeEntry:
    mode: bytes
    name: bytes
    sha: Sha

    @property
    def is_tree(self) -> bool:
        return self.mode == TREE_MODE


@dataclass(frozen=True, slots=True)
class GitObject:
    """One object as ``git cat-file --batch`` gives it: its id, its type and its bytes."""

    sha: Sha
    kind: str  # "blob", "tree", "commit" or "tag"
    data: bytes


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
        self._sha256 = repo_format.object_format(base / "config") == repo_format.SHA256
        self._raw_len = 32 if self._sha256 else 20
        self._proc: subprocess.Popen[bytes] | None = None
        self._trees: dict[str, tuple[list[TreeEntry], list[bytes]]] = {}
        self._root_of: dict[str, Sha] = {}  # a commit's full id -> its tree's (``_root``)
        # Small commits and blobs this store wrote, by id (ids name content: always right),
        # so what was just written is read back without a round trip to git.
        self._written: dict[str, tuple[str, bytes]] = {}
        self._replacing: bool | None = None  # whether refs/replace/ may exist (``_replaces``)

    # -- the object format ----------------------------------------------------
    @property
    def sha_bytes(self) -> int:
        """The length of an object id in bytes (as trees and the index file store it)."""
        return self._raw_len

    @property
    def zero_sha(self) -> Sha:
        """The all-zero id git reads as "no object" (``update-ref``'s "must not exist")."""
        return Sha("0" * (2 * self._raw_len))

    # -- reading ------------------------------------------------------------
    def _batch(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = self.git.popen("cat-file", "--batch")
        return self._proc

    def start(self) -> None:
        """Start ``git cat-file`` now (it is started on the first read otherwise): its
        start then overlaps whatever the caller does before that read."""
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
            return self._read_path(rev, path)
        got = self._cat(name)
        if got is None and _FULL_SHA.fullmatch(name):
            raise CorruptObject(name)
        if got is None and name.startswith("refs/") and self._ref_exists(name):
            raise CorruptObject(name.partition("^")[0], detail="the ref points at it")
        return got

    def resolved(self, name: str) -> GitObject | None:
        """The object ``name`` names as ``git cat-file --batch`` resolves it, ``REV:PATH``
        included (git's own lookup: a symlink's blob is the blob it gives), or None. For
        facts about history that compare object ids only, never to read a card through."""
        if "\n" in name:
            return None
        return self._cat(name)

    def _read_path(self, rev: str, path: str) -> GitObject | None:
        got = self._walk(rev, path, leaf=False)
        assert not isinstance(got, TreeEntry)
        return got

    def entry(self, rev: str, path: str) -> TreeEntry | None:
        """The tree entry of ``path`` in ``rev`` (its mode and object), or None when there
        is none: a symlink or submodule there is given, not refused (one on the way is)."""
        got = self._walk(rev, path, leaf=True)
        assert got is None or isinstance(got, TreeEntry)
        return got

    def _root(self, rev: str) -> GitObject | None:
        """``rev``'s tree. For a commit named by its full id the tree's id is kept: the
        next path read in that commit asks git nothing when the tree is parsed already
        (unless objects may be replaced, when git's answer is the one to take)."""
        known = self._root_of.get(rev)
        if known is not None and known in self._trees:
            return GitObject(known, "tree", b"")
        got = self.read(f"{rev}^{{tree}}")
        if got is not None and _FULL_SHA.fullmatch(rev) and not self._replaces():
            while len(self._root_of) >= 256:
                del self._root_of[next(iter(self._root_of))]
            self._root_of[rev] = got.sha
        return got

    def _walk(self, rev: str, path: str, leaf: bool) -> GitObject | TreeEntry | None:
        """``REV:PATH``'s object, or with ``leaf`` its tree entry."""
        got = self._root(rev)
        if got is None:
            if _FULL_SHA.fullmatch(rev):
                raise CorruptObject(rev, path)
            return None
        parts = path.strip("/").split("/")
        for depth, part in enumerate(parts):
            if got.kind != "tree":
                return None  # a file where a folder would be: no such path
            if got.sha not in self._trees:
                self._remember(got.sha, self._parse(got.data))
            entries = self._trees[got.sha][0]
            raw = part.encode("utf-8", "surrogateescape")
            entry = next((e for e in entries if e.name == raw), None)
            if entry is None:
                return None
            if leaf and depth == len(parts) - 1:
                return entry
            here = "/".join(parts[: depth + 1])
            if entry.mode in (LINK_MODE, GITLINK_MODE):
                what = "a symlink" if entry.mode == LINK_MODE else "a submodule"
                label = rev[:12] if _FULL_SHA.fullmatch(rev) else rev.removeprefix("refs/heads/")
                raise UnsafePath(
                    f"{here} is {what} in {label}; gitmem never follows one where it keeps memory",
                    hint=f"replace it with a real file or folder in a new commit (git rm {here!r})",
                )
            if entry.is_tree and entry.sha in self._trees and depth < len(parts) - 1:
                got = GitObject(entry.sha, "tree", b"")  # parsed already: no read
                continue
            got = self._cat(entry.sha, here)
            if got is None:
                raise CorruptObject(entry.sha, here)
        return got

    def _loose(self, name: str) -> GitObject | None:
        """Object ``name`` (a full id) read from its loose file, as git stores what was just
        written (no process needed for a few new commits); None when it is not loose here,
        or cannot be read so (then git reads it and says what is wrong), or when the
        repository replaces objects (``git replace``: git's answer may differ)."""
        if len(name) != 2 * self._raw_len or not _FULL_SHA.fullmatch(name) or self._replaces():
            return None
        try:
            with open(f"{self.objects_dir}/{name[:2]}/{name[2:]}", "rb") as fh:
                raw = zlib.decompress(fh.read())
            head, _, data = raw.partition(b"\0")
            kind, _, size = head.partition(b" ")
            if int(size) != len(data) or kind not in (b"blob", b"tree", b"commit", b"tag"):
                return None
        except (OSError, zlib.error, ValueError):
            return None
        return GitObject(Sha(name), kind.decode(), data)

    def _replaces(self) -> bool:
        """Whether replacement refs may exist (``refs/replace/``, loose or packed)."""
        if self._replacing is None:
            if os.environ.get("GIT_REPLACE_REF_BASE"):  # replacements kept elsewhere
                self._replacing = True
                return True
            base = self.objects_dir.parent
            packed = b""
            with contextlib.suppress(OSError):
                packed = (base / "packed-refs").read_bytes()
            self._replacing = (
                (base / "refs" / "replace").exists()
                or b" refs/replace/" in packed
                or (base / "reftable").exists()
            )
        return self._replacing

    def _cat(self, name: str, path: str | None = None) -> GitObject | None:
        kept = self._written.get(name)
        if kept is not None:
            return GitObject(Sha(name), kept[0], kept[1])
        loose = self._loose(name)  # (a failed open costs far less than a round trip to git)
        if loose is not None:
            return loose
        proc = self._batch()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline()
        except BrokenPipeError:
            header = b""
        if not header:  # git died: a damaged object is the usual reason
            err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
            code = proc.wait()
            self._proc = None
            named = _named_in(err)  # an object id in git's words, whatever their language
            if named:
                raise CorruptObject(named, path, "git cannot read it")
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
        return GitObject(Sha(parts[0].decode()), parts[1].decode(), got[:size])

    def _ref_exists(self, name: str) -> bool:
        """Whether the ref in ``refs/...^{commit}`` is set, read from the files (no process)."""
        ref = name.partition("^")[0]
        base = self.objects_dir.parent
        if (base / ref).is_file() or (self.git_dir / ref).is_file():
            return True
        try:
            packed = (base / "packed-refs").read_bytes()
        except FileNotFoundError:
            return False
        return any(line.endswith(b" " + ref.encode()) for line in packed.splitlines())

    def read_blob(self, name: str) -> bytes | None:
        got = self.read(name)
        return got.data if got and got.kind == "blob" else None

    def read_tree(self, name: str) -> list[TreeEntry]:
        return self._tree(name)[0]

    def _tree(self, name: str) -> tuple[list[TreeEntry], list[bytes]]:
        """A tree's entries in git order, with each entry's raw bytes (cached by id)."""
        cached = self._trees.get(name)
        if cached is not None:
            return cached
        got = self.read(name)
        if got is None or got.kind != "tree":
            return [], []
        parsed = self._parse(got.data)
        self._remember(got.sha, parsed)
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
            entries.append(
                TreeEntry(data[pos:sp], data[sp + 1 : nul], Sha(data[nul + 1 : end].hex()))
            )
            chunks.append(data[pos:end])
            pos = end
        return entries, chunks

    def resolve(self, ref: str) -> Sha | None:
        got = self.read(ref)
        return got.sha if got else None

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
        import hashlib

        raw = f"{kind} {len(data)}\0".encode() + data
        digest = (hashlib.sha256(raw) if self._sha256 else hashlib.sha1(raw)).hexdigest()
        folder = f"{self.objects_dir}/{digest[:2]}"
        path = f"{folder}/{digest[2:]}"
        if kind in ("commit", "blob") and len(data) <= 65536:
            while len(self._written) >= 16:
                del self._written[next(iter(self._written))]
            self._written[digest] = (kind, data)
        if os.path.exists(path):
            return Sha(digest)
        # The temporary file sits in objects/ itself, named with our pid: one folder to
        # look in for what a killed writer left (``clean_temporaries``).
        tmp = f"{self.objects_dir}/{_TMP_PREFIX}{os.getpid()}_{digest[2:10]}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o444)
        try:
            try:
                os.write(fd, zlib.compress(raw, 1))
            finally:
                os.close(fd)
            try:
                os.replace(tmp, path)
            except FileNotFoundError:
                os.makedirs(folder, exist_ok=True)
                os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)  # a full disk leaves no tmp_obj_* behind
            raise
        return Sha(digest)

    def clean_temporaries(self) -> None:
        """Remove what a writer killed half-way through ``write`` left (its pid is gone)."""
        try:
            names = [n for n in os.listdir(self.objects_dir) if n.startswith(_TMP_PREFIX)]
        except OSError:
            return
        for name in names:
            pid = name[len(_TMP_PREFIX) :].partition("_")[0]
            if pid.isdigit() and not _alive(int(pid)):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(self.objects_dir, name))

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

    def update_path(self, root: Sha | None, path: str, blob: Sha | TreeEntry | None) -> Sha | None:
        """The tree ``root`` with the file at ``path`` set to ``blob`` (None removes it; a
        ``TreeEntry`` puts that entry there as it is, a symlink or a submodule too).

        Returns None when the result is empty (git stores no empty subtrees). Only the
        changed entry is re-serialised: a 1,000-card folder costs one list splice.
        """
        head, _, rest = path.partition("/")
        entries, chunks = self._tree(root) if root else ([], [])
        name = head.encode()
        at = next((i for i, e in enumerate(entries) if e.name == name), None)
        entries, chunks = list(entries), list(chunks)
        old = entries[at] if at is not None else None
        if rest or isinstance(blob, str):  # removing a link, or setting an entry, writes none
            _refuse_link(head, old)
        if at is not None:
            del entries[at], chunks[at]
        new: TreeEntry | None = None
        if rest and blob is None and old is not None and not old.is_tree:
            new = old  # nothing to remove below a file
        elif rest:
            sub = self.update_path(old.sha if old and old.is_tree else None, rest, blob)
            new = TreeEntry(TREE_MODE, name, sub) if sub is not None else None
        else:
            new = _file_entry(name, old, blob)
        if new is not None:
            _insert(entries, chunks, new)
        return self._write_tree(entries, chunks) if entries else None

    def update_paths(
        self, root: Sha | None, changes: Mapping[str, Sha | TreeEntry | None]
    ) -> Sha | None:
        """``update_path`` for each of ``changes`` (path -> blob, None removes it), each
        changed tree written once instead of once per path: the same tree."""
        groups: dict[bytes, dict[str, Sha | TreeEntry | None]] = {}
        for path, blob in sorted(changes.items()):
            head, _, rest = path.partition("/")
            groups.setdefault(head.encode(), {})[rest] = blob
        entries, chunks = self._tree(root) if root else ([], [])
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
        entries, chunks = list(entries), list(chunks)
        for name, group in groups.items():
            old = named.get(name)
            if len(group) > 1 or "" not in group or isinstance(group[""], str):
                _refuse_link(name.decode(), old)
            if old is not None:
                at = entries.index(old)
                del entries[at], chunks[at]
            new: TreeEntry | None = None
            if "" not in group:
                sub = self.update_paths(old.sha if old is not None else None, group)
                new = TreeEntry(TREE_MODE, name, sub) if sub is not None else None
            else:
                new = _file_entry(name, old, group[""])
            if new is not None:
                _insert(entries, chunks, new)
        return self._write_tree(entries, chunks) if entries else None


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


def _insert(entries: list[TreeEntry], chunks: list[bytes], new: TreeEntry) -> None:
    """Put ``new`` (and its serialised form) where git sorts it."""
    i = bisect.bisect(entries, _sort_key(new), key=_sort_key)
    entries.insert(i, new)
    chunks.insert(i, _chunk(new))


def _not_found(header: bytes) -> bool:
    """True for ``<name> missing`` / ``<name> ambiguous``: read from the right, as the
    name is echoed verbatim and may itself hold spaces (``cards/sp ace.md missing``)."""
    return header.rstrip(b"\n").rpartition(b" ")[2] in (b"missing", b"ambiguous")


def _chunk(e: TreeEntry) -> bytes:
    return e.mode + b" " + e.name + b"\0" + bytes.fromhex(e.sha)
