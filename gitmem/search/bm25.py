"""BM25 over a search state's postings, with a query word's neighbours counted as one
with it (``neighbours``): the score of every document a query term is in. A document's
length is weighed against the average of its own kind: a section holds a whole session
or topic, a turn one message, and against one average for both every section would look
long and sink below the turns."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from gitmem.search.documents import GONE, TURN, W_TEXT, Doc
from gitmem.search.documents import weighted as weighted_terms
from gitmem.search.state import Searchable, pairs

K1, B = 1.2 * W_TEXT, 0.75  # k1 on the text field's weight scale


def scores(
    state: Searchable,
    weighted: dict[str, float],
    side: list[Doc],
    groups: dict[str, str] | None = None,
    weight: Sequence[float] = (1.0,) * (GONE + 1),
) -> dict[int, float]:
    """BM25 of every document a query term is in: the state's by id, ``side``'s (live
    turns) as -1, -2, ... ``groups`` names the query word each neighbour stands for: a
    word and its neighbours count once, by the best of them, so a document is not
    lifted for saying one thing in several words. ``weight``: by kind, what each kind's
    score is multiplied by, folded into each term's lift once per posting list rather
    than applied to every scored document after."""
    groups = groups or {}
    roots = set(groups.values())
    counts = [weighted_terms(d) for d in side]
    per = _per_length(state), weight
    total: dict[int, float] = {}
    best: dict[str, dict[int, float]] = {}
    for term, qw in weighted.items():
        root = groups.get(term, term if term in roots else None)
        if root is None:
            _add(total, state, term, qw, counts, per, False)
        else:
            _add(best.setdefault(root, {}), state, term, qw, counts, per, True)
    for mine in best.values():
        for doc_id, got in mine.items():
            total[doc_id] = total.get(doc_id, 0.0) + got
    return total


def _per_length(state: Searchable) -> list[float]:
    """B over the average length of each kind's documents, by kind (sections current and
    past share one; a live turn not yet in the state counts as a turn)."""
    turns, turn_total = state.turn_live, state.turn_total
    sections, section_total = state.live - turns, state.total - turn_total
    section = B * sections / section_total if section_total > 0 else B
    turn = B * turns / turn_total if turn_total > 0 else section
    per = [section] * (GONE + 1)
    per[TURN] = turn
    return per


def _add(
    into: dict[int, float],
    state: Searchable,
    term: str,
    qw: float,
    side_counts: list[Counter[str]],
    per: tuple[list[float], Sequence[float]],
    best: bool,
) -> None:
    """One term's BM25 share in each document that holds it, added to ``into`` (or kept
    where larger: ``best``); ``side_counts``: the live turns' term counts; ``per``: B
    over the average length, and the weight, by kind."""
    n = max(state.live, 1)
    post = state.posting(term)
    df = (len(post) // 2 if post is not None else 0) + sum(term in c for c in side_counts)
    if not df:
        return
    lift = qw * math.log(1 + (n - df + 0.5) / (df + 0.5)) * (K1 + 1)
    b_over, weight = per
    lifts = [lift * w for w in weight]  # by kind
    lengths, kinds, k1, one_b, get = state.lengths, state.kinds, K1, 1 - B, into.get  # 30 ms search
    for doc_id, tf in pairs(post) if post is not None else ():
        kind = kinds[doc_id]
        got = lifts[kind] * tf / (tf + k1 * (one_b + lengths[doc_id] * b_over[kind]))
        into[doc_id] = max(got, get(doc_id, 0.0)) if best else get(doc_id, 0.0) + got
    for i, c in enumerate(side_counts):
        if tf := c.get(term, 0):
            got = lifts[TURN] * tf / (tf + K1 * (1 - B + sum(c.values()) * b_over[TURN]))
            into[-1 - i] = max(got, get(-1 - i, 0.0)) if best else get(-1 - i, 0.0) + got


def one(
    state: Searchable,
    weighted: dict[str, float],
    groups: dict[str, str],
    counts: Counter[str],
    kind: int,
    card: Counter[str] | None = None,
) -> float:
    """BM25 of one document given by its weighted term ``counts`` (a passage scored as a
    document of ``kind``), a query word and its neighbours counted once, by the best.
    ``card``: the counts of its card's name and title, kept apart from ``counts``: every
    section of a card holds them, so they say which card, not which section, and a
    section's own mention of the name is scored on its own, not lost under the card
    field's weight (a term saturates)."""
    card = card or Counter()
    n, per = max(state.live, 1), _per_length(state)[kind]
    norm = K1 * (1 - B + (sum(counts.values()) + sum(card.values())) * per)
    roots = set(groups.values())
    total, best = 0.0, dict[str, float]()
    for term, qw in weighted.items():
        tf, named = counts.get(term, 0), card.get(term, 0)
        post = state.posting(term)
        if not (tf or named) or post is None:
            continue
        df = len(post) // 2
        lift = qw * math.log(1 + (n - df + 0.5) / (df + 0.5)) * (K1 + 1)
        got = lift * (tf / (tf + norm) + named / (named + norm))
        if (root := groups.get(term, term if term in roots else None)) is None:
            total += got
        else:
            best[root] = max(got, best.get(root, 0.0))
    return total + sum(best.values())
