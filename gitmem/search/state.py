"""The search state: every document, the postings of every term, and what a fold needs
to find the documents a new commit replaces (each card's sections in force, each
section's index entry and past values, each transcript's turns)."""

from __future__ import annotations

import hashlib
from array import array
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from gitmem.search.documents import GONE, PAST, Doc, weighted

CACHE_VERSION = 7  # 7: documents as records, postings as (doc, count) pairs, in parts


@dataclass
class SearchState:
    commit: str | None = None
    docs: list[Doc] = field(default_factory=list)  # by id; a dropped one stays, GONE
    # term -> its postings, doc ids ascending, as one array of (doc, count) pairs: 8 bytes a
    # posting (a dict of dicts takes ~60, and a warm search loads them all: its 250 ms budget)
    postings: dict[str, array[int]] = field(default_factory=dict)
    live: int = 0  # documents not GONE
    total: int = 0  # sum of their weighted lengths
    cards: dict[str, dict[str, int]] = field(default_factory=dict)  # card -> section -> doc
    titles: dict[str, str] = field(default_factory=dict)
    # card/section -> (keywords, summary) of its index entry
    entries: dict[str, tuple[str, str]] = field(default_factory=dict)
    past: dict[str, list[int]] = field(default_factory=dict)  # card/section -> past docs
    # session id -> (lines read, sha1 of them, the docs of its turns)
    sessions: dict[str, tuple[int, str, list[int]]] = field(default_factory=dict)
    unsaved: int = 0  # commits folded since the cache file was written (not part of the state)
    norms: tuple[tuple[int, int, int], list[float]] | None = None  # ranking's, derived

    def length_norms(self, k1: float, b: float) -> list[float]:
        """BM25's length normalisation of every document, k1 * (1 - b + b * len / avg)."""
        key = (len(self.docs), self.live, self.total)
        if self.norms is None or self.norms[0] != key:
            avg = self.total / max(self.live, 1) or 1.0
            self.norms = (key, [k1 * (1 - b + b * d.length / avg) for d in self.docs])
        return self.norms[1]

    def add(self, doc: Doc) -> int:
        """Add a document; its id."""
        counts = weighted(doc)
        n = len(self.docs)
        doc = doc._replace(length=sum(counts.values()))
        self.docs.append(doc)
        for term, count in counts.items():
            got = self.postings.get(term)
            if got is None:
                got = self.postings[term] = array("I")
            got.extend((n, count))
        self.live += 1
        self.total += doc.length
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
        self.docs[n] = doc._replace(kind=GONE, text="")

    def retire(self, key: str, n: int, date: str) -> None:
        """A section value replaced at ``date`` stays searchable as a past value: its terms
        stay in the postings, its text is let go (read back from git when a hit shows it)."""
        self.docs[n] = self.docs[n]._replace(kind=PAST, until=date, text="")
        self.past.setdefault(key, []).append(n)

    def parts(self) -> list[Any]:
        """The state as the cache file holds it, one marshal record a part, the documents
        as columns of their fields; equal states give equal parts."""
        columns = list(zip(*self.docs, strict=True)) or [()] * len(Doc._fields)
        head = (CACHE_VERSION, self.commit, self.live, self.total)
        parts = (self.cards, self.titles, self.entries, self.past, self.sessions)
        return [head, columns, self.postings, *parts]

    @classmethod
    def from_parts(cls, parts: list[Any]) -> SearchState:
        """The state ``parts`` gave (ValueError, TypeError when they are not one)."""
        (version, commit, live, total), columns, postings, *rest = parts
        if version != CACHE_VERSION or len(columns) != len(Doc._fields):
            raise ValueError("another version's cache")
        docs = list(map(Doc._make, zip(*columns, strict=True)))
        # bytes from the file, an array from parts()
        post = {t: array("I", raw) for t, raw in postings.items()}
        if any(len(a) % 2 for a in post.values()):
            raise ValueError("a posting without its count")
        return cls(commit, docs, post, live, total, *rest)


def pairs(post: array[int]) -> Iterator[tuple[int, int]]:
    """A term's (doc, count) pairs."""
    return zip(post[0::2], post[1::2], strict=True)


def fingerprint(state: SearchState) -> bytes:
    """A sha1 of the state's content, read a part at a time: the same for equal states
    however they were made (marshal's bytes are not: they follow how objects are shared)."""
    h = hashlib.sha1(repr((CACHE_VERSION, state.commit, state.live, state.total)).encode())
    for doc in state.docs:
        h.update(repr(doc).encode())
    h.update(b"\x00postings")
    for term, post in state.postings.items():
        h.update(b"%d %s " % (len(post), repr(term).encode()))
        h.update(post.tobytes())
    for part in (state.cards, state.titles, state.entries, state.past, state.sessions):
        h.update(b"\x00part")
        for item in part.items():
            h.update(repr(item).encode())
    return h.digest()
