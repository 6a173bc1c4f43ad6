"""The search state: every document, the postings of every term, and what a fold needs
to find the documents a new commit replaces (each card's sections in force, each
section's index entry and past values, each transcript's turns)."""

from __future__ import annotations

import hashlib
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date as _date
from typing import Protocol

from gitmem.search.documents import GONE, PAST, TURN, Doc, weighted

CACHE_VERSION = 11  # 11: each document's days, for a dated query's filter


class Searchable(Protocol):
    """What a search reads: this process's ``SearchState``, or the cache file read a part
    at a time (``cache.Stored``)."""

    @property
    def commit(self) -> str | None: ...
    @property
    def live(self) -> int: ...  # documents not GONE
    @property
    def total(self) -> int: ...  # sum of their weighted lengths
    @property
    def turn_live(self) -> int: ...  # of those, transcript turns
    @property
    def turn_total(self) -> int: ...  # the sum of the turns' weighted lengths
    @property
    def lengths(self) -> Sequence[int]: ...  # every document's weighted length, by id
    @property
    def kinds(self) -> Sequence[int]: ...  # every document's kind, by id
    @property
    def days(self) -> Sequence[int]: ...  # by id, two each: day written, day replaced (0: none)
    @property
    def sessions(self) -> dict[str, tuple[int, str, list[int]]]: ...

    def posting(self, term: str) -> array[int] | None: ...
    def df(self, term: str) -> int: ...  # how many documents hold ``term``
    def doc(self, n: int) -> Doc: ...


@dataclass
class SearchState:
    commit: str | None = None
    docs: list[Doc] = field(default_factory=list)  # by id; a dropped one stays, GONE
    # term -> its postings, doc ids ascending, as one array of (doc, count) pairs
    postings: dict[str, array[int]] = field(default_factory=dict)
    live: int = 0  # documents not GONE
    total: int = 0  # sum of their weighted lengths
    turn_live: int = 0  # of those, transcript turns
    turn_total: int = 0  # the sum of the turns' weighted lengths
    cards: dict[str, dict[str, int]] = field(default_factory=dict)  # card -> section -> doc
    titles: dict[str, str] = field(default_factory=dict)
    # card/section -> (keywords, summary) of its index entry
    entries: dict[str, tuple[str, str]] = field(default_factory=dict)
    past: dict[str, list[int]] = field(default_factory=dict)  # card/section -> past docs
    # session id -> (lines read, sha1 of them, the docs of its turns)
    sessions: dict[str, tuple[int, str, list[int]]] = field(default_factory=dict)
    # commits folded since the cache file was written (not part of the state)
    unsaved: int = field(default=0, compare=False)
    # each document's length, by id (derived from docs: a document's length never changes)
    lengths: array[int] = field(default_factory=lambda: array("I"), compare=False)
    kinds: bytearray = field(default_factory=bytearray, compare=False)  # each one's kind
    # each one's day written and day replaced, as day numbers (``day``), two a document
    days: array[int] = field(default_factory=lambda: array("I"), compare=False)

    def __post_init__(self) -> None:
        if len(self.lengths) != len(self.docs):
            self.lengths = array("I", [d.length for d in self.docs])
        if len(self.kinds) != len(self.docs):
            self.kinds = bytearray(d.kind for d in self.docs)
        if len(self.days) != 2 * len(self.docs):
            self.days = array("I", [n for d in self.docs for n in (day(d.date), day(d.until))])

    def posting(self, term: str) -> array[int] | None:
        return self.postings.get(term)

    def df(self, term: str) -> int:
        return len(self.postings.get(term, ())) // 2

    def doc(self, n: int) -> Doc:
        return self.docs[n]

    def add(self, doc: Doc) -> int:
        """Add a document; its id."""
        counts = weighted(doc)
        n = len(self.docs)
        doc = doc._replace(length=sum(counts.values()))
        self.docs.append(doc)
        self.lengths.append(doc.length)
        self.kinds.append(doc.kind)
        self.days.extend((day(doc.date), day(doc.until)))
        for term, count in counts.items():
            got = self.postings.get(term)
            if got is None:
                got = self.postings[term] = array("I")
            got.extend((n, count))
        self.live += 1
        self.total += doc.length
        if doc.kind == TURN:
            self.turn_live += 1
            self.turn_total += doc.length
        return n

    def drop(self, n: int) -> None:
        """Take a document out of the postings: it is found no more."""
        doc = self.docs[n]
        if doc.kind == GONE:
            return
        for term in weighted(doc):
            got = self.postings.get(term)
            if got is None:
                continue
            ids = got[0::2]
            at = bisect_left(ids, n)
            if at < len(ids) and ids[at] == n:
                del got[2 * at : 2 * at + 2]
            if not got:
                del self.postings[term]
        self.live -= 1
        self.total -= doc.length
        if doc.kind == TURN:
            self.turn_live -= 1
            self.turn_total -= doc.length
        self.docs[n] = doc._replace(kind=GONE, text="")
        self.kinds[n] = GONE

    def retire(self, key: str, n: int, date: str) -> None:
        """A section value replaced at ``date`` stays searchable as a past value: its terms
        stay in the postings, its text is let go (read back from git when a hit shows it)."""
        self.docs[n] = self.docs[n]._replace(kind=PAST, until=date, text="")
        self.kinds[n] = PAST
        self.days[2 * n + 1] = day(date)
        self.past.setdefault(key, []).append(n)


def day(iso: str) -> int:
    """An ISO date's day number (``date.toordinal``), 0 for none: a dated query compares
    these, never reading a document to learn its date."""
    try:
        return _date.fromisoformat(iso[:10]).toordinal() if len(iso) >= 10 else 0
    except ValueError:
        return 0


def pairs(post: array[int]) -> Iterator[tuple[int, int]]:
    """A term's (doc, count) pairs."""
    return zip(post[0::2], post[1::2], strict=True)


def fingerprint(state: SearchState) -> bytes:
    """A sha1 of the state's content, read a part at a time: the same for equal states
    however they were made (marshal's bytes are not: they follow how objects are shared)."""
    counts = (state.live, state.total, state.turn_live, state.turn_total)
    h = hashlib.sha1(repr((CACHE_VERSION, state.commit, counts)).encode())
    for doc in state.docs:
        h.update(repr(doc).encode())
    h.update(b"\x00postings")
    for term in sorted(state.postings):  # the cache file keeps them in another order
        post = state.postings[term]
        h.update(b"%d %s " % (len(post), repr(term).encode()))
        h.update(post.tobytes())
    for part in (state.cards, state.titles, state.entries, state.past, state.sessions):
        h.update(b"\x00part")
        for item in part.items():
            h.update(repr(item).encode())
    return h.digest()
