"""Layer I: what long-term memory holds, derived only from commit trailers and card headings.

The index is a pure function of history and the branch tip's tree. ``replay``
folds commits oldest-first into a ``Replay`` state; ``resolve`` reconciles that
state with the cards' current headings. ``refresh`` keeps the state in a cache
under ``.git/gitmem/`` keyed by the commit it was built at and folds in only the
new commits when history simply grew; anything else (a merge, a rewrite, a
missing commit) rebuilds from scratch, which gives the same result by design.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field

from . import trailers as T
from .cards import sections
from .errors import GitmemError
from .git import Sha
from .history import Commit
from .repo import MAIN, MemoryRepo

CACHE_VERSION = 3  # 3: a revert may undo several commits


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

    def apply(self, c: Commit | _Rec) -> None:
        targets = list(c.reverts) or [t for t in (c.get(T.REVERTS),) if t]
        if targets:
            self.reverts[c.sha] = targets
            self._set_active(c.sha, True)
        elif c.get(T.LAYER) is None:
            card, section = c.get(T.CARD), c.get(T.SECTION)
            if card and section:
                key = f"{card}/{section}"
                value = [c.sha, c.get(T.KEYWORDS) or "", c.get(T.SUMMARY) or ""]
                self.entries.setdefault(key, []).append(value)
        self.commit = c.sha

    def current(self, key: str) -> list[str] | None:
        for value in reversed(self.entries.get(key, [])):
            if value[0] not in self.inactive:
                return value
        return None


@dataclass(frozen=True)
class SectionEntry:
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
                "sections": [{**asdict(s), "indexed": s.indexed} for s in c.sections],
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
                    out.append(f"- {s.id}: (unindexed) {s.heading}")
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
    for entry in repo.store.read_tree(f"{replay.commit}:cards"):
        project = _is_card_name(entry.name.decode("utf-8", "replace"))
        if project is None or entry.is_tree:
            continue
        info = headings.get(entry.sha)
        if info is None:
            raw = repo.store.read_blob(entry.sha) or b""
            text = raw.decode("utf-8", "replace")
            title = next(
                (ln[2:].strip() for ln in text.split("\n") if ln.startswith("# ")), project
            )
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
                kws = tuple(k.strip() for k in cur[1].split(",") if k.strip())
                secs.append(SectionEntry(sid, heading, kws, cur[2], cur[0]))
        cards.append(CardEntry(project, info[0][0], tuple(secs)))
    cards.sort(key=lambda c: c.project)
    return Index(tuple(cards))


class _Rec:
    """The part of a commit the replay needs, parsed with as little work as possible."""

    __slots__ = ("parents", "reverts", "sha", "trailers")

    def __init__(self, sha: str, parents: tuple[str, ...], trailers: dict[str, str],
                 reverts: tuple[str, ...]) -> None:
        self.sha, self.parents, self.trailers, self.reverts = sha, parents, trailers, reverts

    def get(self, key: str) -> str | None:
        return self.trailers.get(key)


_LEAN = "%H%x1f%P%x1f%(trailers:only,unfold,separator=%x1e)"


def _replay_log(repo: MemoryRepo, rev: str) -> list[_Rec]:
    """Commits of ``rev`` oldest first (parents before children), one ``git log``."""
    raw = repo.git.run("log", "-z", "--reverse", "--topo-order", f"--format={_LEAN}", rev)
    out = []
    canon = T.canonical
    for record in raw.stdout.decode("utf-8", "replace").split("\0"):
        sha, _, rest = record.strip("\n").partition("\x1f")
        if not sha:
            continue
        parents, _, block = rest.partition("\x1f")
        trailers: dict[str, str] = {}
        reverts: list[str] = []
        if block:
            for item in block.split("\x1e"):
                key, sep, value = item.partition(":")
                name = canon(key) if sep else None
                if name:
                    value = value.strip()
                    trailers.setdefault(name, value)
                    if name == T.REVERTS and value:
                        reverts.append(value)
        out.append(_Rec(sha, tuple(parents.split()), trailers, tuple(reverts)))
    return out


def replay_all(repo: MemoryRepo, branch: str = MAIN) -> Replay:
    state = Replay()
    tip = repo.tip(branch)
    if tip is not None:
        for c in _replay_log(repo, tip):
            state.apply(c)
    return state


# -- the cache -----------------------------------------------------------------
def _cache_path(repo: MemoryRepo, branch: str) -> str:
    return str(repo.gitmem_dir / f"index-{branch.replace('/', '%')}.json")


def _load(repo: MemoryRepo, branch: str) -> tuple[Replay, Headings] | None:
    try:
        with open(_cache_path(repo, branch), encoding="utf-8") as fh:
            data = json.load(fh)
        if data.get("version") != CACHE_VERSION:
            return None
        state = Replay(data["commit"], data["entries"], set(data["inactive"]), data["reverts"])
        return state, data["headings"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _save(repo: MemoryRepo, branch: str, state: Replay, headings: Headings) -> None:
    path = _cache_path(repo, branch)
    data = {
        "version": CACHE_VERSION,
        "commit": state.commit,
        "entries": state.entries,
        "inactive": sorted(state.inactive),
        "reverts": state.reverts,
        "headings": headings,
    }
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, separators=(",", ":")))
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
    for c in new:
        if c.parents != (prev,):
            return False  # a merge or a rewrite: replay from scratch instead
        prev = c.sha
    if prev != tip:
        return False
    for c in new:
        state.apply(c)
    return True


def refresh(repo: MemoryRepo, branch: str = MAIN) -> Index:
    """The index at ``branch``'s tip, updating the cache incrementally when it can."""
    tip = repo.tip(branch)
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
        return index
    return resolve(repo, state, headings)


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
    cached, headings = None, loaded[1] if loaded else {}
    if loaded and tip is not None and (loaded[0].commit == tip or _advance(repo, loaded[0], tip)):
        cached = resolve(repo, loaded[0], headings)
    state = replay_all(repo, branch)
    used: Headings = {}
    # Headings are parsed from blobs and keyed by blob id: reusing them is still a pure
    # function of the tree, so the rebuild stays independent of the cached trailers.
    index = resolve(repo, state, headings, used)
    _save(repo, branch, state, used)
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
