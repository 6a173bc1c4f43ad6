"""``search``: ranked search over cards, their history and session transcripts.

One search for the chat tool, MCP and ``gitmem search``. Documents are the current
section values (heading, text, and the section's index keywords and summary, weighted),
every past value with the dates it held (``cache.current``), and transcript turns --
committed ones from the search index, live ones of running sessions read at query time.
Ranking is BM25 over weighted term counts (``terms`` folds, stems and drops stop
words); a query word that matches nothing simply adds nothing. A query that asks for
the past ("before", "previously") ranks past values first; otherwise the value in force
wins over its own history.

The query is model text: it is checked here (not empty, bounded, no control
characters) and never handed to git.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

from gitmem.errors import InvalidInput
from gitmem.features import session_live
from gitmem.features.session_live import transcript_file
from gitmem.index import build as index_build
from gitmem.memory import names
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.search import bm25, cache, hits, neighbours, windows
from gitmem.search.dates import When
from gitmem.search.documents import CURRENT, GONE, PAST, TURN, Doc, Read, turn_docs
from gitmem.search.hits import Hit as Hit
from gitmem.search.hits import SearchResult as SearchResult
from gitmem.search.related import Related, labels_with
from gitmem.search.state import Searchable, day
from gitmem.search.terms import query_terms, terms

MAX_LIMIT = 50
MAX_QUERY_CHARS = 1000
PAST_DEFAULT, PAST_ASKED, TURN_WEIGHT = 0.6, 1.3, 0.7
DATE_BOOST = 2.0  # a document dated as the query asks
BALANCE = 0.5  # a kind's best hit goes first when it scores this share of the top
RECENT_POOL, RECENT_LIFT = 100, 0.5  # "now": the best 100 turns, the latest lifted by half
NEWS_LIFT = 1.0  # a dated query: of the best 100 hits, the rarest-worded lifted by this
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def check_query(query: object) -> str:
    """The query, or InvalidInput naming what is wrong with it."""
    if not isinstance(query, str):
        raise InvalidInput("query is required and must be a string")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(
            f"query is {len(query)} characters; at most {MAX_QUERY_CHARS}: search with a few "
            "words (client or project name and the topic)"
        )
    if _CONTROL.search(query):
        raise InvalidInput("query contains control characters; use plain words")
    if not query.strip():
        raise InvalidInput("query must not be empty")
    return query


def _live_docs(state: Searchable, live: list[Path]) -> list[Doc]:
    """Turns of running sessions' transcripts that the branch has not committed yet."""
    docs: list[Doc] = []
    for path in live:
        try:
            lines = path.read_bytes().split(b"\n")
        except OSError:
            continue
        known = state.sessions.get(path.stem)
        start, last = 0, None
        if known and known[0] <= len(lines):
            start, last = known[0], state.doc(known[2][-1]) if known[2] else None
        docs.extend(turn_docs(path.stem, lines, start, last))
    return docs


def rank(
    state: Searchable,
    query: str,
    read: Read,
    limit: int = 10,
    extra: list[Doc] | None = None,
    as_of: str = "",
    related: Related | None = None,
) -> list[Hit]:
    """The best ``limit`` hits for ``query`` (``extra``: live turns beside the state's
    documents; ``as_of``: only what memory held on that ISO date); ``read`` reads the card
    blobs past values are shown from; ``related``: the words the memory's index entries
    relate, looked for beside the query's own."""
    q = query_terms(query)
    side = extra or []
    weighted, groups = neighbours.expand(q.weighted, lambda t: state.posting(t) is not None)
    if related is not None:
        weighted = related.expand(weighted, lambda term: labels_with(state, term, related))
    factor = [1.0] * (max(CURRENT, PAST, TURN, GONE) + 1)  # by kind; a current section 1
    factor[PAST] = PAST_ASKED if q.past else PAST_DEFAULT
    factor[TURN] = TURN_WEIGHT
    if as_of or q.when:  # the value in force then is the one asked for, current or past now
        factor[PAST] = 1.0
    scores = bm25.scores(state, weighted, side, groups, factor)  # each kind's weight in
    parts = windows.lift(state, scores, weighted, groups)  # current sections: weight 1

    def doc(i: int) -> Doc:
        return state.doc(i) if i >= 0 else side[-1 - i]

    if as_of:
        scores = _held(state, side, scores, as_of)
    ranked = [(-score, i) for i, score in scores.items()]
    below: Iterable[tuple[float, int]] = ()  # what no lift can bring among the best
    if q.when is not None:
        ranked, below = _on_the_days(state, side, ranked, q.when, _read(limit * 2))
        ranked = _news_first(state, ranked, doc, q.weighted)
    elif q.now and not as_of:
        ranked = _recent_first(ranked, doc)
    stems = set(q.weighted)
    own_past = bool(q.past or q.when or as_of)
    chosen = _balanced(list(_distinct(ranked, doc, own_past, limit * 2, below)), limit)
    return [hits.make(d, round(-neg, 3), stems, read, parts.get(i, 0)) for neg, i, d in chosen]


def _distinct(
    ranked: list[tuple[float, int]],
    doc: Any,
    past_asked: bool,
    most: int,
    below: Iterable[tuple[float, int]] = (),
) -> Iterator[tuple[float, int, Doc]]:
    """The best documents, at most ``most``: one per turn and speaker (its best message),
    one per section value kind (the best past one), and no past value below its
    section's value in force unless the query asks for the past (``past_asked``);
    ``below``: documents that all rank below ``ranked``'s, read only if those run out."""
    seen: set[tuple[str, str, int]] = set()
    for neg, doc_id in _best_first(ranked, _read(most), below):
        d = doc(doc_id)
        key = (d.ref, d.heading, TURN) if d.kind == TURN else (d.card, d.section, d.kind)
        if key in seen:
            continue
        if d.kind == PAST and not past_asked and (d.card, d.section, CURRENT) in seen:
            continue  # the section is named already, by its value in force
        seen.add(key)
        yield neg, doc_id, d
        most -= 1
        if not most:
            return


def _read(most: int) -> int:
    """How many of the best documents are picked to find ``most`` distinct hits."""
    return most * 3 + 20


def _recent_first(ranked: list[tuple[float, int]], doc: Any) -> list[tuple[float, int]]:
    """The best turns lifted by how recent they are, for a query that asks what holds now:
    the last thing said of it is the answer, not the first (sections: their value in force
    is already the current one)."""
    top = heapq.nsmallest(RECENT_POOL, ranked)
    docs = [(neg, i, doc(i)) for neg, i in top]
    turns = [(neg, i, d.date) for neg, i, d in docs if d.kind == TURN]
    if len(turns) < 2:
        return ranked
    first, last = min(t[2] for t in turns), max(t[2] for t in turns)
    span = _days(first, last) or 1
    lifted = {i: neg * (1 + RECENT_LIFT * _days(first, when) / span) for neg, i, when in turns}
    return [(lifted.get(i, neg), i) for neg, i in ranked]


def _news_first(
    state: Searchable, ranked: list[tuple[float, int]], doc: Any, asked: dict[str, float]
) -> list[tuple[float, int]]:
    """The best turns and current sections lifted by how rare their other words are, for
    a dated query: the date picks every turn and section of those days, and what was told
    then ("I got an offer from the hospital") says rarer words than what is said every
    day ("how is the family?"). Each kind is scaled against its own: a section is longer."""
    rarity: dict[int, float] = {}
    of_kind: dict[int, list[int]] = {TURN: [], CURRENT: []}
    idf = _idf(state)
    kinds = state.kinds
    for _, i in heapq.nsmallest(RECENT_POOL, ranked):
        if (kinds[i] if i >= 0 else TURN) not in of_kind:
            continue  # a past value: its text is not read
        d = doc(i)
        got = [idf(term) for term in set(terms(d.text)) - asked.keys()]
        rarity[i] = sum(got) / len(got) if got else 0.0
        of_kind[d.kind].append(i)
    lift: dict[int, float] = {}
    for ids in of_kind.values():
        if len(ids) < 2:
            continue
        low, high = min(rarity[i] for i in ids), max(rarity[i] for i in ids)
        lift.update({i: 1 + NEWS_LIFT * (rarity[i] - low) / ((high - low) or 1.0) for i in ids})
    return [(neg * lift.get(i, 1.0), i) for neg, i in ranked]


def _idf(state: Searchable) -> Callable[[str], float]:
    """A term's BM25 idf, each term's worked out once a query (the best 100 hits share
    most of their words) from how many documents hold it, never reading its postings."""
    n, known = max(state.live, 1), dict[str, float]()

    def idf(term: str) -> float:
        if (got := known.get(term)) is None:
            df = state.df(term) or 1
            got = known[term] = math.log(1 + (n - df + 0.5) / (df + 0.5))
        return got

    return idf


def _days(a: str, b: str) -> int:
    try:
        return (date.fromisoformat(b[:10]) - date.fromisoformat(a[:10])).days
    except ValueError:
        return 0


def _held(
    state: Searchable, side: list[Doc], scores: dict[int, float], day_: str
) -> dict[int, float]:
    """``scores`` of what memory held on ``day_``: written by then, not yet replaced
    (read from the state's day numbers, not from each document)."""
    days, kinds, by = state.days, state.kinds, day(day_)
    out = {
        i: score
        for i, score in scores.items()
        if i >= 0 and days[2 * i] <= by and (kinds[i] != PAST or days[2 * i + 1] > by)
    }
    out.update((i, v) for i, v in scores.items() if i < 0 and side[-1 - i].date[:10] <= day_)
    return out


def _on_the_days(
    state: Searchable,
    side: list[Doc],
    ranked: list[tuple[float, int]],
    when: When,
    first: int,
) -> tuple[list[tuple[float, int]], Iterator[tuple[float, int]]]:
    """A dated query's hits: what was written (a past value: or replaced) on the days
    asked for counts DATE_BOOST times. Only what can so reach the best ``first`` (or
    RECENT_POOL, which ``_news_first`` lifts from) is looked at, by the state's day
    numbers, each day's answer worked out once; the rest stays below it, as it is (a
    query scores ~40k documents at 100k commits; reading each one's date took 60 ms).
    Returns (those looked at, the rest)."""
    pool = heapq.nsmallest(max(first, RECENT_POOL), ranked)
    if not pool:
        return ranked, iter(())
    cut = pool[-1][0] / DATE_BOOST
    head = [got for got in ranked if got[0] <= cut]
    days, kinds = state.days, state.kinds
    own = [i for _, i in head if i >= 0]
    seen = {days[2 * i] for i in own} | {days[2 * i + 1] for i in own if kinds[i] == PAST}
    on = {n for n in seen if n and when.holds(date.fromordinal(n).isoformat())}
    lifted = {i for i in own if days[2 * i] in on or (kinds[i] == PAST and days[2 * i + 1] in on)}
    lifted.update(i for _, i in head if i < 0 and when.holds(side[-1 - i].date))
    head = [(neg * DATE_BOOST, i) if i in lifted else (neg, i) for neg, i in head]
    return head, (got for got in ranked if got[0] > cut)


def _balanced(found: list[tuple[float, int, Doc]], limit: int) -> list[tuple[float, int, Doc]]:
    """The best hit of each kind first when the other kind's best is close (one card's
    sections never fill every slot above a conversation, nor the reverse), then by score;
    only these become hits (a past value's is read from git)."""
    if not found:
        return found
    top = round(-found[0][0], 3)
    firsts: list[tuple[float, int, Doc]] = []
    for turn in (False, True):
        best = next((h for h in found if (h[2].kind == TURN) == turn), None)
        if best is not None and round(-best[0], 3) >= BALANCE * top:
            firsts.append(best)
    rest = [h for h in found if all(h is not f for f in firsts)]
    firsts.sort(key=lambda h: -round(-h[0], 3))
    return (firsts + rest)[:limit]


def _best_first(
    ranked: list[tuple[float, int]], first: int, below: Iterable[tuple[float, int]]
) -> Iterator[tuple[float, int]]:
    """(-score, doc) lowest first: the best ``first`` picked without sorting all, then the
    rest, then ``below`` (needed only when many of the best are the same section's
    older values)."""
    top = heapq.nsmallest(first, ranked)
    yield from top
    if len(ranked) > first:
        yield from sorted(ranked)[first:]
    yield from sorted(below)


def search(
    repo: MemoryRepo,
    query: str,
    limit: int = 10,
    *,
    branch: str = MAIN,
    live: list[Path] | None = None,
    as_of: str | None = None,
) -> SearchResult:
    """The best ``limit`` hits for ``query`` on ``branch``: sections current and past,
    and transcript turns (those of running sessions not committed yet included, and of
    the ``live`` transcripts given); ``as_of`` (a date,
    YYYY-MM-DD): what memory said that day, the sections as they were then."""
    query = check_query(query)
    day = check_day(as_of) if as_of is not None else ""
    running = (transcript_file(repo, sid) for sid in session_live.listed(repo))
    live = sorted({*(live or []), *running})
    limit = max(1, min(limit, MAX_LIMIT))
    branch = names.branch(branch)
    try:
        state: Searchable = cache.searchable(repo, branch)
        return _search(state, repo, query, limit, live or [], day, branch)
    except cache.Stale:  # the file changed under this search: never served, made again
        repo.memo.pop(("search", branch), None)
        return _search(cache.current(repo, branch), repo, query, limit, live or [], day, branch)


def check_day(value: object) -> str:
    """``value`` as an ISO date (YYYY-MM-DD), or InvalidInput naming the form."""
    text = str(value)
    try:
        if len(text) == 10:
            return date.fromisoformat(text).isoformat()
    except ValueError:
        pass
    raise InvalidInput(f"as of {value!r}: not a date; give the day as YYYY-MM-DD (2026-03-01)")


def _search(
    state: Searchable,
    repo: MemoryRepo,
    query: str,
    limit: int,
    live: list[Path],
    as_of: str,
    branch: str = MAIN,
) -> SearchResult:
    extra = _live_docs(state, live)
    related = _related(repo, branch, state.commit)
    found = rank(state, query, repo.store.read_blob, limit, extra, as_of, related)
    return SearchResult(query, tuple(found))


def _related(repo: MemoryRepo, branch: str, commit: str | None) -> Related:
    """The related words of the branch's index entries, made once per commit."""
    got = repo.memo.get(("related", branch))
    if isinstance(got, tuple) and got[0] == commit:
        return got[1]  # type: ignore[no-any-return]
    related = Related(index_build.refresh(repo, branch))
    repo.memo[("related", branch)] = (commit, related)
    return related
