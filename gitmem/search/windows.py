"""A long section scored by its best passage, not as one bag of words.

A section that holds a whole session of events answers a question in a few lines: as
one document those lines are a few words among hundreds, and length normalisation buries
them. Each of the best ``POOL`` current sections of ``WINDOW`` text words or more (by
its weighted length, so no short one is read) with more than one passage is scored
again as if its text were only its best passage (its card name, heading and index entry
kept), and that score is blended with the whole section's. The hit shows that passage
and its ref opens it (``<card>/<section>#<n>``).

Every section of a card holds the card's name and title: they say which card, not which
section. Scored as one field with the text, the card field's weight saturates the name
(a term's share grows ever less with its count), and a section whose own text names the
person scores as one that does not. These sections (whole and passages) score the card
field apart (``bm25.one``'s ``card``), so a section's own mention counts in full.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from functools import lru_cache

from gitmem.search import bm25
from gitmem.search.documents import CURRENT, W_TEXT, weighted
from gitmem.search.state import Searchable
from gitmem.search.terms import terms

WINDOW, STEP = 60, 30  # a paragraph longer than WINDOW words: windows every STEP words
POOL = 40  # the best sections looked at again
BLEND = 0.5  # of the best passage's score in a long section's
_PARAGRAPH = re.compile(r"\n[ \t]*\n")


def passages(text: str) -> list[str]:
    """The section's text as passages: its paragraphs, one longer than ``WINDOW`` words
    as windows of ``WINDOW`` words starting every ``STEP`` (the last one at its end)."""
    out = []
    for para in _PARAGRAPH.split(text.strip()):
        ws = para.split()
        if len(ws) <= WINDOW:
            out += [" ".join(ws)] if ws else []
            continue
        starts = [*range(0, len(ws) - WINDOW, STEP), len(ws) - WINDOW]
        out += [" ".join(ws[s : s + WINDOW]) for s in starts]
    return out


@lru_cache(maxsize=2048)  # a section's passages are counted once, not per query
def _counted(text: str) -> tuple[Counter[str], ...]:
    return tuple(
        Counter({t: n * W_TEXT for t, n in Counter(terms(p)).items()}) for p in passages(text)
    )


@lru_cache(maxsize=2048)
def _counted_whole(text: str) -> Counter[str]:
    return Counter({t: n * W_TEXT for t, n in Counter(terms(text)).items()})


def lift(
    state: Searchable,
    scores: dict[int, float],
    query: dict[str, float],
    groups: dict[str, str],
) -> dict[int, int]:
    """``scores`` of the best long current sections blended with their best passage's;
    returns each such section's best passage, by document (numbered from 1)."""
    kinds, lengths, least = state.kinds, state.lengths, WINDOW * W_TEXT
    sections = (
        (s, i)
        for i, s in scores.items()
        if i >= 0 and kinds[i] == CURRENT and lengths[i] >= least  # read no short one
    )
    best: dict[int, int] = {}
    for _, i in heapq.nlargest(POOL, sections):
        d = state.doc(i)
        card = weighted(d._replace(heading="", keywords="", summary="", text=""))
        base = weighted(d._replace(text="")) - card
        scores[i] = bm25.one(state, query, groups, base + _counted_whole(d.text), CURRENT, card)
        if len(d.text) < WINDOW * 4 or len(parts := _counted(d.text)) < 2:
            continue  # short: its one passage is the section
        got = [bm25.one(state, query, groups, base + p, CURRENT, card) for p in parts]
        n = max(range(len(got)), key=got.__getitem__)
        scores[i] = (1 - BLEND) * scores[i] + BLEND * got[n]
        best[i] = n + 1
    return best
