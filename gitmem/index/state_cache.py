"""The index's cache under ``.git/gitmem/``: the replay state and the rendered I block.

Both are keyed by the commit they were built at, so a stale file can only be ignored,
never believed, and both carry a digest of their content, so a torn, damaged or
hand-edited file is rebuilt, never served (``gitmem reindex`` compares both with a
full replay). The state is stored with marshal: builtin types only (no code runs
on load), and several times faster than JSON for a large client.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import struct
from dataclasses import dataclass
from typing import Any

from gitmem.index import digest_file
from gitmem.index.replay import Fold, Replay, no_gc
from gitmem.memory import branch_files
from gitmem.memory.repo import MAIN, MemoryRepo

CACHE_VERSION = 11  # 3: multi-revert; 4: untitled cards; 5: summary-less entries; 6: framed;
# 7: digests; 8: merges kept, stale entries marked; 9: fences closed as CommonMark closes them;
# 10: records (a base state, then appended deltas, merges in both), stale marks in the cards;
# 11: a layer tag with any number of slashes defused
_DIGEST = 20  # sha1 of what follows it
_HEAD = struct.Struct(">I20s")  # a record: its length and digest, then marshal bytes
MAX_DELTAS = 64  # then the state is written whole again (loading stays one base + a few)
Headings = dict[str, list[list[str]]]  # blob sha -> [[title, ""], [id, heading], ...]


@dataclass
class _Tail:
    """What this process last read or wrote at the end of a state file: an append is
    made only while the file is exactly that (same size), else the state is rewritten."""

    size: int
    commit: str | None
    deltas: int
    delta_bytes: int
    base_bytes: int


_tails: dict[str, _Tail] = {}


def _state_path(repo: MemoryRepo, branch: str) -> str:
    return branch_files.path(repo, branch, "marshal")


def _record(data: Any) -> bytes:
    blob = marshal.dumps(data)
    return _HEAD.pack(len(blob), hashlib.sha1(blob).digest()) + blob


def load(repo: MemoryRepo, branch: str) -> tuple[Replay, Headings] | None:
    """The state and headings kept for ``branch``: the base record, then each appended
    delta that continues from the commit reached so far (one written by a process that
    lost a race does not, and is skipped). A damaged record means no cache at all; a
    torn last record (a crash while appending) is ignored."""
    path = _state_path(repo, branch)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()  # marshal.load on a file reads it in tiny pieces: 5x slower
        records = []
        at = 0
        while at + _HEAD.size <= len(raw):
            size, digest = _HEAD.unpack_from(raw, at)
            end = at + _HEAD.size + size
            if end > len(raw):
                break  # torn by a crash mid-append: what came before still holds
            blob = raw[at + _HEAD.size : end]
            if hashlib.sha1(blob).digest() != digest:
                return None  # damaged or edited by hand: rebuilt from history
            records.append(blob)
            at = end
        if not records:
            return None
        with no_gc():
            data = marshal.loads(records[0])
            if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
                return None
            state = Replay(
                data["commit"],
                data["entries"],
                set(data["inactive"]),
                data["reverts"],
                data["merges"],
            )
            headings: Headings = data["headings"]
            for blob in records[1:]:
                delta = marshal.loads(blob)
                if delta["base"] == state.commit:
                    _apply(state, headings, delta)
        _tails[path] = _Tail(
            at,
            state.commit,
            len(records) - 1,
            at - _HEAD.size - len(records[0]),
            _HEAD.size + len(records[0]),
        )
        return state, headings
    except (OSError, ValueError, KeyError, TypeError, EOFError, struct.error):
        return None  # no cache, another Python's marshal format, a torn file: rebuild


def _apply(state: Replay, headings: Headings, delta: dict[str, Any]) -> None:
    """Fold a delta in exactly as ``replay._Fold.onto`` folded it when it was written."""
    for key, values in delta["entries"].items():
        have = state.entries.get(key)
        if have is None:
            state.entries[key] = values
        else:
            have.extend(values)
    for sha, targets in delta["reverts"]:
        state.reverts[sha] = targets
        state._set_active(sha, True)
    if delta["merges"]:  # newest first, newer than every merge kept so far
        state.merges[:0] = delta["merges"]
    headings.update(delta["headings"])
    state.commit = delta["commit"]


def cached_commit(repo: MemoryRepo, branch: str = MAIN) -> str | None:
    """The commit the index cache was built at (None without a usable cache)."""
    loaded = load(repo, branch)
    return loaded[0].commit if loaded else None


def save(
    repo: MemoryRepo,
    branch: str,
    state: Replay,
    headings: Headings,
    new: Fold | None = None,
    base: str | None = None,
    added: Headings | None = None,
) -> None:
    """Keep ``state``. When it is ``base``'s state plus the commits folded in ``new``
    and the file still ends at ``base`` as this process left it, only a delta is
    appended (the cost of the new commits, not of the history) with the headings
    ``added`` since; otherwise, or after
    ``MAX_DELTAS`` deltas or deltas as large as the base, it is written whole."""
    path = _state_path(repo, branch)
    tail = _tails.get(path)
    if new is not None and tail is not None and tail.commit == base and base is not None:
        delta = _record(
            {
                "base": base,
                "commit": state.commit,
                "entries": new.entries,  # oldest first, as folded
                "reverts": [[sha, targets] for sha, targets in reversed(new.reverts)],
                "merges": new.merges,  # newest first, as folded
                "headings": added or {},  # the blobs' headings the file does not have yet
            }
        )
        fits = tail.deltas < MAX_DELTAS and tail.delta_bytes + len(delta) < tail.base_bytes
        if fits and _size(path) == tail.size and _append(path, delta):
            _tails[path] = _Tail(
                tail.size + len(delta),
                state.commit,
                tail.deltas + 1,
                tail.delta_bytes + len(delta),
                tail.base_bytes,
            )
            return
    data = {
        "version": CACHE_VERSION,
        "commit": state.commit,
        "entries": state.entries,
        "inactive": state.inactive,
        "reverts": state.reverts,
        "merges": state.merges,
        "headings": headings,
    }
    tmp = f"{path}.{os.getpid()}.tmp"
    # marshal: builtin types only (no code runs on load), and several times faster
    # than JSON for the 10,000-entry state of a large client.
    blob = _record(data)
    if digest_file.replace(tmp, path, blob):
        _tails[path] = _Tail(len(blob), state.commit, 0, 0, len(blob))
    else:
        _tails.pop(path, None)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


def _append(path: str, data: bytes) -> bool:
    """One write at the end of the file (O_APPEND: a reader sees the delta whole, or torn
    by a crash and then ignored)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    except OSError:
        return False
    try:
        return os.write(fd, data) == len(data)
    except OSError:
        return False
    finally:
        os.close(fd)


def text_path(repo: MemoryRepo, branch: str) -> str:
    return branch_files.path(repo, branch, "txt")


def save_text(repo: MemoryRepo, branch: str, commit: str | None, text: str) -> None:
    path = text_path(repo, branch)
    body = text.encode("utf-8")
    head = f"{commit}\n{CACHE_VERSION}\n{hashlib.sha1(body).hexdigest()}\n".encode()
    digest_file.replace(f"{path}.{os.getpid()}.tmp", path, head + body)


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
