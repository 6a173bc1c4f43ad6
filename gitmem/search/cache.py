"""The search state's cache file, ``.git/gitmem/search-<branch>.marshal``: keyed by the
commit it was built at, written whole, read a part at a time, each part checked by its
own sha1 when it is read, so a damaged or edited file is rebuilt from history, never
served. ``gitmem reindex`` compares it with a rebuild by the state's fingerprint, which
the file carries, so a cache that matches is never loaded beside the rebuilt state."""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import zlib
from array import array
from collections.abc import Iterator
from typing import Any

from gitmem.errors import StorageError
from gitmem.git import progress
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.search.documents import Doc
from gitmem.search.fold import advance, build
from gitmem.search.state import CACHE_VERSION, Searchable, SearchState, fingerprint

SAVE_EVERY = 256  # commits folded in memory before the file on disk is rewritten
DOC_BLOCK = 128  # documents a part
TERMS_A_BUCKET = 64  # terms a part, on average
_MAGIC = b"gmsearch"
_HEAD = len(_MAGIC) + 8 + 8 + 20  # magic, the table's offset and size, its sha1
_NAMED = ("lengths", "kinds", "days", "cards", "titles", "entries", "past", "sessions")

Where = tuple[int, int, bytes]  # a part's offset, size and sha1


class Stale(ValueError):
    """The cache file was damaged, edited or replaced since it was opened."""


def path(repo: MemoryRepo, branch: str) -> str:
    return str(repo.gitmem_dir / f"search-{branch.replace('/', '%')}.marshal")


def _place(repo: MemoryRepo, branch: str) -> str:
    """The cache file's path, or StorageError when a directory stands there: never
    removed (it may hold someone's files), and never built for only to be lost."""
    file = path(repo, branch)
    if os.path.isdir(file):
        raise StorageError(
            f"the search index cannot be kept: {file} is a directory; move it away "
            "and gitmem builds the index there again"
        )
    return file


def _bucket(term: str, buckets: int) -> int:
    return zlib.crc32(term.encode("utf-8", "surrogatepass")) % buckets


# The file: a head naming the table (offset, size, sha1), the parts, then the table: the
# state's counts and fingerprint and where each part is with its sha1. A search reads only
# the parts its terms and hits need (the read budget: 250 ms at 100k commits); a part's
# sha1 is checked when it is read, so a damaged or edited part is never served.
class Stored:
    """The cache file of one state, read a part at a time."""

    def __init__(self, file: str) -> None:
        self.file = file
        with open(file, "rb") as fh:
            self._id = _identity(fh)
            head = fh.read(_HEAD)
            if len(head) != _HEAD or not head.startswith(_MAGIC):
                raise Stale("not a search cache")
            at = len(_MAGIC)
            offset, size = (int.from_bytes(head[i : i + 8], "big") for i in (at, at + 8))
            self.table: dict[str, Any] = self._read(fh, (offset, size, head[at + 16 :]))
        if self.table["version"] != CACHE_VERSION:
            raise Stale("another version's cache")
        self._got: dict[int, Any] = {}  # the parts read so far, by offset
        self._docs: dict[int, Doc] = {}  # the documents read so far, by number
        self._arrays: dict[str, array[int]] = {}  # lengths and days, made once

    @classmethod
    def open(cls, file: str) -> Stored | None:
        """The file's state; None when there is none, or its head or table is damaged."""
        try:
            return cls(file)
        except (OSError, ValueError, KeyError, TypeError, EOFError):
            return None

    def _read(self, fh: Any, where: Where) -> Any:
        offset, size, digest = where
        fh.seek(offset)
        raw = fh.read(size)
        if len(raw) != size or hashlib.sha1(raw).digest() != digest:
            raise Stale("a damaged part")  # damaged or edited: rebuilt from history
        try:
            return marshal.loads(raw)
        except (ValueError, EOFError, TypeError) as e:
            raise Stale("a damaged part") from e

    def part(self, where: Where) -> Any:
        """One part, checked by its sha1 when first read (Stale when it fails)."""
        if where[0] not in self._got:
            (self._got[where[0]],) = self.parts([where])
        return self._got[where[0]]

    def parts(self, wheres: list[Where]) -> Iterator[Any]:
        """Parts read through one open of the file, each checked by its sha1."""
        with open(self.file, "rb") as fh:
            if _identity(fh) != self._id:
                raise Stale("the file was replaced")
            for where in wheres:
                yield self._read(fh, where)

    @property
    def commit(self) -> str | None:
        return self.table["commit"]  # type: ignore[no-any-return]

    @property
    def live(self) -> int:
        return self.table["live"]  # type: ignore[no-any-return]

    @property
    def total(self) -> int:
        return self.table["total"]  # type: ignore[no-any-return]

    @property
    def turn_live(self) -> int:
        return self.table["turn_live"]  # type: ignore[no-any-return]

    @property
    def turn_total(self) -> int:
        return self.table["turn_total"]  # type: ignore[no-any-return]

    @property
    def mark(self) -> bytes:
        return self.table["mark"]  # type: ignore[no-any-return]

    @property
    def lengths(self) -> array[int]:
        return self._array("lengths")

    @property
    def days(self) -> array[int]:
        return self._array("days")

    def _array(self, name: str) -> array[int]:
        got = self._arrays.get(name)
        if got is None:  # a search reads it for every document it scores: made once
            got = self._arrays[name] = array("I", self.part(self.table[name]))
        return got

    @property
    def kinds(self) -> bytes:
        return self.part(self.table["kinds"])  # type: ignore[no-any-return]

    @property
    def sessions(self) -> dict[str, tuple[int, str, list[int]]]:
        return self.part(self.table["sessions"])  # type: ignore[no-any-return]

    def doc(self, n: int) -> Doc:
        got = self._docs.get(n)
        if got is None:  # made once: a search reads the same documents again and again
            block, at = divmod(n, DOC_BLOCK)
            columns = self.part(self.table["docs"][block])
            got = self._docs[n] = Doc._make([column[at] for column in columns])
        return got

    def posting(self, term: str) -> array[int] | None:
        buckets = self.table["terms"]
        raw = self.part(buckets[_bucket(term, len(buckets))]).get(term)
        return None if raw is None else array("I", raw)

    def df(self, term: str) -> int:
        buckets = self.table["terms"]
        raw = self.part(buckets[_bucket(term, len(buckets))]).get(term)
        return 0 if raw is None else len(raw) // (2 * array("I").itemsize)

    def whole(self) -> bool:
        """Whether every part is as it was written (reindex reads them all)."""
        try:
            for _ in self.parts(self._every_part()):
                pass
        except (OSError, ValueError):
            return False
        return True

    def _every_part(self) -> list[Where]:
        return [*(self.table[n] for n in _NAMED), *self.table["docs"], *self.table["terms"]]

    def state(self) -> SearchState:
        """The whole state (a fold after new commits, reindex)."""
        docs = [
            Doc._make(row)
            for block in self.parts(self.table["docs"])
            for row in zip(*block, strict=True)
        ]
        postings = {}
        for bucket in self.parts(self.table["terms"]):
            for term, raw in bucket.items():
                postings[term] = array("I", raw)
                if len(postings[term]) % 2:
                    raise Stale("a posting without its count")
        parts = (
            self.part(self.table[n]) for n in ("cards", "titles", "entries", "past", "sessions")
        )
        counts = (self.live, self.total, self.turn_live, self.turn_total)
        state = SearchState(self.commit, docs, postings, *counts, *parts)
        mine = (self.lengths, bytearray(self.kinds), self.days)
        if (state.lengths, state.kinds, state.days) != mine:
            raise Stale("the documents and their lengths, kinds or days disagree")
        return state


def _identity(fh: Any) -> tuple[int, int, int]:
    st = os.fstat(fh.fileno())
    return st.st_ino, st.st_size, st.st_mtime_ns


def load(repo: MemoryRepo, branch: str) -> SearchState | None:
    """The cached state of ``branch``; None when there is none or it is damaged."""
    stored = Stored.open(path(repo, branch))
    try:
        return None if stored is None else stored.state()
    except (OSError, ValueError, KeyError, TypeError, EOFError):
        return None


def save(repo: MemoryRepo, branch: str, state: SearchState, mark: bytes | None = None) -> None:
    """Write the cache file whole (``mark``: the state's fingerprint, when known already),
    a part at a time, never all in memory at once (reindex's 300 MB budget)."""
    file = _place(repo, branch)
    tmp = f"{file}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(bytes(_HEAD))

            def put(value: Any) -> Where:
                blob = marshal.dumps(value)
                where = (fh.tell(), len(blob), hashlib.sha1(blob).digest())
                fh.write(blob)
                return where

            table = _table(state, mark or fingerprint(state), put)
            blob = marshal.dumps(table)
            at = fh.tell()
            fh.write(blob)
            fh.seek(0)
            fh.write(_MAGIC + at.to_bytes(8, "big") + len(blob).to_bytes(8, "big"))
            fh.write(hashlib.sha1(blob).digest())
        os.replace(tmp, file)  # readers see the old file or the new one, never half
    except OSError:  # a read-only or full disk: the cache is simply not kept
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return
    state.unsaved = 0


def _table(state: SearchState, mark: bytes, put: Any) -> dict[str, Any]:
    docs = state.docs
    blocks = [
        put(list(zip(*docs[i : i + DOC_BLOCK], strict=True)))
        for i in range(0, len(docs), DOC_BLOCK)
    ]
    buckets: list[dict[str, array[int]]] = [
        {} for _ in range(max(1, len(state.postings) // TERMS_A_BUCKET))
    ]
    for term, post in state.postings.items():
        buckets[_bucket(term, len(buckets))][term] = post
    table: dict[str, Any] = {
        "version": CACHE_VERSION,
        "mark": mark,
        "commit": state.commit,
        "live": state.live,
        "total": state.total,
        "turn_live": state.turn_live,
        "turn_total": state.turn_total,
        "docs": blocks,
        "terms": [put(b) for b in buckets],
        "lengths": put(state.lengths),
        "kinds": put(bytes(state.kinds)),
        "days": put(state.days),
    }
    for name in ("cards", "titles", "entries", "past", "sessions"):
        table[name] = put(getattr(state, name))
    return table


def searchable(repo: MemoryRepo, branch: str = MAIN) -> Searchable:
    """What a search at ``branch``'s tip reads: this process's state, else the cache file
    a part at a time when it is at the tip (the read budget), else ``current``'s state."""
    tip = repo.tip(branch)
    memo = repo.memo.get(("search", branch))
    if isinstance(memo, SearchState | Stored) and memo.commit == tip:
        return memo
    stored = Stored.open(_place(repo, branch))
    if tip is not None and stored is not None and stored.commit == tip:
        repo.memo[("search", branch)] = stored
        return stored
    return current(repo, branch)


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
            state, rebuilt = _built(repo, tip), True
    if rebuilt or state.unsaved >= SAVE_EVERY:
        save(repo, branch, state)
    repo.memo[("search", branch)] = state
    return state


def _built(repo: MemoryRepo, tip: str) -> SearchState:
    """The state folded from all of history, its progress drawn where a person watches."""

    def total() -> int:
        out = repo.git.run("rev-list", "--count", "--first-parent", tip).stdout
        return int(out.decode().strip() or "0")

    with progress.counted("building the search index", total) as step:
        return build(repo, tip, step)


def search_index_ready(repo: MemoryRepo, branch: str = MAIN) -> bool:
    """Whether a search of ``branch`` starts from a cache file (its own or main's) rather
    than folding all of history: what ``gitmem search`` says before a first full build."""
    memo = repo.memo.get(("search", branch))
    if isinstance(memo, SearchState | Stored) or repo.tip(branch) is None:
        return True
    return any(Stored.open(_place(repo, b)) is not None for b in dict.fromkeys([branch, MAIN]))


def build_search_index(repo: MemoryRepo, branch: str = MAIN) -> bool:
    """Make the cache file current at ``branch``'s tip (clone, init, a session start), so
    no search has to build it; whether it had to be built or brought up to date."""
    tip = repo.tip(branch)
    stored = Stored.open(path(repo, branch))
    if tip is None or (stored is not None and stored.commit == tip):
        return False
    state = current(repo, branch)
    now = Stored.open(path(repo, branch))
    if now is None or now.commit != tip:  # folded onto an older file, or onto main's
        save(repo, branch, state)
    return True


def _from_a_cache(repo: MemoryRepo, branch: str, tip: str) -> SearchState | None:
    for source in dict.fromkeys([branch, MAIN]):
        loaded = load(repo, source)
        # a session branch folds its few commits onto main's file: no file of its own
        # (one per session would pile up) until it has SAVE_EVERY commits to keep
        if loaded is not None and advance(repo, loaded, tip):
            return loaded
    if branch != MAIN and (main_tip := repo.tip(MAIN)) is not None:
        base = _built(repo, main_tip)  # main's file first: the next session starts from it
        save(repo, MAIN, base)
        if advance(repo, base, tip):
            return base
    return None


def rebuild(repo: MemoryRepo, branch: str = MAIN) -> tuple[SearchState, bool | None]:
    """Rebuild from all of history (reindex): (the state, whether the cache matched it:
    None when there was none, False when it differed or was damaged)."""
    tip = repo.tip(branch)
    _place(repo, branch)
    fresh = _built(repo, tip) if tip else SearchState()
    mark = fingerprint(fresh)
    same: bool | None = True  # the same content: no second state loaded to compare
    stored = Stored.open(path(repo, branch))
    if stored is None or stored.mark != mark or not stored.whole():
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
