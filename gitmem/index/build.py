"""Layer I, refreshed: the index at a branch's tip, kept in one cache file per branch.

The index is a pure function of history and the tip's tree. ``Replay`` folds commits
oldest first; ``resolve`` reconciles it with the cards' headings at the tip and marks
stale entries (freshness.py). ``refresh`` keeps both in ``.git/gitmem/index-<branch>.marshal``
with the rendered I block, and folds in only ``git log LAST..TIP`` when history grew from
the cached commit LAST; anything else replays all of history, which gives the same
result by design (tests/test_index_property.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from gitmem.index import cache_file, replay, tiers
from gitmem.index.growth import advance, is_revert
from gitmem.index.model import (
    CardEntry,
    Index,
    SectionEntry,
    differences,
    render_block,
    render_card,
)
from gitmem.index.replay import Replay, replay_all
from gitmem.index.resolve import Facts, entries, layout, resolve
from gitmem.index.tiers import Split, brief
from gitmem.memory import branch_files
from gitmem.memory import trailers as T
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops.history import Commit

__all__ = ["CardEntry", "Facts", "Index", "Replay", "SectionEntry", "differences", "rebuild"]
__all__ += [
    "advance",
    "card_created",
    "card_entries",
    "last_changes",
    "refresh",
    "rendered",
    "replay_all",
    "resolve",
    "shown",
]

VERSION = 19  # of the cache file's layout: another one is not read


def _refill(repo: MemoryRepo, known: Cached, parts: dict[str, list[str]], new: list[Commit]) -> str:
    """The I block after ``new`` (folded into ``known``), the lines of each card they left
    alone (same blob, no entry, no revert or merge) reused from ``parts``: `gitmem index`
    after 10 commits <= 2x a cached one at 100k commits (issue 21)."""
    touched = {c.get(T.CARD) for c in new}
    cards = layout(repo, str(known.state.commit), known.facts)
    redo = [c for c in cards if c[0] in touched or parts.get(c[0], [""])[0] != c[1]]
    again = {c.project: _part(c) for c in entries(repo, known.state, known.facts, redo)}
    known.parts = {p: [blob, *again[p]] if p in again else parts[p] for p, blob, _ in cards}
    return render_block([known.parts[p][1] for p, _, _ in cards])


def _part(c: CardEntry) -> list[Any]:
    return [render_card(c), brief(c)]


# -- the cache file: the rendered blocks, then the replay and the facts -------------------
@dataclass
class Cached:
    """A replay with its facts, and the index and I block they resolve to (when known)."""

    state: Replay
    facts: Facts
    index: Index | None = None
    text: str | None = None
    parts: dict[str, list[Any]] | None = None  # card -> [its blob, its lines of ``text``, brief]
    shown: tuple[int, str, Split] | None = None  # (budget, the block the agent sees, split)

    def resolved(self, repo: MemoryRepo) -> Index:
        if self.index is None:
            commit = self.state.commit
            cards = layout(repo, commit, self.facts) if commit else []
            self.index = Index(tuple(entries(repo, self.state, self.facts, cards)))
            if self.parts is None:
                self.parts = {
                    c.project: [blob, *_part(c)]
                    for (_, blob, _), c in zip(cards, self.index.cards, strict=True)
                }
        return self.index

    def rendered(self, repo: MemoryRepo) -> str:
        if self.text is None:
            index, parts = self.resolved(repo), self.parts
            assert parts is not None
            self.text = render_block([parts[c.project][1] for c in index.cards])
        return self.text

    def folded(self, repo: MemoryRepo, branch: str) -> tuple[str, Split]:
        """The block the agent sees: ``rendered`` folded to the budget (tiers.py)."""
        budget = repo.config.index_tokens
        if self.shown is None or self.shown[0] != budget:
            text = self.rendered(repo)
            if self.parts is None:
                self.index = None
                self.resolved(repo)
            assert self.parts is not None
            got = tiers.shown(repo, self.state.changes, text, self.parts)
            self.shown = (budget, *got)
        return self.shown[1], self.shown[2]


def _path(repo: MemoryRepo, branch: str) -> str:
    return branch_files.path(repo, branch, "marshal")


def _read(repo: MemoryRepo, branch: str, want: int) -> tuple[list[Any] | None, bool]:
    """(the cache's first ``want`` records or None, whether a file was there)."""
    got, there = cache_file.read(_path(repo, branch), 2, want)
    if not got or not isinstance(got[0], list) or got[0][:1] != [VERSION]:
        return None, there
    return got, there


def _served(repo: MemoryRepo, branch: str, tip: str | None) -> tuple[str, Split] | None:
    """The I block the agent sees kept for ``tip`` and the budget, or None: its own record
    only, behind its own digest (the warm-cache read commands' 250 ms at 100k commits)."""
    head = cache_file.read_first(_path(repo, branch))
    if not isinstance(head, list) or head[:2] != [VERSION, tip] or len(head) != 7:
        return None
    split = Split.from_json(head[6])
    ok = head[4] == repo.config.index_tokens and isinstance(head[5], str)
    return (head[5], split) if ok and split is not None else None


def load(repo: MemoryRepo, branch: str) -> Cached | None:
    got, _ = _read(repo, branch, 2)
    if got is None:
        return None
    head, data = got
    try:
        entries = {key: [piece] for key, piece in data["entries"].items()}
        state = Replay(
            data["commit"],
            entries,
            set(data["inactive"]),
            data["reverts"],
            data["merges"],
            data["entry_blobs"],
            data["digests"],
            data["changes"],
            data["created"],
        )
        facts = Facts(data["blobs"], data["written"], data["contested"])
    except (KeyError, TypeError):
        return None
    if len(head) != 7 or head[1] != state.commit or not isinstance(head[3], dict):
        return Cached(state, facts)
    split = Split.from_json(head[6])
    shown = (head[4], head[5], split) if split is not None else None
    return Cached(state, facts, text=head[2], parts=head[3], shown=shown)


def save(repo: MemoryRepo, branch: str, known: Cached) -> None:
    """Write the cache whole (readers see the old file or the new one), with only the
    facts the tip needs: it grows with the cards, not with history."""
    text = known.rendered(repo)  # first: resolving learns the facts kept below
    shown, split = known.folded(repo, branch)
    state, facts, index = known.state, known.facts, known.index
    written, entry_blobs = facts.written, state.blobs  # whole until a resolve says which
    if index is not None:  # are used (an older entry made current again is looked up)
        used = {s.commit for c in index.cards for s in c.sections if s.commit}
        written = {k: v for k, v in written.items() if k.partition("\0")[2] in used}
        entry_blobs = {k: v for k, v in entry_blobs.items() if k in used}
    keep = Facts(
        {b: facts.blobs[b] for b in _tip_blobs(repo, state.commit) if b in facts.blobs},
        written,
        {m: facts.contested[m] for m in state.merges if m in facts.contested},
    )
    data = {
        "commit": state.commit,
        "entries": state.packed(),
        "inactive": state.inactive,
        "reverts": state.reverts,
        "merges": state.merges,
        "entry_blobs": entry_blobs,
        "digests": state.digests,  # whole: a full replay would find every one again
        "changes": state.changes,
        "created": state.created,
        "blobs": keep.blobs,
        "written": keep.written,
        "contested": keep.contested,
    }
    budget = repo.config.index_tokens
    head = [VERSION, state.commit, text, known.parts, budget, shown, split.to_json()]
    cache_file.write(_path(repo, branch), [head, data])


def _tip_blobs(repo: MemoryRepo, commit: str | None) -> list[str]:
    return [e.sha for e in repo.store.read_tree(f"{commit}:cards")] if commit else []


# -- refreshing ---------------------------------------------------------------------------
def _cached(repo: MemoryRepo, branch: str) -> Cached | None:
    """The branch's cache; a session branch without one starts from main's (it starts at
    main's tip; ``advance`` folds in what it added, or refuses when main moved on)."""
    got = load(repo, branch)
    return got if got is not None or branch == MAIN else load(repo, MAIN)


def _current(repo: MemoryRepo, branch: str) -> Cached:
    tip = repo.tip(branch)
    # A session keeps its index in memory and folds in its own commits: the chat turn's
    # 10 ms budget at 100k commits (issue 21) leaves no time to read the cache file.
    memo = repo.memo.get(("index", branch))
    if isinstance(memo, Cached) and memo.state.commit == tip:
        return memo
    in_memory = isinstance(memo, Cached)
    base = memo if isinstance(memo, Cached) else _cached(repo, branch)
    if tip is None:
        got = Cached(Replay(), Facts())
    elif base is not None and base.state.commit == tip:
        got = base
    elif base is not None and (new := advance(repo, base.state, tip)) is not None:
        merges = [c.sha for c in new if len(c.parents) > 1]
        base.facts.contested.update({merge: [] for merge in merges})
        got = Cached(base.state, base.facts)
        if base.parts is not None and not merges and not any(is_revert(c) for c in new):
            got.text = _refill(repo, got, base.parts, new)
        if not in_memory:
            save(repo, branch, got)
    else:
        got = Cached(replay.replay_all(repo, branch), base.facts if base else Facts())
        save(repo, branch, got)
        if branch != MAIN and tip == repo.tip(MAIN):
            # A session at main's tip: else every chat start replays all of history again.
            save(repo, MAIN, got)
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
        got = _served(repo, branch, tip)
        if got is None and branch != MAIN and tip is not None and not _has_cache(repo, branch):
            got = _served(repo, MAIN, tip)  # a session branch still at main's tip
        if got is not None:
            return got
    return _current(repo, branch).folded(repo, branch)


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
    if known.index is not None or known.state.commit is None:
        return [c for c in known.resolved(repo).cards if c.project in projects]
    cards = [c for c in layout(repo, known.state.commit, known.facts) if c[0] in projects]
    return entries(repo, known.state, known.facts, cards)


def last_changes(repo: MemoryRepo, branch: str = MAIN) -> dict[str, list[str]]:
    """Each card's last change on ``branch`` as [commit, author date], least recent first
    (a card the tip no longer holds is not there)."""
    return _current(repo, branch).state.changes


def card_created(repo: MemoryRepo, project: str, branch: str = MAIN) -> str | None:
    """The commit that created ``project``'s card on ``branch`` (the first the replay saw
    adding it), None for a card never added there: where a walk of its history can stop."""
    return _current(repo, branch).state.created.get(project)


def _has_cache(repo: MemoryRepo, branch: str) -> bool:
    return os.path.exists(_path(repo, branch))


def rebuild(repo: MemoryRepo, branch: str = MAIN) -> tuple[Index, Index | None]:
    """Replay all of history (reindex); returns (rebuilt, what the cache held, if any)."""
    rebuilt, cached, _ = rebuild_checked(repo, branch)
    return rebuilt, cached


def rebuild_checked(repo: MemoryRepo, branch: str = MAIN) -> tuple[Index, Index | None, bool]:
    """``rebuild``, and whether the I block the cache serves was the rebuilt one's (or
    there was none); the cache is written anew from the rebuilt index."""
    head, there = _read(repo, branch, 1)
    tip = repo.tip(branch)
    full = Cached(replay.replay_all(repo, branch), Facts())  # nothing of the cache is believed
    index = full.resolved(repo)
    kept = head[0] if head and head[0][1] == full.state.commit else None
    served = [kept[2], kept[5]] if kept and kept[4] == repo.config.index_tokens else None
    now = [full.rendered(repo), full.folded(repo, branch)[0]]
    served_ok = served == now or (served is None and (head or not there))
    old = _cached(repo, branch)
    cached = None
    at = full.state.commit
    if old is not None and at is not None and advance(repo, old.state, at) is not None:
        cached = resolve(repo, old.state, old.facts)
    if full.state.commit == tip or tip is None:
        save(repo, branch, full)
        repo.memo[("index", branch)] = full
    return index, cached, bool(served_ok)
