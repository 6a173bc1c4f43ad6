"""Related words learnt from the memory itself: the index entries the agent wrote.

A section's *label* is its heading and the keywords of its index entry. A word is
related to the label words of the sections it is found in, when many of them share
those: one card's budget section is headed "Money", others "Budget", all carry the
keywords "budget, cost", and their texts say "spend" -- so a question about money or
spending also looks for budget and cost. Nothing is listed in advance: what is related
is whatever this memory's entries say, so it fits what the memory is about.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from gitmem.index.model import Index
from gitmem.search.documents import CURRENT
from gitmem.search.state import Searchable
from gitmem.search.terms import terms

WEIGHT = 0.4  # a related word's weight, times how much more it labels the word's sections
MIN_SHARE = 0.3  # of the query word's sections a related word must also label
MIN_SECTIONS = 2  # a relation seen once is a coincidence
MOST = 4  # related words per query word
SAMPLE = 200  # sections a word is found in, read to learn its relations


Section = tuple[str, str]  # (card, section id)


class Related:
    """Each section's label terms, and which sections each term labels."""

    def __init__(self, index: Index) -> None:
        self.sections: dict[str, list[Section]] = {}
        self.of_section: dict[Section, frozenset[str]] = {}
        of_word: dict[str, frozenset[str]] = {}  # labels share their words: each read once
        for card in index.cards:
            for sec in card.sections:
                words = label(sec.heading, sec.keywords, of_word)
                self.of_section[(card.project, sec.id)] = words
                if len(words) < 2:
                    continue
                for term in words:
                    self.sections.setdefault(term, []).append((card.project, sec.id))

    def of(self, term: str, found_in: dict[Section, frozenset[str]]) -> dict[str, float]:
        """The words related to ``term``: label words of the sections it labels or is
        found in (``found_in``: those sections' labels), each section counted once, each
        by how much more of them it labels than of all sections (a label every section
        carries, "notes", tells none apart). Numbers and dates relate nothing."""
        mine = {key: self.of_section[key] for key in self.sections.get(term, [])}
        mine.update(found_in)
        if len(mine) < MIN_SECTIONS:
            return {}
        counts = Counter(
            u for label in mine.values() for u in label if u != term and not _number(u)
        )
        every = max(len(self.of_section), 1)
        out = {}
        for u, c in counts.items():
            base = min(len(self.sections.get(u, ())) / every, 1.0)  # labels this share anyway
            if c >= MIN_SECTIONS and c / len(mine) >= MIN_SHARE and base < 1:
                out[u] = (c / len(mine) - base) / (1 - base)
        return dict(sorted(((u, s) for u, s in out.items() if s > 0), key=lambda us: -us[1])[:MOST])

    def expand(
        self, weighted: dict[str, float], found_in: Callable[[str], dict[Section, frozenset[str]]]
    ) -> dict[str, float]:
        """The query's terms with their related words added at a lower weight
        (``found_in(term)``: the labels of the current sections whose text holds it)."""
        out = dict(weighted)
        for term in weighted:
            for near, share in self.of(term, found_in(term)).items():
                out[near] = max(out.get(near, 0.0), WEIGHT * share)
        return out


def _number(term: str) -> bool:
    """A number or date (``2025``, ``2025-01``): what it counts is not what it means."""
    return term[:1].isdigit()


def label(
    heading: str, keywords: str | tuple[str, ...], of_word: dict[str, frozenset[str]] | None = None
) -> frozenset[str]:
    """The terms of a heading and its keywords; ``of_word``: the terms of each word met so
    far, filled in (a term never spans a space)."""
    words = keywords if isinstance(keywords, str) else " ".join(keywords)
    if of_word is None:
        return frozenset(terms(f"{heading} {words}"))
    out: set[str] = set()
    for word in f"{heading} {words}".split():
        got = of_word.get(word)
        if got is None:
            got = of_word[word] = frozenset(terms(word))
        out |= got
    return frozenset(out)


def labels_with(state: Searchable, term: str, related: Related) -> dict[Section, frozenset[str]]:
    """The labels (heading and keywords) of current sections whose text holds ``term``."""
    post = state.posting(term)
    out: dict[Section, frozenset[str]] = {}
    if post is None:
        return out
    kinds, known = state.kinds, related.of_section
    for doc_id in post[0::2]:
        if kinds[doc_id] == CURRENT:
            d = state.doc(doc_id)
            got = known.get((d.card, d.section))  # the index's own entry: no re-tokenising
            words = got if got is not None else label(d.heading, d.keywords.replace(",", " "))
            out[(d.card, d.section)] = words
            if len(out) >= SAMPLE:
                break
    return out
