"""The index's cache under ``.git/gitmem/``: the replay state and the rendered I block.

Both are keyed by the commit they were built at, so a stale file can only be ignored,
never believed, and both carry a digest of their content, so a torn, damaged or
hand-edited file is rebuilt, never served (``gitmem reindex`` compares both with a
full replay). The state is stored with marshal: builtin types only (no code runs
on load), and several times faster than JSON for a large client.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os

from .replay import Replay, no_gc
from .repo import MAIN, MemoryRepo

CACHE_VERSION = 7  # 3: multi-revert; 4: untitled cards; 5: summary-less entries; 6: framed; 7: digests
_DIGEST = 20  # sha1 of what follows it
Headings = dict[str, list[list[str]]]  # blob sha -> [[title, ""], [id, heading], ...]


def _state_path(repo: MemoryRepo, branch: str) -> str:
    return str(repo.gitmem_dir / f"index-{branch.replace('/', '%')}.marshal")


def load(repo: MemoryRepo, branch: str) -> tuple[Replay, Headings] | None:
    try:
        with open(_state_path(repo, branch), "rb") as fh:
            raw = fh.read()  # marshal.load on a file reads it in tiny pieces: 5x slower
        digest, blob = raw[:_DIGEST], raw[_DIGEST:]
        if hashlib.sha1(blob).digest() != digest:
            return None  # damaged or edited by hand: rebuilt from history
        with no_gc():
            data = marshal.loads(blob)
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            return None
        state = Replay(data["commit"], data["entries"], set(data["inactive"]), data["reverts"])
        return state, data["headings"]
    except (OSError, ValueError, KeyError, TypeError, EOFError):
        return None  # no cache, another Python's marshal format, a torn file: rebuild


def cached_commit(repo: MemoryRepo, branch: str = MAIN) -> str | None:
    """The commit the index cache was built at (None without a usable cache)."""
    loaded = load(repo, branch)
    return loaded[0].commit if loaded else None


def save(repo: MemoryRepo, branch: str, state: Replay, headings: Headings) -> None:
    path = _state_path(repo, branch)
    data = {
        "version": CACHE_VERSION,
        "commit": state.commit,
        "entries": state.entries,
        "inactive": state.inactive,
        "reverts": state.reverts,
        "headings": headings,
    }
    tmp = f"{path}.{os.getpid()}.tmp"
    # marshal: builtin types only (no code runs on load), and several times faster
    # than JSON for the 10,000-entry state of a large client.
    blob = marshal.dumps(data)
    _replace(tmp, path, hashlib.sha1(blob).digest() + blob)


def _replace(tmp: str, path: str, data: bytes) -> None:
    """Write ``path`` whole (readers see the old file or the new one, never half); a cache
    that cannot be written (a read-only or full disk) is simply not kept."""
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def drop(repo: MemoryRepo, branch: str) -> None:
    """Remove ``branch``'s caches (a session branch that landed or was archived: its
    name is never used again, and the files would only take disk space)."""
    for path in (_state_path(repo, branch), text_path(repo, branch)):
        with contextlib.suppress(OSError):
            os.unlink(path)


def text_path(repo: MemoryRepo, branch: str) -> str:
    return str(repo.gitmem_dir / f"index-{branch.replace('/', '%')}.txt")


def save_text(repo: MemoryRepo, branch: str, commit: str | None, text: str) -> None:
    path = text_path(repo, branch)
    body = text.encode("utf-8")
    head = f"{commit}\n{CACHE_VERSION}\n{hashlib.sha1(body).hexdigest()}\n".encode()
    _replace(f"{path}.{os.getpid()}.tmp", path, head + body)


def load_text(repo: MemoryRepo, branch: str, commit: str | None) -> str | None:
    """The rendered I block kept for ``commit``; None when missing, stale or damaged."""
    return read_text(repo, branch, commit)[0]


def read_text(repo: MemoryRepo, branch: str, commit: str | None) -> tuple[str | None, bool]:
    """(the I block kept for ``commit`` or None, whether a file for it was there but damaged)."""
    try:
        with open(text_path(repo, branch), "rb") as fh:
            raw = fh.read()
    except OSError:
        return None, False
    parts = raw.split(b"\n", 3)
    if len(parts) != 4 or parts[:2] != [str(commit).encode(), str(CACHE_VERSION).encode()]:
        return None, parts[0] == str(commit).encode()
    if hashlib.sha1(parts[3]).hexdigest().encode() != parts[2]:
        return None, True
    try:
        return parts[3].decode("utf-8"), False
    except UnicodeDecodeError:
        return None, True
