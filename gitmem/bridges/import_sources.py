"""Reading a source's notes: a folder walked without following symlinks.

Reading: the tree is walked with descriptors (``O_NOFOLLOW``), so a symlink -- file or
folder, raced in or not -- is reported and never followed; so are files that are
unreadable, not UTF-8, over the size gitmem would accept, or named with control
characters. Hidden files and folders (``.git``, ``.obsidian``) are skipped.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

MARKDOWN = (".md", ".markdown")
MAX_HOPS = 5  # Claude Code follows @imports this deep
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029\x85]")


@dataclass(frozen=True)
class Note:
    source: str  # where it came from, as shown to people
    name: str  # the note's name: the card is named after it
    text: str
    kind: str


@dataclass(frozen=True)
class Problem:
    source: str
    reason: str

    def line(self) -> str:
        return f"{self.source}: {self.reason}"


@dataclass
class Found:
    kind: str
    notes: list[Note] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)  # stop the import
    skipped: list[Problem] = field(default_factory=list)  # said, and left out


def shown(path: str) -> str:
    """A path printable on one line: control characters and undecodable bytes escaped."""
    out = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), out)


class Reader:
    """Reads files below one root through descriptors; never follows a symlink."""

    def __init__(self, root: Path, label: str, limit: int, found: Found) -> None:
        self.root, self.label, self.limit, self.found = root, label, limit, found

    def where(self, rel: str) -> str:
        return shown(f"{self.label}{rel}")

    def _bad_name(self, rel: str) -> str | None:
        try:
            rel.encode("utf-8")
        except UnicodeEncodeError:
            return "its name is not valid UTF-8; rename it"
        if _CONTROL.search(rel):
            return "its name has a control character (a newline?); rename it"
        return None

    def read(self, rel: str) -> str | None:
        """The text of ``root/rel``, or None with a problem recorded."""
        bad = self._bad_name(rel)
        if bad:
            self.found.problems.append(Problem(self.where(rel), bad))
            return None
        parts = rel.split("/")
        fds: list[int] = []
        try:
            fds.append(os.open(self.root, _DIR))
            for part in parts[:-1]:
                fds.append(os.open(part, _DIR, dir_fd=fds[-1]))
            fd = os.open(parts[-1], _FILE, dir_fd=fds[-1])
            fds.append(fd)
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, "not a regular file")
            if st.st_size > self.limit:
                raise _TooBig(st.st_size)
            data = os.read(fd, self.limit + 1)
            while len(data) <= self.limit and (chunk := os.read(fd, self.limit + 1 - len(data))):
                data += chunk
            if len(data) > self.limit:
                raise _TooBig(len(data))
        except _TooBig as big:
            self._problem(rel, f"is {big.size} bytes, over limits.max_card_bytes ({self.limit})")
            return None
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                self._problem(rel, "is a symlink (or under one); never followed")
            else:
                self._problem(rel, f"cannot be read: {exc.strerror or exc}")
            return None
        finally:
            for f in fds:
                os.close(f)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._problem(rel, f"is not valid UTF-8 (byte {exc.start})")
            return None

    def _problem(self, rel: str, reason: str) -> None:
        self.found.problems.append(Problem(self.where(rel), reason))

    def walk(
        self,
        rel: str = "",
        suffixes: tuple[str, ...] | None = MARKDOWN,
        skip_top: frozenset[str] = frozenset(),
    ) -> Iterator[str]:
        """Relative paths of the files below ``rel`` (sorted); symlinks reported."""
        try:
            fd = os.open(self.root / rel if rel else self.root, _DIR)
        except OSError:
            self._problem(rel or ".", "is a symlink or not a readable folder; never followed")
            return
        try:
            entries = sorted(os.scandir(fd), key=lambda e: e.name)
        finally:
            os.close(fd)
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel else entry.name
            if entry.name.startswith(".") or (not rel and entry.name in skip_top):
                continue
            if entry.is_symlink():
                if (
                    suffixes is None
                    or entry.name.lower().endswith(suffixes)
                    or _is_dir(self.root / child)
                ):
                    self._problem(child, "is a symlink; never followed")
                continue
            if entry.is_dir(follow_symlinks=False):
                yield from self.walk(child, suffixes)
            elif suffixes is None or entry.name.lower().endswith(suffixes):
                yield child


class _TooBig(Exception):
    def __init__(self, size: int) -> None:
        self.size = size


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def stem(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name[1:] else name
