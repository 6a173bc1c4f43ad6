"""The memory tool's ``/memories`` tree, read from the ``cards/`` tree of one commit.

The SDK's ``BetaLocalFilesystemMemoryTool`` asks a directory on disk: does a path
exist, is it a file or a directory, how big is it, where does it resolve to.
``Snapshot`` answers the same questions from git objects so ``GitMemoryTool`` can
give the model the very same strings. Resolution follows ``os.path.realpath``:
``.`` and empty parts vanish, ``..`` pops, symlinks committed into ``cards/`` are
followed, and a path that ends up outside ``/memories`` is refused with the SDK's
message. What git cannot know (an absolute symlink target, a directory's size
on disk) is decided here: absolute targets escape, directories are 4096 bytes.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote

from anthropic.tools import ToolError

from gitmem.errors import GitmemError
from gitmem.git.objects import ObjectStore
from gitmem.git.runner import Sha
from gitmem.memory import path_rule
from gitmem.memory.cards import KEEP

ROOT = "/memories"
CARDS = "cards"
DIR_SIZE = 4096  # what ext4 reports for a directory: git trees have no size
MAX_NAME_BYTES = 255
MAX_HOPS = 40  # symlinks followed in one resolution, as the kernel's ELOOP limit
MODE_LINK = b"120000"
MODE_SUBMODULE = b"160000"
LINE_BREAKS = ("\n", "\r", "\u2028", "\u2029")

Parts = tuple[str, ...]


@dataclass(frozen=True)
class Node:
    mode: bytes
    sha: Sha

    @property
    def kind(self) -> str:
        if self.mode == MODE_LINK:
            return "link"
        return "other" if self.mode == MODE_SUBMODULE else "file"


def os_error(code: int) -> ToolError:
    """The text the SDK's runner shows for an ``OSError`` its local tool lets escape."""
    cls = {errno.ENOTDIR: NotADirectoryError}.get(code, OSError)
    return ToolError(repr(cls(code, os.strerror(code))))


def format_file_size(size: int) -> str:
    """Sizes as the SDK prints them in a directory listing: 0B, 12B, 4K, 1.5M."""
    if size == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    i = min((size.bit_length() - 1) // 10, len(units) - 1)
    value = size / (1024**i)
    return f"{int(value)}{units[i]}" if value == int(value) else f"{value:.1f}{units[i]}"


def _url_traversal(path: str) -> bool:
    """True when percent-decoding ``path`` would add ``..`` parts, slashes or NULs."""
    decoded = path
    for _ in range(3):  # %252e%252e decodes twice
        step = unquote(decoded)
        if step == decoded:
            break
        decoded = step
    if decoded == path:
        return False
    return (
        ".." in decoded.split("/")
        or decoded.count("/") != path.count("/")
        or decoded.count("\\") != path.count("\\")
        or "\0" in decoded
    )


class Snapshot:
    """Every entry under ``cards/`` at one commit, as a flat map of parts to nodes."""

    def __init__(self, store: ObjectStore, commit: Sha | None) -> None:
        self.store = store
        self.files: dict[Parts, Node] = {}
        self.children: dict[Parts, set[str]] = {(): set()}
        if commit is not None:
            self._load(f"{commit}:{CARDS}", ())

    def _load(self, tree: str, prefix: Parts) -> None:
        for entry in self.store.read_tree(tree):
            name = entry.name.decode("utf-8", "surrogateescape")
            parts = (*prefix, name)
            self.children[prefix].add(name)
            if entry.is_tree:
                self.children[parts] = set()
                self._load(entry.sha, parts)
            else:
                self.files[parts] = Node(entry.mode, entry.sha)

    # -- filesystem facts -------------------------------------------------------
    def kind(self, parts: Parts) -> str | None:
        """The entry's kind: "dir", "file", "link", "other" (a submodule), or None."""
        if parts in self.children:
            return "dir"
        node = self.files.get(parts)
        if node is None or _placeholder(parts, node):
            return None  # gitmem's .gitkeep: the SDK's folder has no such file
        return node.kind

    def check_writable(self, parts: Parts, shown: str) -> None:
        """Refuse to make a ``.gitkeep`` (it would be taken for gitmem's placeholder) or a
        name that Windows and macOS would take for one beside it (``Acme.md``, ``acme.md``)."""
        if KEEP in parts:
            raise ToolError(
                f"Path {shown} is not allowed: {KEEP} is reserved by gitmem "
                "(it keeps empty directories in git)"
            )
        # Only a name being made is judged: a path already in the tree is read, edited and
        # deleted as it is, so an old repo's odd name can still be taken away.
        problem = None if self.kind(parts) else path_rule.path_problem(_repo_path(parts))
        if problem:
            raise ToolError(f"Path {shown} is not allowed: {problem}")
        for i, part in enumerate(parts):
            if self.kind(parts[: i + 1]) is None:
                other = path_rule.clash(part, self.children.get(parts[:i], ()))
                if other is not None:
                    raise ToolError(
                        f"Path {shown} is not allowed: {part!r} is the same name as {other!r} "
                        "on Windows and macOS"
                    )
                return

    def blocked(self, parts: Parts) -> bool:
        """True when an ancestor of ``parts`` is not a directory (the OS says ENOTDIR)."""
        return any(self.kind(parts[:i]) not in (None, "dir") for i in range(1, len(parts)))

    def check_rename(self, src: Parts, dst: Parts, old: str) -> None:
        """Fail where the SDK's rename fails: making dst's parents, then ``os.rename``.

        The kernel walks the old parent, then the new parent, then looks the old
        entry up, then refuses a directory moved into itself -- with the parents the
        SDK has just made (which may include ``src`` itself) counted as directories.
        """
        parent, made = dst[:-1], set[Parts]()
        if self.kind(parent) is None:
            top = parent
            while self.kind(top) is None:
                top = top[:-1]
            if self.kind(top) != "dir":
                raise os_error(errno.ENOTDIR)
            made = {parent[:i] for i in range(len(top) + 1, len(parent) + 1)}

        def kind(p: Parts) -> str | None:
            return "dir" if p in made else self.kind(p)

        for i in range(1, len(src)):
            if kind(src[:i]) is None:
                raise ToolError(f"The path {old} does not exist")
            if kind(src[:i]) != "dir":
                raise os_error(errno.ENOTDIR)
        if kind(parent) != "dir":
            raise os_error(errno.ENOTDIR)
        if kind(src) is None:
            raise ToolError(f"The path {old} does not exist")
        if len(dst) > len(src) and dst[: len(src)] == src:
            raise os_error(errno.EINVAL)  # a directory into itself

    def data(self, parts: Parts) -> bytes:
        """The file's bytes; a damaged object is the tool's one-line error, not a crash."""
        try:
            return self.store.read_blob(self.files[parts].sha) or b""
        except GitmemError as err:
            raise ToolError(str(err)) from None

    def text(self, parts: Parts, shown: str) -> str:
        try:
            return self.data(parts).decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(
                f"The file {shown} is not valid UTF-8 text; the memory tool reads only text files."
            ) from None

    def under(self, parts: Parts) -> list[Parts]:
        """Every file at or below ``parts``."""
        n = len(parts)
        return [p for p in self.files if p[:n] == parts]

    def changes(
        self, after: Mapping[Parts, Node | bytes], removed: Parts | None
    ) -> dict[str, bytes | None]:
        """Repo paths to write (bytes) or remove (None) to turn this tree into ``after``.

        A directory that existed and would be left empty keeps a ``.gitkeep``, as the
        SDK's tool keeps empty directories on disk -- unless the command removed it
        (``removed`` is the subtree a delete or rename took away).
        """
        new = dict(after)
        kept = {k[:i] for k in new for i in range(len(k))}
        for folder in set(self.children) - kept:
            if folder == () or removed is None or folder[: len(removed)] != removed:
                new[(*folder, KEEP)] = b""
        out: dict[str, bytes | None] = {}
        for parts in self.files.keys() - new.keys():
            out[_repo_path(parts)] = None
        for parts, value in new.items():
            if isinstance(value, Node):
                if self.files.get(parts) == value:
                    continue
                value = self.store.read_blob(value.sha) or b""
            out[_repo_path(parts)] = value
        return out

    # -- resolution -------------------------------------------------------------
    def resolve(self, path: str) -> Parts:
        """``path`` as parts below the memory root, exactly where the SDK would land."""
        if not path.startswith(ROOT):
            raise ToolError(f"Path must start with /memories, got: {path}")
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:
            raise ToolError(f"Path {path!r} is not valid UTF-8") from None
        if "\0" in path:
            raise ToolError(f"Path {path!r} contains a NUL byte")
        if any(c in path for c in LINE_BREAKS):
            # A name with a line break splits every line-oriented reader of the tree (git's
            # own listings, the index, commit messages): never made, never read.
            raise ToolError(f"Path {path!r} contains a line break")
        if _url_traversal(path):
            raise ToolError(
                f"Path {path} contains URL-encoded traversal; give a plain path under /memories"
            )
        rel = [p for p in path[len(ROOT) :].split("/") if p not in ("", ".")]
        parts = self._realpath(rel)
        if parts is None:
            raise ToolError(f"Path {path} would escape /memories directory")
        if any(hidden(p) for p in parts):
            raise ToolError(
                f"Path {path} is not allowed: a name starting with '.' is not memory "
                "(git reads .gitattributes, .gitignore and the like as its own settings)"
            )
        if any(len(p.encode()) > MAX_NAME_BYTES for p in parts):
            raise os_error(errno.ENAMETOOLONG)
        return parts

    def _realpath(self, todo: list[str]) -> Parts | None:
        # Walk from the directory holding the memory root, as realpath does.
        stack, hops = ["memories"], 0
        while todo:
            name = todo.pop(0)
            if name == "..":
                if not stack:
                    return None  # above the base directory: outside for sure
                stack.pop()
                continue
            stack.append(name)
            inside = stack[0] == "memories"
            node = self.files.get(tuple(stack[1:])) if inside else None
            if node is None or node.kind != "link":
                continue
            hops += 1
            target = (self.store.read_blob(node.sha) or b"").decode("utf-8", "surrogateescape")
            if hops > MAX_HOPS or target.startswith("/") or "\0" in target:
                return None  # a loop, or a target outside the repository's tree
            stack.pop()
            todo[:0] = [p for p in target.split("/") if p not in ("", ".")]
        if not stack or stack[0] != "memories":
            return None
        return tuple(stack[1:])

    def follow(self, parts: Parts) -> Parts | None:
        """Where a directory entry leads (through symlinks); None if outside or dangling."""
        if self.kind(parts) != "link":
            return parts
        target = self._realpath(list(parts))
        return target if target is not None and self.kind(target) is not None else None

    # -- view --------------------------------------------------------------------
    def listing(self, parts: Parts, shown: str) -> str:
        """The SDK's directory view: two levels deep, hidden names skipped."""
        items: list[tuple[str, str]] = []

        def collect(here: Parts, rel: str, depth: int) -> None:
            for name in sorted(self.children.get(here, ())):
                if name.startswith("."):
                    continue
                item_rel = f"{rel}/{name}" if rel else name
                target = self.follow((*here, name))
                kind = self.kind(target) if target is not None else None
                if target is not None and kind == "dir":
                    items.append((format_file_size(DIR_SIZE), f"{item_rel}/"))
                    if depth < 2:
                        collect(target, item_rel, depth + 1)
                elif target is not None and kind == "file":
                    items.append((format_file_size(len(self.data(target))), item_rel))

        collect(parts, "", 1)
        header = (
            f"Here're the files and directories up to 2 levels deep in {shown}, "
            "excluding hidden items:"
        )
        lines = [f"{format_file_size(DIR_SIZE)}\t{shown}"]
        lines += [f"{size}\t{shown}/{rel}" for size, rel in items]
        return f"{header}\n" + "\n".join(lines)


def hidden(name: str) -> bool:
    """A dot name other than gitmem's placeholder: never a memory path (git would read a
    ``.gitattributes`` there as settings that change how every card is stored)."""
    return name.startswith(".") and name != KEEP


def _placeholder(parts: Parts, node: Node) -> bool:
    return parts[-1] == KEEP and node.kind == "file"


def _repo_path(parts: Parts) -> str:
    path = "/".join((CARDS, *parts))
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError(
            f"{path!r} has a name that is not valid UTF-8; rename it with git"
        ) from None
    return path
