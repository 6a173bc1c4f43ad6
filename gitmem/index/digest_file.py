"""gitmem's cache files under ``.git/gitmem/``: marshal data behind a sha1 of it.

Each is written whole (readers see the old file or the new one, never half) and
read back only when its digest holds: a damaged or edited file reads as no file,
and what it held is derived again from history. marshal: builtin types only (no
code runs on load), several times faster than pickle or JSON.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
from typing import Any

from gitmem.index.replay import no_gc

DIGEST = 20  # sha1 of what follows it


def replace(tmp: str, path: str, data: bytes) -> bool:
    """Write ``path`` whole through ``tmp``; False when a cache cannot be written (a
    read-only or full disk): it is simply not kept."""
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False


def write(path: str, data: Any) -> bool:
    """Keep ``data`` (builtin types) in ``path`` behind its digest; False if not kept."""
    blob = marshal.dumps(data)
    return replace(f"{path}.{os.getpid()}.tmp", path, hashlib.sha1(blob).digest() + blob)


def read(path: str) -> Any:
    """What ``write`` kept in ``path``; None when there is no such file, or its digest
    does not hold, or it is not marshal data this Python reads."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()  # marshal.load on a file reads it in tiny pieces: slower
        digest, blob = raw[:DIGEST], raw[DIGEST:]
        if hashlib.sha1(blob).digest() != digest:
            return None
        with no_gc():
            return marshal.loads(blob)
    except (OSError, ValueError, TypeError, EOFError):
        return None
