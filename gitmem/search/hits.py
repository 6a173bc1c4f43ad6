"""A search hit: what it names, its snippet and the ref that opens it.

A section's snippet is the window of its text (or of its best passage, for a long
section: ``windows``) that holds the most of the query's distinct terms; a turn's is
longer, most turns whole. Past values are read from git (``read``).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from gitmem.search import windows
from gitmem.search.documents import PAST, TURN, Doc, Read, text_of
from gitmem.search.terms import stem, words

SNIPPET = 160
TURN_SNIPPET = 320  # a turn's snippet: most turns whole


@dataclass(frozen=True)
class Hit:
    kind: str  # "section" | "transcript"
    card: str  # the card's name ("" for a transcript turn)
    section: str  # the section id ("" for a transcript turn)
    state: str  # "current" | "past" (a transcript turn: "transcript")
    date: str  # when this value was written (a turn: when it was said)
    until: str  # a past value: when it was replaced
    snippet: str
    score: float
    ref: str = ""  # a transcript turn: "<session>#<turn>" (what opens it)
    heading: str = ""  # a section: its heading; a turn: who spoke
    commit: str = ""  # a section value: the commit that wrote it
    session: str = ""  # a transcript turn: its session
    turn: int = 0  # a transcript turn: its number in the session (user and reply share it)
    role: str = ""  # a transcript turn: who spoke, "user" or "assistant"

    @property
    def text(self) -> str:  # the "text" scripts read in --json (to_json), not what a person sees
        where = f"{self.card} § {self.section}: " if self.card else f"{self.heading}: "
        return where + self.snippet

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "text": self.text}


@dataclass(frozen=True)
class SearchResult:
    """The hits of one search, best first (iterates like the list of hits)."""

    query: str
    hits: tuple[Hit, ...]

    def __iter__(self) -> Any:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, i: int) -> Hit:
        return self.hits[i]

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "hits": [h.to_json() for h in self.hits]}


def snippet(text: str, stems: set[str], size: int = SNIPPET) -> str:
    """A window of ``text`` around the matched words: the one that holds the most of the
    query's distinct terms, starting at a word."""
    flat = " ".join(text.split())
    if len(flat) <= size:
        return flat
    found = [
        (m.start(), term)
        for m in re.finditer(r"\w[\w'\u2019-]*", flat)
        for term in _match(m.group(), stems)
    ]
    best, start = 0, 0
    for i, (pos, _) in enumerate(found):
        got = len({t for p, t in found[i:] if p < pos + size - 20})
        if got > best:
            best, start = got, pos
    start = max(0, start - 30)
    if start:
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < start + 30 else start
    start = min(start, max(0, len(flat) - size))
    cut = flat[start : start + size]
    return ("…" if start else "") + cut + ("…" if start + size < len(flat) else "")


def _match(word: str, stems: set[str]) -> list[str]:
    w = words(word)
    if not w:
        return []
    return [t for t in (w[0], stem(w[0])) if t in stems][:1]


def make(d: Doc, score: float, stems: set[str], read: Read, part: int = 0) -> Hit:
    """Document ``d``'s hit (``part``: a long section's best passage, from 1)."""
    if d.kind == TURN:
        session = d.ref.partition("#")[0]
        return Hit(
            "transcript",
            "",
            "",
            "transcript",
            d.date,
            "",
            snippet(d.text, stems, TURN_SNIPPET),
            score,
            d.ref,
            d.heading,
            session=session,
            turn=int(d.section or 0),
            role=d.heading,
        )
    body = text_of(d, read) or d.summary  # a past value's: read from git
    ref = f"{d.card}/{d.section}" + (f"@{d.commit[:12]}" if d.kind == PAST else "")
    if part:  # a long section: its best passage, and the ref that opens it
        body, ref = windows.passages(body)[part - 1], f"{ref}#{part}"
    return Hit(
        "section",
        d.card,
        d.section,
        "past" if d.kind == PAST else "current",
        d.date,
        d.until,
        snippet(f"{d.heading}: {body}", stems),
        score,
        ref,
        d.heading,
        d.commit,
    )
