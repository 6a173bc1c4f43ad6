"""The search state's cache file, ``.git/gitmem/search-<branch>.marshal``: keyed by the
commit it was built at and carrying a sha1 of its content, so a damaged or edited file
is rebuilt from history, never served. ``gitmem reindex`` compares it with a rebuild by
the state's fingerprint, which the file carries, so a cache that matches is never loaded
beside the rebuilt state."""

from __future__ import annotations

import contextlib
import gc
import hashlib
import marshal
import os
from collections.abc import Iterator

from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.search.fold import advance, build
from gitmem.search.state import SearchState, fingerprint

SAVE_EVERY = 256  # commits folded in memory before the file on disk is rewritten
_DIGEST = 20  # bytes of a sha1


def path(repo: MemoryRepo, branch: str) -> str:
    return str(repo.gitmem_dir / f"search-{branch.replace('/', '%')}.marshal")


# The file: sha1 of the rest, the state's fingerprint, then each of the state's parts
# marshalled and prefixed with its length: written a part at a time, never all in memory
# at once (reindex's 300 MB budget).
def load(repo: MemoryRepo, branch: str) -> SearchState | None:
    """The cached state of ``branch``; None when there is none or it is damaged."""
    try:
        with open(path(repo, branch), "rb") as fh:
            raw = memoryview(fh.read())
        if hashlib.sha1(raw[_DIGEST:]).digest() != raw[:_DIGEST]:
            return None  # damaged or edited: rebuilt from history
        with _collector_paused():
            parts, pos = [], 2 * _DIGEST
            while pos < len(raw):
                size = int.from_bytes(raw[pos : pos + 8], "big")
                parts.append(marshal.loads(raw[pos + 8 : pos + 8 + size]))
                pos += 8 + size
            return SearchState.from_parts(parts)
    except (OSError, ValueError, KeyError, TypeError, EOFError):
        return None


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """No garbage collection while a cache's records are made, and then they go to the
    oldest generation at once (freeze, unfreeze): collections walking each of them, made
    or kept, took a third of a warm search (its 250 ms budget)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was:
            gc.enable()


def save(repo: MemoryRepo, branch: str, state: SearchState, mark: bytes | None = None) -> None:
    """Write the cache file (``mark``: the state's fingerprint, when known already)."""
    file = path(repo, branch)
    tmp = f"{file}.{os.getpid()}.tmp"
    mark = mark or fingerprint(state)
    digest = hashlib.sha1(mark)
    try:
        with open(tmp, "wb") as fh:
            fh.write(bytes(_DIGEST) + mark)
            for part in state.parts():
                blob = marshal.dumps(part)
                for piece in (len(blob).to_bytes(8, "big"), blob):
                    digest.update(piece)
                    fh.write(piece)
            fh.seek(0)
            fh.write(digest.digest())
        os.replace(tmp, file)  # readers see the old file or the new one, never half
    except OSError:  # a read-only or full disk: the cache is simply not kept
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return
    state.unsaved = 0


def _stored_fingerprint(repo: MemoryRepo, branch: str) -> bytes | None:
    """The fingerprint the cache file carries, when the file is whole (read in pieces)."""
    try:
        with open(path(repo, branch), "rb") as fh:
            digest, mark = fh.read(_DIGEST), fh.read(_DIGEST)
            check = hashlib.sha1(mark)
            while chunk := fh.read(1 << 16):
                check.update(chunk)
    except OSError:
        return None
    return mark if len(mark) == _DIGEST and check.digest() == digest else None


def current(repo: MemoryRepo, branch: str = MAIN) -> SearchState:
    """The search state at ``branch``'s tip, folding in only new commits when it can: from
    this process's last state, the branch's cache file, or (a session branch) main's."""
    tip = repo.tip(branch)
    if tip is None:
        return SearchState()
    memo = repo.memo.get(("search", branch))
    state = memo if isinstance(memo, SearchState) else None
    if state is not None and state.commit == tip:
        return state
    rebuilt = False
    if state is None or not advance(repo, state, tip):
        state = _from_a_cache(repo, branch, tip)
        if state is None:
            state, rebuilt = build(repo, tip), True
    if rebuilt or state.unsaved >= SAVE_EVERY:
        save(repo, branch, state)
    repo.memo[("search", branch)] = state
    return state


def _from_a_cache(repo: MemoryRepo, branch: str, tip: str) -> SearchState | None:
    for source in dict.fromkeys([branch, MAIN]):
        loaded = load(repo, source)
        # a session branch folds its few commits onto main's file: no file of its own
        # (one per session would pile up) until it has SAVE_EVERY commits to keep
        if loaded is not None and advance(repo, loaded, tip):
            return loaded
    if branch != MAIN and (main_tip := repo.tip(MAIN)) is not None:
        base = build(repo, main_tip)  # main's file first: the next session starts from it
        save(repo, MAIN, base)
        if advance(repo, base, tip):
            return base
    return None


def rebuild(repo: MemoryRepo, branch: str = MAIN) -> tuple[SearchState, bool | None]:
    """Rebuild from all of history (reindex): (the state, whether the cache matched it:
    None when there was none, False when it differed or was damaged)."""
    tip = repo.tip(branch)
    fresh = build(repo, tip) if tip else SearchState()
    mark = fingerprint(fresh)
    same: bool | None = True  # the same content: no second state loaded to compare
    if _stored_fingerprint(repo, branch) != mark:
        same = False if os.path.exists(path(repo, branch)) else None
        cached = load(repo, branch)
        if cached is not None:
            if tip is not None and cached.commit != tip:
                advance(repo, cached, tip)
            same = fingerprint(cached) == mark
            del cached
        if same is not True:
            save(repo, branch, fresh, mark)
    repo.memo[("search", branch)] = fresh
    return fresh, same
