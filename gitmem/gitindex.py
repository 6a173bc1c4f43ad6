"""Reading one path's entry from git's index file, for the clean-card check on every edit.

Only versions 2 and 3 without a split index are read here; anything else returns
None and the caller asks ``git status`` instead. Nothing here writes the index.
"""

from __future__ import annotations

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
