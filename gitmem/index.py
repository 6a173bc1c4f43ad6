"""Layer I: what long-term memory holds, derived only from commit trailers and card headings.

The index is a pure function of history and the branch tip's tree. ``replay``
folds commits oldest-first into a ``Replay`` state; ``resolve`` reconciles that
state with the cards' current headings. ``refresh`` keeps the state in a cache
under ``.git/gitmem/`` keyed by the commit it was built at and folds in only the
new commits when history simply grew; anything else (a merge, a rewrite, a
missing commit) rebuilds from scratch, which gives the same result by design.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from . import index_cache
from .cards import sections
from .git import Sha
from .index_cache import Headings
from .replay import FullReplay, Replay, advance, replay_all
from .repo import MAIN, MemoryRepo

__all__ = ["CardEntry", "Index", "Replay", "SectionEntry", "rebuild", "refresh", "rendered",
           "replay_all", "resolve"]



class SectionEntry(NamedTuple):
    """One section's line in the index (a tuple: thousands are built per refresh)."""

    id: str
    heading: str
    keywords: tuple[str, ...]
    summary: str | None
    commit: str | None

    @property
    def indexed(self) -> bool:
        return self.summary is not None


@dataclass(frozen=True)
class CardEntry:
    project: str
    title: str
    sections: tuple[SectionEntry, ...]


@dataclass(frozen=True)
class Index:
    cards: tuple[CardEntry, ...]

    def card(self, project: str) -> CardEntry | None:
        return next((c for c in self.cards if c.project == project), None)

    def to_json(self) -> list[dict[str, object]]:
        return [
            {
                "project": c.project,
                "title": c.title,
                "sections": [{**s._asdict(), "indexed": s.indexed} for s in c.sections],
            }
            for c in self.cards
        ]

    def render(self) -> str:
        """The I block exactly as the agent sees it: sorted, no dates, no shas."""
        out = [
            "<memory-index>",
            "Long-term memory cards (layer E). Each line is one section: id: summary [keywords].",
            "Read a card or one section with read_memory_card before relying on details.",
        ]
        if not self.cards:
            out.append("No cards yet.")
        for c in self.cards:
            out.append("")
            out.append(f"## {c.project}: {c.title}")
            for s in c.sections:
                if s.indexed:
                    out.append(f"- {s.id}: {s.summary} [{', '.join(s.keywords)}]")
                else:
                    kws = f" [{', '.join(s.keywords)}]" if s.keywords else ""
                    out.append(f"- {s.id}: (unindexed) {s.heading}{kws}")
        out.append("</memory-index>")
        return "\n".join(out) + "\n"


def _is_card_name(name: str) -> str | None:
    if not name.endswith(".md"):
        return None
    stem = name[:-3]
    from .names import _SLUG

    return stem if _SLUG.match(stem) else None




def resolve(
    repo: MemoryRepo, replay: Replay, headings: Headings, used: Headings | None = None
) -> Index:
    """Reconcile the replayed trailers with the card headings at ``replay.commit``.

    ``headings`` caches parsed headings by blob sha; the ones this tree uses are
    copied into ``used`` so the caller can keep the cache to the current tree.
    """
    if replay.commit is None:
        return Index(())
    cards: list[CardEntry] = []
    split_kw: dict[str, tuple[str, ...]] = {}
    for entry in repo.store.read_tree(f"{replay.commit}:cards"):
        project = _is_card_name(entry.name.decode("utf-8", "replace"))
        if project is None or entry.is_tree:
            continue
        info = headings.get(entry.sha)
        if info is None:
            raw = repo.store.read_blob(entry.sha) or b""
            text = raw.decode("utf-8", "replace")
            # No "# Title": the card's name stands in, at resolve time -- the cache is keyed
            # by blob, and two cards may hold the same bytes.
            title = next((ln[2:].strip() for ln in text.split("\n") if ln.startswith("# ")), "")
            info = [[title, ""], *([s.id, s.heading] for s in sections(text))]
            headings[entry.sha] = info
        if used is not None:
            used[entry.sha] = info
        secs = []
        for sid, heading in info[1:]:
            cur = replay.current(f"{project}/{sid}")
            if cur is None:
                secs.append(SectionEntry(sid, heading, (), None, None))
            else:
                kws = split_kw.get(cur[1])
                if kws is None:
                    kws = split_kw[cur[1]] = tuple(k.strip() for k in cur[1].split(",") if k.strip())
                # An entry without a summary (the memory tool's) leaves it unindexed.
                secs.append(SectionEntry(sid, heading, kws, cur[2] or None, cur[0]))
        cards.append(CardEntry(project, info[0][0] or project, tuple(secs)))
    cards.sort(key=lambda c: c.project)
    return Index(tuple(cards))


def refresh(repo: MemoryRepo, branch: str = MAIN) -> Index:
    """The index at ``branch``'s tip, updating the cache incrementally when it can.

    An open repo also keeps the last result in memory (keyed by commit, so it cannot go
    stale): a long-running session pays for new commits only.
    """
    tip = repo.tip(branch)
    memo = repo.memo.get(("index", branch))
    if isinstance(memo, _Memo) and memo.state.commit == tip:
        return memo.index
    if isinstance(memo, _Memo):
        state, headings = memo.state, memo.headings
    else:
        loaded = index_cache.load(repo, branch)
        state, headings = loaded if loaded else (Replay(), {})
    if state.commit != tip:
        if tip is None:
            state = Replay()
        elif not advance(repo, state, tip):
            state = replay_all(repo, branch)
        used: Headings = {}
        index = resolve(repo, state, headings, used)
        index_cache.save(repo, branch, state, used)
        headings = used
    else:
        index = resolve(repo, state, headings)
    repo.memo[("index", branch)] = _Memo(state, headings, index)
    return index


@dataclass
class _Memo:
    state: Replay
    headings: Headings
    index: Index


def rendered(repo: MemoryRepo, branch: str = MAIN) -> str:
    """The I block at ``branch``'s tip; served from the last rendering when the tip matches."""
    tip = repo.tip(branch)
    try:
        with open(index_cache.text_path(repo, branch), encoding="utf-8") as fh:
            head, version, text = fh.readline(), fh.readline(), fh.read()
        if head.strip() == str(tip) and version.strip() == str(index_cache.CACHE_VERSION):
            return text
    except OSError:
        pass
    index = refresh(repo, branch)
    index_cache.save_text(repo, branch, str(tip), index.render())
    return index.render()


def rebuild(repo: MemoryRepo, branch: str = MAIN) -> tuple[Index, Index | None]:
    """Replay all of history (reindex); returns (rebuilt, what the cache held, if any)."""
    full = FullReplay(repo, branch)  # git walks while the cache is read
    try:
        loaded = index_cache.load(repo, branch)
        state = full.result()
    finally:
        full.close()
    tip = state.commit
    old_state = None
    if loaded and tip is not None and advance(repo, loaded[0], Sha(tip)):
        old_state = loaded[0]
    headings = loaded[1] if loaded else {}
    used: Headings = {}
    # Headings are parsed from blobs and keyed by blob id: reusing them is still a pure
    # function of the tree, so the rebuild stays independent of the cached trailers.
    index = resolve(repo, state, headings, used)
    unchanged = (
        old_state is not None
        and old_state.commit == state.commit
        and old_state.entries == state.entries
        and old_state.inactive == state.inactive
        and old_state.reverts == state.reverts
    )
    cached = None
    if old_state is not None:
        same = unchanged or old_state.currents() == state.currents()
        cached = index if same else resolve(repo, old_state, headings)
    if not (unchanged and loaded is not None and loaded[1] == used):
        index_cache.save(repo, branch, state, used)  # else it would be written as it is
    repo.memo[("index", branch)] = _Memo(state, used, index)
    return index, cached


def differences(old: Index, new: Index) -> list[str]:
    """Human-readable differences between two indexes, section by section."""

    def flat(idx: Index) -> dict[str, SectionEntry]:
        return {f"{c.project} § {s.id}": s for c in idx.cards for s in c.sections}

    a, b = flat(old), flat(new)
    out = []
    for key in sorted(a.keys() | b.keys()):
        if key not in b:
            out.append(f"{key}: only in the cache")
        elif key not in a:
            out.append(f"{key}: missing from the cache")
        elif a[key] != b[key]:
            out.append(f"{key}: cache had {a[key].summary!r}, history says {b[key].summary!r}")
    return out
