"""git's index file, for the hot path of an edit on a checked-out branch.

``staged`` reads one path's entries (the clean-card check); ``restage`` points existing
entries at new blobs after the working tree was written. Only index versions 2 and 3
without a split or sparse index are handled; anything else returns None/False and
the caller runs git instead. The walk over the entries is remembered per index file
(by inode, size and mtime), so a session's edits don't repeat it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
from dataclasses import dataclass
from pathlib import Path

_HEADER = struct.Struct(">4sLL")
_FLAGS = struct.Struct(">H")
_ENTRY_STAT = struct.Struct(">10L")
# Optional caches git rebuilds when they are missing: dropping them is always safe.
_DROPPABLE = {b"TREE", b"UNTR", b"FSMN", b"EOIE", b"IEOT"}


@dataclass
class _Layout:
    key: tuple[int, int, int]
    entries: dict[bytes, list[tuple[int, int]]]  # path -> [(offset, stage)]
    extensions: list[tuple[bytes, int, int]]  # (signature, start, end)


_layouts: dict[str, _Layout] = {}


def _stat_key(st: os.stat_result) -> tuple[int, int, int]:
    return st.st_ino, st.st_size, st.st_mtime_ns


def _walk(data: bytes, sha_len: int, key: tuple[int, int, int]) -> _Layout | None:
    if len(data) < 12 + sha_len:
        return None
    sig, version, count = _HEADER.unpack_from(data)
    if sig != b"DIRC" or version not in (2, 3):
        return None
    entries: dict[bytes, list[tuple[int, int]]] = {}
    pos = 12
    try:
        for _ in range(count):
            flags = _FLAGS.unpack_from(data, pos + 40 + sha_len)[0]
            start = pos + 42 + sha_len + (2 if version == 3 and flags & 0x4000 else 0)
            end = data.index(b"\0", start)
            entries.setdefault(data[start:end], []).append((pos, (flags >> 12) & 3))
            pos += (end - pos + 8) & ~7  # entries are NUL-padded to a multiple of 8
        extensions = []
        stop = len(data) - sha_len
        while pos + 8 <= stop:
            size = struct.unpack_from(">L", data, pos + 4)[0]
            extensions.append((data[pos : pos + 4], pos, pos + 8 + size))
            pos += 8 + size
    except (struct.error, ValueError):
        return None
    if any(ext in (b"link", b"sdir") or not ext[:1].isupper() for ext, _, _ in extensions):
        return None  # a split or sparse index, or an extension git requires readers to know
    return _Layout(key, entries, extensions)


def _layout(index_file: Path, data: bytes, st: os.stat_result, sha_len: int) -> _Layout | None:
    key = _stat_key(st)
    known = _layouts.get(str(index_file))
    if known is not None and known.key == key:
        return known
    layout = _walk(data, sha_len, key)
    if layout is not None:
        _layouts[str(index_file)] = layout
    return layout


def staged(index_file: Path, path: str, sha_len: int = 20) -> list[tuple[int, str]] | None:
    """[(stage, sha), ...] of ``path`` in the index ([] if absent), or None if unreadable."""
    try:
        with open(index_file, "rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read()
    except FileNotFoundError:
        return []
    except OSError:
        return None
    layout = _layout(index_file, data, st, sha_len)
    if layout is None:
        return None
    found = layout.entries.get(path.encode("utf-8", "surrogateescape"), [])
    return [(stage, data[at + 40 : at + 40 + sha_len].hex()) for at, stage in found]


def restage(
    index_file: Path,
    updates: dict[str, tuple[str, os.stat_result]],
    sha_len: int = 20,
    scratch: Path | None = None,
) -> bool:
    """Point existing stage-0 entries at new blobs with the files' new stat data, as
    ``git update-index`` would after the working tree was written; True when done.

    Takes ``index.lock`` like git, but only once the new index is complete: it is
    written to ``scratch`` (beside ``index.lock`` when not given) and hard-linked in as
    the lock, so a writer killed at any point leaves either no lock or one that
    ``scratch`` proves is gitmem's own. Returns False, having changed nothing,
    whenever git should do it instead: a path not in the index (or conflicted), an
    index version or extension not handled here, or the lock held by someone else.
    """
    lock = index_file.with_name(index_file.name + ".lock")
    scratch = scratch or index_file.with_name(index_file.name + ".gitmem-next")
    try:
        with open(index_file, "rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read()
        layout = _layout(index_file, data, st, sha_len)
        new = _rewrite(data, layout, updates, sha_len) if layout else None
        if new is None or layout is None:
            return False
        with contextlib.suppress(FileNotFoundError):
            scratch.unlink()
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, new)
        finally:
            os.close(fd)
        try:
            os.link(scratch, lock)  # fails while git (or anyone) holds the lock
        except OSError:
            scratch.unlink()
            return False
        if _stat_key(os.stat(index_file)) != _stat_key(st):  # git wrote it after our read
            lock.unlink()
            scratch.unlink()
            return False
        os.replace(lock, index_file)
        scratch.unlink()
        # Entries kept their offsets; only the dropped caches are gone.
        at = layout.extensions[0][1] if layout.extensions else len(new) - sha_len
        kept = []
        for sig, a, b in layout.extensions:
            if sig not in _DROPPABLE:
                kept.append((sig, at, at + b - a))
                at += b - a
        _layouts[str(index_file)] = _Layout(_stat_key(index_file.stat()), layout.entries, kept)
        return True
    except OSError:
        return False


def _rewrite(
    data: bytes, layout: _Layout, updates: dict[str, tuple[str, os.stat_result]], sha_len: int
) -> bytes | None:
    out = bytearray(data[: len(data) - sha_len])
    for path, (sha, st) in updates.items():
        found = layout.entries.get(path.encode("utf-8", "surrogateescape"), [])
        if len(found) != 1 or found[0][1] != 0:
            return None  # not in the index, or conflicted: git's job
        at = found[0][0]
        mode = struct.unpack_from(">L", data, at + 24)[0]
        fields = (
            int(st.st_ctime),
            st.st_ctime_ns % 10**9,
            int(st.st_mtime),
            st.st_mtime_ns % 10**9,
            st.st_dev,
            st.st_ino,
            mode,
            st.st_uid,
            st.st_gid,
            st.st_size,
        )
        _ENTRY_STAT.pack_into(out, at, *(f & 0xFFFFFFFF for f in fields))
        out[at + 40 : at + 40 + sha_len] = bytes.fromhex(sha)
    first_ext = layout.extensions[0][1] if layout.extensions else len(out)
    kept = bytearray(out[:first_ext])
    for sig, start, end in layout.extensions:
        if sig not in _DROPPABLE:
            kept += out[start:end]
    digest = hashlib.sha256(kept) if sha_len == 32 else hashlib.sha1(kept)
    return bytes(kept) + digest.digest()
