"""The index's cache file: records of marshal data, each behind its length and sha1.

Written whole (readers see the old file or the new one); read back only when every
record is whole and its digest holds, so a torn, damaged or edited file reads as none.
marshal: builtin types only (no code runs on load). A record may hold pieces (``piece``):
values kept as their own marshal bytes, decoded only by a reader that uses them and
written again as they were read when they did not change.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import struct
from typing import Any

_RECORD = struct.Struct(">I20s")


def write(path: str, records: list[Any]) -> None:
    """Keep ``records`` in ``path``; a read-only or full disk keeps nothing."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            for record in records:  # (no copy of a record's bytes: the refresh budget)
                blob = marshal.dumps(record)
                fh.write(_RECORD.pack(len(blob), hashlib.sha1(blob).digest()))
                fh.write(blob)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def piece(value: Any) -> bytes:
    return marshal.dumps(value)


def unpiece(data: Any) -> Any:
    """A ``piece`` read back; None when it is not one (the record's digest held, so
    only a file written by something else)."""
    try:
        return marshal.loads(data) if isinstance(data, bytes) else None
    except (ValueError, EOFError, TypeError):
        return None


def _parsed(data: bytes, count: int, want: int) -> list[Any] | None:
    raw = memoryview(data)  # records read in place, not copied out
    blobs, at = [], 0
    while at < len(raw):
        if at + _RECORD.size > len(raw):
            return None
        size, digest = _RECORD.unpack_from(raw, at)
        blob = raw[at + _RECORD.size : at + _RECORD.size + size]
        if len(blob) != size or hashlib.sha1(blob).digest() != digest:
            return None
        blobs.append(blob)
        at += _RECORD.size + size
    if len(blobs) != count:
        return None
    try:
        return [marshal.loads(b) for b in blobs[:want]]
    except (ValueError, EOFError, TypeError):  # another Python's marshal format
        return None


def read(path: str, count: int, want: int) -> tuple[list[Any] | None, bool]:
    """(the first ``want`` of the ``count`` records of ``path``, or None when it is not
    exactly those, whole; whether a file was there)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError:
        return None, False
    return _parsed(raw, count, want), True


def read_leading(path: str, count: int, skip: int = 0) -> list[Any] | None:
    """``count`` records after the first ``skip`` (those passed over by their lengths, not
    read), each behind its own digest, the rest of the file not read; None when they are
    not there whole."""
    out: list[Any] = []
    try:
        with open(path, "rb") as fh:
            for n in range(skip + count):
                head = fh.read(_RECORD.size)
                size = _RECORD.unpack(head)[0] if len(head) == _RECORD.size else 0
                if n < skip:
                    fh.seek(size, os.SEEK_CUR)
                    continue
                got = _parsed(head + fh.read(size), 1, 1)
                if not got:
                    return None
                out.append(got[0])
    except (OSError, struct.error):
        return None
    return out
