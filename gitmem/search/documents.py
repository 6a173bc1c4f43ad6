"""The search documents: a section value (current or past) or a transcript turn, and
the weighted terms each is found by."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable
from typing import NamedTuple

from gitmem.memory.cards import first_title, sections
from gitmem.search.terms import terms

CURRENT, PAST, TURN, GONE = 0, 1, 2, 3
# Field weights (integers, so a rebuild and an incremental fold add up to the same state).
W_CARD, W_HEADING, W_KEYWORDS, W_SUMMARY, W_TEXT = 6, 4, 4, 3, 2
# A turn is also found by the words of the two messages before it: an answer rarely
# repeats the question's words ("How was the hike?" -- "Exhausting, but the view...").
W_CONTEXT = 1
CONTEXT_CHARS = 600  # of the messages before, kept with a turn
_SEP = "\x1e"  # between the two messages of a turn's context

Read = Callable[[str], bytes | None]  # a blob's content by its id


class Doc(NamedTuple):
    """One document (immutable: a fold replaces it with ``_replace``)."""

    kind: int  # CURRENT, PAST, TURN or GONE
    card: str  # "" for a turn
    section: str  # a turn: its number in the transcript
    heading: str  # a turn: who spoke (its role)
    text: str  # "" for a past value: read back from ``blob`` (``text_of``)
    keywords: str
    summary: str  # a turn: the two messages before it (``CONTEXT_CHARS`` of them)
    date: str  # when this value was written (a turn: when it was said)
    until: str  # a past value: when it was replaced
    ref: str  # a section: its card's title; a turn: "<session>#<n>"
    commit: str  # the commit that wrote a section value
    blob: str  # the card blob a section value was read from ("" for a turn)
    pos: int  # the section's place among that card's sections
    length: int = 0  # the sum of its weighted term counts


def weighted(doc: Doc) -> Counter[str]:
    """The document's terms, each counted with its field's weight."""
    counts: Counter[str] = Counter()
    if doc.kind == TURN:
        fields = [(doc.text, W_TEXT), (doc.summary, W_CONTEXT)]
    else:
        card = f"{doc.card} {doc.ref}"  # the card's slug, whole and in parts, and its title
        fields = [
            (card, W_CARD),
            (doc.heading, W_HEADING),
            (doc.keywords, W_KEYWORDS),
            (doc.summary, W_SUMMARY),
            (doc.text, W_TEXT),
        ]
    for text, weight in fields:
        for term in terms(text):
            counts[term] += weight
    return counts


def card_sections(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """A card's title and its sections as (id, heading, text)."""
    lines = text.split("\n")
    title = first_title(text)
    # ids, headings and titles recur in every value of a section: one string each
    out = [
        (sys.intern(s.id), sys.intern(s.heading), "\n".join(lines[s.start + 1 : s.end]).strip())
        for s in sections(text)
    ]
    return sys.intern(title), out


def text_of(doc: Doc, read: Read) -> str:
    """A document's text: a past section value's read from its card blob through ``read``."""
    if doc.kind != PAST or not doc.blob:
        return doc.text
    secs = card_sections((read(doc.blob) or b"").decode("utf-8", "replace"))[1]
    return secs[doc.pos][2] if doc.pos < len(secs) else ""


def turn_docs(session: str, lines: list[bytes], start: int, last: Doc | None) -> list[Doc]:
    """The turns of transcript ``lines[start:]`` as documents: one per message that holds
    text (a tool call or result alone is not a turn). ``last``: the document of the turn
    before ``start``, for the turn numbers and the context of the next."""
    turn = int(last.section) if last is not None else 0
    # the two messages before the next turn, split by _SEP; the older one from ``last``
    before = [last.summary.rpartition(_SEP)[2], last.text] if last is not None else []
    docs = []
    for line in lines[start:]:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict) or rec.get("type", "message") != "message":
            continue
        text, role = _said(rec), str(rec.get("role", "?"))
        if not text:
            continue
        n = rec.get("turn")
        turn = n if isinstance(n, int) and n > turn else turn + (role == "user" or not turn)
        context = _SEP.join(before[-2:])[-CONTEXT_CHARS:]
        at = str(rec.get("at", ""))
        docs.append(
            Doc(
                TURN, "", str(turn), role, text, "", context, at, "", f"{session}#{turn}", "", "", 0
            )
        )
        before = [*before[-1:], text]
    return docs


def _said(rec: dict[str, object]) -> str:
    """What a message says in words: its text blocks (its ``text`` when it has no blocks)."""
    content = rec.get("content")
    if isinstance(content, list) and content:
        parts = [
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        ]
        return "\n".join(p for p in parts if p.strip()).strip()
    text = rec.get("text") if content is None or content == [] else content
    return text.strip() if isinstance(text, str) else ""
