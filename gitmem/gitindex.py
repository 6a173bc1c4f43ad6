"""git's index file, for the hot path of an edit on a checked-out branch.

``staged`` reads one path's entry (the clean-card check); ``restage`` points existing
entries at new blobs after the working tree was written. Only index versions 2 and 3
without a split or sparse index are handled; anything else returns None/False and
the caller runs git instead.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
from pathlib import Path

_HEADER = struct.Struct(">4sLL")


def staged(index_file: Path, path: str, sha_len: int = 20) -> list[tuple[int, str]] | None:
    """[(stage, sha), ...] of ``path`` in the index ([] if absent), or None if unreadable."""
    try:
        data = index_file.read_bytes()
    except FileNotFoundError:
        return []
    except OSError:
        return None
    if len(data) < 12:
        return None
    sig, version, count = _HEADER.unpack_from(data)
    if sig != b"DIRC" or version not in (2, 3) or b"link" in data[-64:]:
        return None
    want = path.encode("utf-8", "surrogateescape")
    fixed = 40 + sha_len + 2  # stat data, object id, flags
    pos, found = 12, []
    try:
        for _ in range(count):
            flags = struct.unpack_from(">H", data, pos + 40 + sha_len)[0]
            extended = version == 3 and flags & 0x4000
            start = pos + fixed + (2 if extended else 0)
            end = data.index(b"\0", start)
            if data[start:end] == want:
                found.append(((flags >> 12) & 3, data[pos + 40 : pos + 40 + sha_len].hex()))
            elif found:
                break  # entries are sorted by path: no more matches
            pos += (end - pos + 8) & ~7  # entries are NUL-padded to a multiple of 8
    except (struct.error, ValueError):
        return None
    return found


# Optional caches git rebuilds when they are missing: dropping them is always safe.
_DROPPABLE = {b"TREE", b"UNTR", b"FSMN", b"EOIE", b"IEOT"}
_ENTRY_STAT = struct.Struct(">10L")


def restage(index_file: Path, updates: dict[str, tuple[str, os.stat_result]], sha_len: int = 20) -> bool:
    """Point existing stage-0 entries at new blobs with the files' new stat data, as
    ``git update-index`` would after the working tree was written; True when done.

    Takes ``index.lock`` like git. Returns False, having changed nothing, whenever git
    should do it instead: a path not in the index (or conflicted), an index version or
    extension not handled here (split or sparse index), or the lock held by someone else.
    """
    lock = index_file.with_name(index_file.name + ".lock")
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError:
        return False
    try:
        data = index_file.read_bytes()
        new = _rewrite(data, updates, sha_len)
        if new is None:
            return False
        os.write(fd, new)
        os.close(fd)
        fd = -1
        os.replace(lock, index_file)
        return True
    except OSError:
        return False
    finally:
        if fd != -1:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(lock)


def _rewrite(data: bytes, updates: dict[str, tuple[str, os.stat_result]], sha_len: int) -> bytes | None:
    if len(data) < 12 + sha_len:
        return None
    sig, version, count = _HEADER.unpack_from(data)
    if sig != b"DIRC" or version not in (2, 3):
        return None
    want = {p.encode("utf-8", "surrogateescape"): v for p, v in updates.items()}
    out = bytearray(data[: len(data) - sha_len])
    pos, done = 12, set()
    for _ in range(count):
        flags = struct.unpack_from(">H", data, pos + 40 + sha_len)[0]
        start = pos + 40 + sha_len + 2 + (2 if version == 3 and flags & 0x4000 else 0)
        end = data.index(b"\0", start)
        name = data[start:end]
        if name in want:
            if (flags >> 12) & 3 or name in done:
                return None  # a conflicted path: git's job
            sha, st = want[name]
            mode = struct.unpack_from(">L", data, pos + 24)[0]
            fields = (int(st.st_ctime), st.st_ctime_ns % 10**9, int(st.st_mtime), st.st_mtime_ns % 10**9,
                      st.st_dev, st.st_ino, mode, st.st_uid, st.st_gid, st.st_size)
            _ENTRY_STAT.pack_into(out, pos, *(f & 0xFFFFFFFF for f in fields))
            out[pos + 40 : pos + 40 + sha_len] = bytes.fromhex(sha)
            done.add(name)
        pos += (end - pos + 8) & ~7
    if len(done) != len(want):
        return None
    kept = bytearray(out[:pos])
    while pos + 8 <= len(out):
        ext, size = bytes(out[pos : pos + 4]), struct.unpack_from(">L", out, pos + 4)[0]
        if ext not in _DROPPABLE:
            if ext in (b"link", b"sdir") or not ext[:1].isupper():
                return None  # a split or sparse index, or an extension git requires us to know
            kept += out[pos : pos + 8 + size]
        pos += 8 + size
    digest = hashlib.sha256(kept) if sha_len == 32 else hashlib.sha1(kept)
    return bytes(kept) + digest.digest()
