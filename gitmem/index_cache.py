"""The index's cache under ``.git/gitmem/``: the replay state and the rendered I block.

Both are keyed by the commit they were built at, so a stale file can only be ignored,
never believed. The state is stored with marshal: builtin types only (no code runs
on load), and several times faster than JSON for a large client.
"""

from __future__ import annotations

import marshal
import os

from .replay import Replay, no_gc
from .repo import MAIN, MemoryRepo

CACHE_VERSION = 6  # 3: multi-revert; 4: untitled cards; 5: summary-less entries; 6: framed
Headings = dict[str, list[list[str]]]  # blob sha -> [[title, ""], [id, heading], ...]


def _state_path(repo: MemoryRepo, branch: str) -> str:
    return str(repo.gitmem_dir / f"index-{branch.replace('/', '%')}.marshal")


def load(repo: MemoryRepo, branch: str) -> tuple[Replay, Headings] | None:
    try:
        with open(_state_path(repo, branch), "rb") as fh:
            blob = fh.read()  # marshal.load on a file reads it in tiny pieces: 5x slower
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
    with open(tmp, "wb") as fh:
        # marshal: builtin types only (no code runs on load), and several times faster
        # than JSON for the 10,000-entry state of a large client.
        fh.write(marshal.dumps(data))
    os.replace(tmp, path)  # readers see the old cache or the new one, never half


def text_path(repo: MemoryRepo, branch: str) -> str:
    return str(repo.gitmem_dir / f"index-{branch.replace('/', '%')}.txt")


def save_text(repo: MemoryRepo, branch: str, commit: str | None, text: str) -> None:
    path = text_path(repo, branch)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(f"{commit}\n{CACHE_VERSION}\n{text}")
    os.replace(tmp, path)
