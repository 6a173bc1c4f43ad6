"""The index's cache file, ``.git/gitmem/index-<branch>.marshal``, as three records, each
behind its own digest (cache_file.py) and read only by the command that needs it:

1. the I block: rendered in full, by card, and folded to the budget (``gitmem index``);
2. the resolved index with the tip's card layout (each card's blob, headings, section
   digests and sizes), each card's last change and creation (``cards``, ``status``);
3. the replay and the facts the stale marks read, for folding in new commits.

A record is believed only for the commit it names; the first two never need the third.
Each card's entry and each blob's headings and digests are pieces (cache_file.py): a
fold of 10 commits decodes and encodes the cards they changed, not the whole index.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gitmem.index import cache_file, tiers
from gitmem.index.model import CardEntry, Index, render_block, render_card
from gitmem.index.replay import Replay
from gitmem.index.resolve import Facts, Layout, entries, layout
from gitmem.index.tiers import Split, brief
from gitmem.memory import branch_files
from gitmem.memory.repo import MemoryRepo

VERSION = 21  # of the cache file's layout: another one is not read
RECORDS = 3


def part(c: CardEntry) -> list[Any]:
    return [render_card(c), brief(c)]


def commits(c: CardEntry) -> str:
    """The entry commits ``c``'s sections name, space-separated (record 3 keeps them)."""
    return " ".join(s.commit for s in c.sections if s.commit)


@dataclass
class Cached:
    """A replay with its facts, and the index and I block they resolve to (when known).
    ``whole`` False: only records 1 and 2 were read, so ``state`` holds its commit, last
    changes and creations and nothing to fold onto."""

    state: Replay
    facts: Facts
    index: Index | None = None
    text: str | None = None
    parts: dict[str, list[Any]] | None = None  # card -> [its blob, its lines of ``text``, brief]
    shown: tuple[int, str, Split] | None = None  # (budget, the block the agent sees, split)
    layout: Layout | None = None  # the tip's cards (resolve.layout), once known
    whole: bool = True
    # card -> its entry as record 2 kept it (a piece), while ``index`` is not decoded
    pieces: dict[str, bytes] | None = None
    # card -> the entry commits its sections name (record 3): what ``packed`` keeps facts of
    named: dict[str, str] | None = None

    def cards(self, repo: MemoryRepo) -> Layout:
        if self.layout is None:
            commit = self.state.commit
            self.layout = layout(repo, commit, self.facts) if commit else []
        return self.layout

    def kept(self, projects: set[str] | None = None) -> list[CardEntry] | None:
        """The entries of the cards ``projects`` (None: all) as the index or its pieces
        hold them, in order, decoding only those; None when they do not hold them all."""
        if self.index is not None:
            return [c for c in self.index.cards if projects is None or c.project in projects]
        if self.pieces is None or self.layout is None:
            return None
        wanted = [c for c, _ in self.layout if projects is None or c in projects]
        got = [cache_file.unpiece(self.pieces.get(c)) for c in wanted]
        try:
            return [CardEntry.unpacked(data) for data in got]
        except (TypeError, ValueError):  # not a piece of ours: resolved again
            return None

    def resolved(self, repo: MemoryRepo) -> Index:
        if self.index is None:
            cards = self.cards(repo)
            kept = self.kept()
            got = kept if kept is not None else entries(repo, self.state, self.facts, cards)
            self.index, self.pieces = Index(tuple(got)), None
            if self.parts is None:
                self.parts = {
                    c.project: [blob, *part(c)]
                    for (_, blob), c in zip(cards, self.index.cards, strict=True)
                }
        return self.index

    def packed_cards(self, repo: MemoryRepo) -> dict[str, bytes]:
        """Each card's entry as record 2 keeps it: the pieces read where nothing decoded them."""
        if self.pieces is not None and self.layout is not None and self._all(self.pieces):
            return {c: self.pieces[c] for c, _ in self.layout}
        return {c.project: cache_file.piece(c.packed()) for c in self.resolved(repo).cards}

    def _all(self, by_card: dict[str, Any]) -> bool:
        return self.layout is not None and all(c in by_card for c, _ in self.layout)

    def entry_commits(self, repo: MemoryRepo) -> dict[str, str]:
        """Each card -> the entry commits its sections name, space-separated."""
        named, layout = self.named, self.layout
        if named is not None and self.index is None and layout is not None and self._all(named):
            return {c: named[c] for c, _ in layout}
        return {c.project: commits(c) for c in self.resolved(repo).cards}

    def rendered(self, repo: MemoryRepo) -> str:
        if self.text is None:
            index, parts = self.resolved(repo), self.parts
            assert parts is not None
            self.text = render_block([parts[c.project][1] for c in index.cards])
        return self.text

    def folded(self, repo: MemoryRepo) -> tuple[str, Split]:
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


def path(repo: MemoryRepo, branch: str) -> str:
    return branch_files.path(repo, branch, "marshal")


def whole(repo: MemoryRepo, branch: str) -> tuple[list[Any] | None, bool]:
    """(every record of the file as kept, None unless each is whole; whether a file was
    there): what reindex compares with the records the rebuild writes."""
    got, there = cache_file.read(path(repo, branch), RECORDS, RECORDS)
    ok = got and isinstance(got[0], list) and len(got[0]) == 7 and got[0][0] == VERSION
    return (got if ok else None), there


def served(repo: MemoryRepo, branch: str, tip: str | None) -> tuple[str, Split] | None:
    """The I block the agent sees kept for ``tip`` and the budget, or None: its own record
    only, behind its own digest (the warm-cache read commands' 250 ms at 100k commits)."""
    got = cache_file.read_leading(path(repo, branch), 1)
    first = got[0] if got else None
    if not isinstance(first, list) or first[:2] != [VERSION, tip] or len(first) != 7:
        return None
    split = Split.from_json(first[6])
    ok = first[4] == repo.config.index_tokens and isinstance(first[5], str)
    return (first[5], split) if ok and split is not None else None


def load(repo: MemoryRepo, branch: str, at: str | None = None) -> Cached | None:
    """The branch's cache; ``at``: a tip for which records 1 and 2 alone serve (the
    replay record is then not read), else the whole file (each record parsed once)."""
    if at is None:
        whole, _ = cache_file.read(path(repo, branch), RECORDS, RECORDS)
        return _whole(_known(whole[:2]), whole[2]) if whole else None
    got = cache_file.read_leading(path(repo, branch), 2)
    known = _known(got) if got else None
    if known is None or known.state.commit == at:
        return known
    data = cache_file.read_leading(path(repo, branch), 1, skip=2)
    return _whole(known, data[0]) if data else None


def _known(got: list[Any]) -> Cached | None:
    """Records 1 and 2: all a command at their commit needs."""
    first, second = got
    try:
        state = Replay(second["commit"], changes=second["changes"], created=second["created"])
        facts = Facts(sizes=second["sizes"], kept=dict(second["blobs"]))
        pieces = dict(second["index"])
        cards = [(c, b) for c, b in second["layout"] if b in facts.kept and c in pieces]
    except (KeyError, TypeError, ValueError):
        return None
    if len(cards) != len(second["layout"]):
        return None
    if not isinstance(first, list) or first[:1] != [VERSION] or len(first) != 7:
        return None
    if first[1] != state.commit:
        return None
    if not isinstance(first[3], dict):
        return Cached(state, facts, layout=cards, whole=False, pieces=pieces)
    split = Split.from_json(first[6])
    shown = (first[4], first[5], split) if split is not None else None
    return Cached(state, facts, None, first[2], first[3], shown, cards, False, pieces)


def _whole(known: Cached | None, data: Any) -> Cached | None:
    """``known`` (records 1 and 2) with the replay record ``data``: what a fold needs."""
    if known is None:
        return None
    try:
        state = Replay(
            data["commit"],
            {key: [piece] for key, piece in data["entries"].items()},
            set(data["inactive"]),
            data["reverts"],
            data["merges"],
            data["entry_blobs"],
            data["digests"],
            known.state.changes,
            known.state.created,
        )
        facts = Facts(known.facts.blobs, data["written"], data["contested"], known.facts.sizes)
        facts.kept, named = known.facts.kept, dict(data["named"])
    except (KeyError, TypeError, ValueError):
        return None
    if state.commit != known.state.commit:
        return None
    known.state, known.facts, known.whole, known.named = state, facts, True, named
    return known


def save(repo: MemoryRepo, branch: str, known: Cached, got: list[Any] | None = None) -> None:
    """Write the cache whole (readers see the old file or the new one); ``got``: its
    records as ``packed`` gave them already."""
    cache_file.write(path(repo, branch), got or packed(repo, known))


def packed(repo: MemoryRepo, known: Cached) -> list[Any]:
    """The three records of ``known``, with only the facts the tip needs: the file grows
    with the cards, not with history."""
    assert known.whole
    text = known.rendered(repo)  # first: resolving learns the facts kept below
    shown, split = known.folded(repo)
    state, facts, cards = known.state, known.facts, known.cards(repo)
    named = known.entry_commits(repo)
    used = set(" ".join(named.values()).split())
    resolved = {
        "commit": state.commit,
        "index": known.packed_cards(repo),
        "layout": [[card, blob] for card, blob in cards],
        "blobs": {blob: facts.piece(blob) for _, blob in cards},
        "sizes": {blob: facts.sizes[blob] for _, blob in cards},
        "changes": state.changes,
        "created": state.created,
    }
    data = {
        "commit": state.commit,
        "entries": state.packed(),
        "inactive": state.inactive,
        "reverts": state.reverts,
        "merges": state.merges,
        # an older entry made current again (a revert) is looked up again
        "entry_blobs": {k: v for k, v in state.blobs.items() if k in used},
        "digests": state.digests,  # whole: a full replay would find every one again
        "written": {k: v for k, v in facts.written.items() if k.partition("\0")[2] in used},
        "contested": {m: facts.contested[m] for m in state.merges if m in facts.contested},
        "named": named,
    }
    budget = repo.config.index_tokens
    first = [VERSION, state.commit, text, known.parts, budget, shown, split.to_json()]
    return [first, resolved, data]
