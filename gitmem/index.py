"""Layer I: what long-term memory holds, derived only from commit trailers and card headings.

The index is a pure function of history and the branch tip's tree. ``replay``
folds commits oldest-first into a ``Replay`` state; ``resolve`` reconciles that
state with the cards' current headings. ``refresh`` keeps the state in a cache
under ``.git/gitmem/`` keyed by the commit it was built at and folds in only the
new commits when history simply grew; anything else (a merge, a rewrite, a
missing commit) rebuilds from scratch, which gives the same result by design.
"""

from __future__ import annotations

import contextlib
import gc
import marshal
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from . import trailers as T
from .cards import sections
from .errors import GitmemError
from .git import Sha
from .history import Commit
from .repo import MAIN, MemoryRepo

CACHE_VERSION = 5  # 3: multi-revert; 4: untitled cards; 5: summary-less entries


@dataclass
class Replay:
    """Everything the trailers said, in order: enough to resolve the index at any point."""

    commit: str | None = None
    # "card/section" -> [[sha, "kw1, kw2", summary], ...] oldest first
    entries: dict[str, list[list[str]]] = field(default_factory=dict)
    inactive: set[str] = field(default_factory=set)  # entry or revert commits undone
    # revert commit -> the commits it undoes (one, or all of a session's)
    reverts: dict[str, list[str]] = field(default_factory=dict)

    def _set_active(self, sha: str, active: bool) -> None:
        # Undoing a revert re-applies what it reverted, and so on down the chain.
        todo = [(sha, active)]
        for _ in range(1_000_000):  # a bound against forged cycles of trailers
            if not todo:
                return
            sha, active = todo.pop()
            if active:
                self.inactive.discard(sha)
            else:
                self.inactive.add(sha)
            todo.extend((target, not active) for target in self.reverts.get(sha, ()))

    def apply(self, c: Commit) -> None:
        self.apply_raw(c.sha, c.trailers, c.reverts)

    def apply_raw(self, sha: str, trailers: dict[str, str], reverts: tuple[str, ...]) -> None:
        targets = list(reverts) or [t for t in (trailers.get(T.REVERTS),) if t]
        if targets:
            self.reverts[sha] = targets
            self._set_active(sha, True)
        elif T.LAYER not in trailers:
            card, section = trailers.get(T.CARD), trailers.get(T.SECTION)
            if card and section:
                value = [sha, trailers.get(T.KEYWORDS) or "", trailers.get(T.SUMMARY) or ""]
                self.entries.setdefault(f"{card}/{section}", []).append(value)
        self.commit = sha

    def currents(self) -> dict[str, list[str] | None]:
        """Every key's current entry: two states that agree here resolve to the same index."""
        return {key: self.current(key) for key in self.entries}

    def current(self, key: str) -> list[str] | None:
        for value in reversed(self.entries.get(key, [])):
            if value[0] not in self.inactive:
                return value
        return None


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


Headings = dict[str, list[list[str]]]  # blob sha -> [[title, ""], [id, heading], ...]


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


_LEAN = "%H%x1f%P%x1f%(trailers:only,unfold,separator=%x1e)"
Raw = tuple[str, tuple[str, ...], dict[str, str], tuple[str, ...]]  # sha, parents, trailers, reverts


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """Pause the cyclic GC while building large acyclic structures (nothing to collect,
    but its passes over tens of thousands of new dicts and lists cost more than the work)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _replay_log(repo: MemoryRepo, rev: str) -> list[Raw]:
    """Commits of ``rev`` oldest first (parents before children), from one ``git log``."""
    raw = repo.git.output("log", "-z", "--reverse", "--topo-order", f"--format={_LEAN}", rev)
    with _no_gc():
        return _parse_lean(raw)


def _parse_lean(raw: bytes) -> list[Raw]:
    out: list[Raw] = []
    canon = {k.lower(): k for k in T.ALL_KEYS}
    reverts_key = T.REVERTS
    for record in raw.decode("utf-8", "replace").split("\0"):
        sha, _, rest = record.strip("\n").partition("\x1f")
        if not sha:
            continue
        parents, _, block = rest.partition("\x1f")
        trailers: dict[str, str] = {}
        reverts: list[str] = []
        if block:
            for item in block.split("\x1e"):
                key, _, value = item.partition(":")
                name = canon.get(key.strip().lower())
                if name:
                    value = value.strip()
                    if name not in trailers:
                        trailers[name] = value
                    if name == reverts_key and value:
                        reverts.append(value)
        out.append((sha, tuple(parents.split()), trailers, tuple(reverts)))
    return out


def replay_all(repo: MemoryRepo, branch: str = MAIN) -> Replay:
    state = Replay()
    tip = repo.tip(branch)
    if tip is not None:
        for sha, _parents, trailers, reverts in _replay_log(repo, tip):
            state.apply_raw(sha, trailers, reverts)
    return state


# -- the cache -----------------------------------------------------------------
def _cache_path(repo: MemoryRepo, branch: str) -> str:
    return str(repo.gitmem_dir / f"index-{branch.replace('/', '%')}.marshal")


def _load(repo: MemoryRepo, branch: str) -> tuple[Replay, Headings] | None:
    try:
        with open(_cache_path(repo, branch), "rb") as fh:
            blob = fh.read()  # marshal.load on a file reads it in tiny pieces: 5x slower
        with _no_gc():
            data = marshal.loads(blob)
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            return None
        state = Replay(data["commit"], data["entries"], set(data["inactive"]), data["reverts"])
        return state, data["headings"]
    except (OSError, ValueError, KeyError, TypeError, EOFError):
        return None  # no cache, another Python's marshal format, a torn file: rebuild


def cached_commit(repo: MemoryRepo, branch: str = MAIN) -> str | None:
    """The commit the index cache was built at (None without a usable cache)."""
    loaded = _load(repo, branch)
    return loaded[0].commit if loaded else None


def _save(repo: MemoryRepo, branch: str, state: Replay, headings: Headings) -> None:
    path = _cache_path(repo, branch)
    data = {
        "version": CACHE_VERSION,
        "commit": state.commit,
        "entries": state.entries,
        "inactive": state.inactive,
        "reverts": state.reverts,
        "headings": headings,
    }
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as fh:
        # marshal: builtin types only (no code runs on load), and several times faster
        # than JSON for the 10,000-entry state of a large client.
        fh.write(marshal.dumps(data))
    os.replace(tmp, path)  # readers see the old cache or the new one, never half


def _advance(repo: MemoryRepo, state: Replay, tip: Sha) -> bool:
    """Fold in commits after ``state.commit`` if history only grew linearly."""
    if state.commit is None:
        return False
    try:
        new = _replay_log(repo, f"{state.commit}..{tip}")
    except GitmemError:  # the cached commit is gone (gc after a rewrite)
        return False
    prev = state.commit
    for sha, parents, _trailers, _reverts in new:
        if parents != (prev,):
            return False  # a merge or a rewrite: replay from scratch instead
        prev = sha
    if prev != tip:
        return False
    for sha, _parents, trailers, reverts in new:
        state.apply_raw(sha, trailers, reverts)
    return True


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
        loaded = _load(repo, branch)
        state, headings = loaded if loaded else (Replay(), {})
    if state.commit != tip:
        if tip is None:
            state = Replay()
        elif not _advance(repo, state, tip):
            state = replay_all(repo, branch)
        used: Headings = {}
        index = resolve(repo, state, headings, used)
        _save(repo, branch, state, used)
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


def _text_path(repo: MemoryRepo, branch: str) -> str:
    return str(repo.gitmem_dir / f"index-{branch.replace('/', '%')}.txt")


def _save_text(repo: MemoryRepo, branch: str, commit: str | None, index: Index) -> None:
    path = _text_path(repo, branch)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(f"{commit}\n{CACHE_VERSION}\n{index.render()}")
    os.replace(tmp, path)


def rendered(repo: MemoryRepo, branch: str = MAIN) -> str:
    """The I block at ``branch``'s tip; served from the last rendering when the tip matches."""
    tip = repo.tip(branch)
    try:
        with open(_text_path(repo, branch), encoding="utf-8") as fh:
            head, version, text = fh.readline(), fh.readline(), fh.read()
        if head.strip() == str(tip) and version.strip() == str(CACHE_VERSION):
            return text
    except OSError:
        pass
    index = refresh(repo, branch)
    _save_text(repo, branch, str(tip), index)
    return index.render()


def rebuild(repo: MemoryRepo, branch: str = MAIN) -> tuple[Index, Index | None]:
    """Replay all of history (reindex); returns (rebuilt, what the cache held, if any)."""
    loaded = _load(repo, branch)
    tip = repo.tip(branch)
    old_state = None
    if loaded and tip is not None and (loaded[0].commit == tip or _advance(repo, loaded[0], tip)):
        old_state = loaded[0]
    headings = loaded[1] if loaded else {}
    state = replay_all(repo, branch)
    used: Headings = {}
    # Headings are parsed from blobs and keyed by blob id: reusing them is still a pure
    # function of the tree, so the rebuild stays independent of the cached trailers.
    index = resolve(repo, state, headings, used)
    cached = None
    if old_state is not None:
        same = old_state.currents() == state.currents()
        cached = index if same else resolve(repo, old_state, headings)
    _save(repo, branch, state, used)
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
