"""Layer I, refreshed: the index at a branch's tip, kept in one cache file per branch.

The index is a pure function of history and the tip's tree. ``Replay`` folds commits
oldest first; ``resolve`` reconciles it with the cards' headings at the tip and marks
stale entries (freshness.py). ``refresh`` keeps both in ``.git/gitmem/index-<branch>.marshal``
with the rendered I block (records.py: at the cached tip the replay is not read), and folds
in only ``git log LAST..TIP`` when history grew from the cached commit LAST; anything else
replays all of history, which gives the same result by design (tests/test_index_property.py).
"""

from __future__ import annotations

import os

from gitmem.index import records, replay
from gitmem.index.cache_file import piece
from gitmem.index.growth import advance, is_revert
from gitmem.index.model import CardEntry, Index, SectionEntry, differences, render_block
from gitmem.index.records import Cached, commits, part
from gitmem.index.replay import Replay, replay_all
from gitmem.index.resolve import Facts, entries, resolve
from gitmem.index.tiers import Split
from gitmem.memory import trailers as T
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops.history import Commit

__all__ = ["CardEntry", "Facts", "Index", "Replay", "SectionEntry", "differences", "rebuild"]
__all__ += [
    "advance",
    "card_created",
    "card_entries",
    "card_sizes",
    "last_changes",
    "refresh",
    "rendered",
    "replay_all",
    "resolve",
    "shown",
]


def _refill(repo: MemoryRepo, known: Cached, base: Cached, new: list[Commit]) -> None:
    """The index and I block after ``new`` (folded into ``known``), the entries and lines
    of each card they left alone (same blob, no entry, no revert or merge) reused from
    ``base``, as it holds them (decoded, or the cache's pieces, encoded again only for the
    cards ``new`` changed): `gitmem index` after 10 commits <= 2x a cached one (issue 21)."""
    assert base.parts is not None
    parts, touched, cards = base.parts, {c.get(T.CARD) for c in new}, known.cards(repo)
    redo = [c for c in cards if c[0] in touched or c[0] not in parts or parts[c[0]][0] != c[1]]
    again = {c.project: c for c in entries(repo, known.state, known.facts, redo)}
    if base.index is not None:
        old = {c.project: c for c in base.index.cards}
        known.index = Index(tuple(again.get(p) or old[p] for p, _ in cards))
    else:
        pieces, named = base.packed_cards(repo), base.entry_commits(repo)
        known.pieces = {p: piece(again[p].packed()) if p in again else pieces[p] for p, _ in cards}
        known.named = {p: commits(again[p]) if p in again else named[p] for p, _ in cards}
    known.parts = {p: [b, *part(again[p])] if p in again else parts[p] for p, b in cards}
    known.text = render_block([known.parts[p][1] for p, _ in cards])


# -- refreshing ---------------------------------------------------------------------------
def _cached(repo: MemoryRepo, branch: str, at: str | None = None) -> Cached | None:
    """The branch's cache (``at``: its tip, when the replay need not be read; see
    ``records.load``); a session branch without one starts from main's (it starts at
    main's tip; ``advance`` folds in what it added, or refuses when main moved on)."""
    got = records.load(repo, branch, at)
    return got if got is not None or branch == MAIN else records.load(repo, MAIN, at)


def _current(repo: MemoryRepo, branch: str) -> Cached:
    tip = repo.tip(branch)
    # A session keeps its index in memory and folds in its own commits: the chat turn's
    # 10 ms budget at 100k commits (issue 21) leaves no time to read the cache file.
    memo = repo.memo.get(("index", branch))
    if isinstance(memo, Cached) and memo.state.commit == tip:
        return memo
    in_memory = isinstance(memo, Cached) and memo.whole
    base = memo if isinstance(memo, Cached) and memo.whole else _cached(repo, branch, tip)
    if tip is None:
        got = Cached(Replay(), Facts())
    elif base is not None and base.state.commit == tip:
        got = base
    elif base is not None and (new := advance(repo, base.state, tip)) is not None:
        merges = [c.sha for c in new if len(c.parents) > 1]
        base.facts.contested.update({merge: [] for merge in merges})
        got = Cached(base.state, base.facts)
        held = base.index is not None or base.pieces is not None
        if base.parts and held and not merges and not any(is_revert(c) for c in new):
            _refill(repo, got, base, new)
        if not in_memory:
            records.save(repo, branch, got)
    else:
        got = Cached(replay.replay_all(repo, branch), base.facts if base else Facts())
        records.save(repo, branch, got)
        if branch != MAIN and tip == repo.tip(MAIN):
            # A session at main's tip: else every chat start replays all of history again.
            records.save(repo, MAIN, got)
    repo.memo[("index", branch)] = got
    return got


def refresh(repo: MemoryRepo, branch: str = MAIN) -> Index:
    """The index at ``branch``'s tip, from the cache and the commits since when it can."""
    return _current(repo, branch).resolved(repo)


def rendered(repo: MemoryRepo, branch: str = MAIN, *, full: bool = False) -> str:
    """The I block the agent sees at ``branch``'s tip (folded to the budget, tiers.py),
    as the cache keeps it when it is at the tip; ``full``: every section."""
    return _current(repo, branch).rendered(repo) if full else shown(repo, branch)[0]


def shown(repo: MemoryRepo, branch: str = MAIN) -> tuple[str, Split]:
    """The I block the agent sees at ``branch``'s tip and how it is split."""
    memo = repo.memo.get(("index", branch))
    if not isinstance(memo, Cached):
        tip = repo.tip(branch)
        got = records.served(repo, branch, tip)
        if got is None and branch != MAIN and tip is not None and not _has_cache(repo, branch):
            got = records.served(repo, MAIN, tip)  # a session branch still at main's tip
        if got is not None:
            return got
    return _current(repo, branch).folded(repo)


def card_lines(repo: MemoryRepo, branch: str, project: str) -> str | None:
    """A card's lines as the I block lists it in full (None: no such card)."""
    known = _current(repo, branch)
    if known.parts is None:
        known.resolved(repo)
    got = (known.parts or {}).get(project)
    return str(got[1]) if got else None


def card_entries(repo: MemoryRepo, branch: str, projects: set[str]) -> list[CardEntry]:
    """The index entries of the cards ``projects`` at ``branch``'s tip, as ``refresh``
    gives them, without resolving every card (the agent's unverified marks ask for few)."""
    known = _current(repo, branch)
    if known.state.commit is None:
        return []
    kept = known.kept(projects)  # (only those cards' pieces decoded)
    if kept is not None:
        return kept
    cards = [c for c in known.cards(repo) if c[0] in projects]
    return entries(repo, known.state, known.facts, cards)


def last_changes(repo: MemoryRepo, branch: str = MAIN) -> dict[str, list[str]]:
    """Each card's last change on ``branch`` as [commit, author date], least recent first
    (a card the tip no longer holds is not there)."""
    return _current(repo, branch).state.changes


def card_created(repo: MemoryRepo, project: str, branch: str = MAIN) -> str | None:
    """The commit that created ``project``'s card on ``branch`` (the first the replay saw
    adding it), None for a card never added there: where a walk of its history can stop."""
    return _current(repo, branch).state.created.get(project)


def card_sizes(repo: MemoryRepo, branch: str = MAIN) -> dict[str, list[int]]:
    """Each card at ``branch``'s tip -> [its size in bytes, each section's in order], as
    resolving measured them (no card is read again)."""
    known = _current(repo, branch)
    return {card: known.facts.sizes[blob] for card, blob in known.cards(repo)}


def _has_cache(repo: MemoryRepo, branch: str) -> bool:
    return os.path.exists(records.path(repo, branch))


def rebuild(repo: MemoryRepo, branch: str = MAIN) -> tuple[Index, Index | None]:
    """Replay all of history (reindex); returns (rebuilt, what the cache held, if any)."""
    rebuilt, cached, _ = rebuild_checked(repo, branch)
    return rebuilt, cached


def _held(repo: MemoryRepo, branch: str, at: str | None, rebuilt: Index) -> Index | None:
    """What the cache holds for ``at``: its resolved index where that differs from
    ``rebuilt``, else what its replay resolves to (the one a later fold builds on); the
    resolved index alone when the replay record is damaged (never read at that tip)."""
    old = _cached(repo, branch)
    if at is None or old is None:
        held = _cached(repo, branch, at) if at is not None else None
        return _kept_index(held) if held is not None else None
    kept = _kept_index(old) if old.state.commit == at else None
    if advance(repo, old.state, at) is None:
        return None
    return kept if kept is not None and kept != rebuilt else resolve(repo, old.state, old.facts)


def _kept_index(known: Cached) -> Index | None:
    kept = known.kept()
    return Index(tuple(kept)) if kept is not None else None


def rebuild_checked(repo: MemoryRepo, branch: str = MAIN) -> tuple[Index, Index | None, bool]:
    """``rebuild``, and whether the I block the cache serves was the rebuilt one's (or
    there was none); the cache is written anew from the rebuilt index."""
    old, there = records.whole(repo, branch)
    tip = repo.tip(branch)
    full = Cached(replay.replay_all(repo, branch), Facts())  # nothing of the cache is believed
    index = full.resolved(repo)
    new = records.packed(repo, full)
    kept = old[0] if old and old[0][1] == full.state.commit else None
    served = [kept[2], kept[5]] if kept and kept[4] == repo.config.index_tokens else None
    served_ok = served == [new[0][2], new[0][5]] or (served is None and (old or not there))
    # the same records resolve to the same index: the old one is resolved only if it differs
    same = old is not None and old[1:] == new[1:]
    cached = index if same else _held(repo, branch, full.state.commit, index)
    if full.state.commit == tip or tip is None:
        records.save(repo, branch, full, new)
        repo.memo[("index", branch)] = full
    return index, cached, bool(served_ok)
