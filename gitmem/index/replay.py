"""Replaying history: every commit's gitmem trailers, oldest first, folded into a state.

``Replay`` is what the trailers said, in order; ``replay_all`` builds it from one
``git log``, read while git writes it, and ``advance`` folds in commits that only
extend the history it was built at. ``index.resolve`` turns a state into the index.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import dataclass, field

from gitmem.errors import GitError, GitmemError
from gitmem.git.runner import Sha, Stream
from gitmem.memory import names
from gitmem.memory import trailers as T
from gitmem.memory.history import TRAILERS, Commit, stream_log
from gitmem.memory.repo import MAIN, MemoryRepo


@dataclass
class Replay:
    """Everything the trailers said, in order: enough to resolve the index at any point."""

    commit: str | None = None
    # "card/section" -> [[sha, "kw1, kw2", summary], ...] oldest first
    entries: dict[str, list[list[str]]] = field(default_factory=dict)
    inactive: set[str] = field(default_factory=set)  # entry or revert commits undone
    # revert commit -> the commits it undoes (one, or all of a session's)
    reverts: dict[str, list[str]] = field(default_factory=dict)
    # merge commits, newest first: where two lines of history may both describe a section
    merges: list[str] = field(default_factory=list)

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
        """Fold in one commit newer than everything folded so far."""
        one = _Fold(tip=sha)
        one.add(sha, trailers, reverts)
        one.onto(self)

    def currents(self) -> dict[str, list[str] | None]:
        """Every key's current entry: two states that agree here resolve to the same index."""
        return {key: self.current(key) for key in self.entries}

    def current(self, key: str) -> list[str] | None:
        for value in reversed(self.entries.get(key, [])):
            if value[0] not in self.inactive:
                return value
        return None


# A trailer key as written -> its canonical spelling when the index replays it, else None
# (seen so far; ``trailers.written_key``).
_WRITTEN: dict[str, str | None] = {k: k for k in T.REPLAYED_KEYS}
_REPLAYED = frozenset(T.REPLAYED_KEYS)
_SPACE = " \t\n\r"  # what ``gitmem_trailers`` trims from a value


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic GC while building large acyclic structures (nothing to collect,
    but its passes over tens of thousands of new dicts and lists cost more than the work).

    What was built is kept (a state, a cache), so it goes straight to the GC's oldest
    generation (``_promote``): else the first collections after the pause would walk
    every object of it once or twice on the way there, a tenth of a 100k-commit replay.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            _promote()
            gc.enable()


def _promote() -> None:
    """Move every object the cyclic GC tracks into its oldest generation at once, without
    a pass over them (freeze then unfreeze: two list splices). They are still collected,
    at the next full collection; nothing is done while someone keeps objects frozen."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


@dataclass
class _Fold:
    """Commits folded newest first, as ``git log`` streams them.

    Entries are appended newest first and reversed at the end; reverts are kept aside
    and applied oldest first afterwards. That gives exactly the state of applying every
    commit oldest first: appending entries and (de)activating commits never read each
    other, and each revert still sees only the reverts older than itself.
    """

    tip: str | None = None
    entries: dict[str, list[list[str]]] = field(default_factory=dict)
    reverts: list[tuple[str, list[str]]] = field(default_factory=list)  # newest first
    merges: list[str] = field(default_factory=list)  # newest first
    linear: bool = True  # every commit has exactly one parent, the next one in the log
    oldest_parent: str = ""  # the parents field of the oldest commit read
    # merges folded in whose two lines of history describe no section on both sides (what
    # ``freshness.contested`` would find by reading both sides' trailers again: nothing)
    uncontested: list[str] = field(default_factory=list)

    def feed(self, piece: bytes) -> None:
        """Fold a piece of the log: ``add`` of ``trailers.gitmem_trailers`` of each
        record's block, written out in one loop (this is most of a full replay's own
        time); a block with continuation lines is left to ``gitmem_trailers`` itself."""
        below, linear = self.oldest_parent, self.linear
        entries, canon, written = self.entries, _WRITTEN, T.written_key
        card_k, section_k, keywords_k, summary_k, reverts_k, layer_k = (
            T.CARD,
            T.SECTION,
            T.KEYWORDS,
            T.SUMMARY,
            T.REVERTS,
            T.LAYER,
        )
        space = _SPACE
        for record in piece.decode("utf-8", "replace").split("\0"):
            sha, _, rest = record.lstrip("\n").partition("\x1f")
            if not sha:
                continue
            if self.tip is None:
                self.tip = sha
            elif sha != below:
                linear = False
            below, _, block = rest.partition("\x1f")
            if " " in below:
                self.merges.append(sha)
            if not block:
                continue
            if "\n " in block or "\n\t" in block or "\n\r" in block:  # to be unfolded
                self.add(sha, *T.gitmem_trailers(block))
                continue
            card = section = keywords = summary = None
            layer = False
            reverts: list[str] = []
            more: list[tuple[str, str]] = []
            for line in block.split("\n"):
                key, sep, value = line.partition(":")
                if not sep:
                    continue
                name = canon.get(key, "")
                if name == "":  # not seen yet: its canonical key if replayed, else None
                    name = written(key)
                    if name not in _REPLAYED:
                        name = None
                    if len(canon) < 256:
                        canon[key] = name
                if name is None:
                    continue
                value = value.strip(space)
                if name is card_k:
                    if card is None:
                        card = value
                elif name is section_k:
                    if section is None:
                        section = value
                    else:
                        more.append((name, value))
                elif name is keywords_k:
                    if keywords is None:
                        keywords = value
                    else:
                        more.append((name, value))
                elif name is summary_k:
                    if summary is None:
                        summary = value
                elif name is reverts_k:
                    if value:
                        reverts.append(value)
                elif name is layer_k:
                    layer = True
            if reverts:
                self.reverts.append((sha, reverts))
            elif not layer and card and section:
                entry = [sha, keywords or "", summary or ""]
                got = entries.get(key := f"{card}/{section}")
                if got is None:
                    entries[key] = [entry]
                else:
                    got.append(entry)
                lines = T.more_sections(more) if more else ""
                if lines:  # a new card describing each of its sections (gitmem import)
                    for line in lines.split("\n"):
                        sid, _, kws = line.partition("\t")
                        entries.setdefault(f"{card}/{sid}", []).append([sha, kws, ""])
        self.oldest_parent, self.linear = below, linear

    def add(self, sha: str, trailers: dict[str, str], reverts: tuple[str, ...]) -> None:
        """One commit, older than every commit added before it."""
        targets = reverts or tuple(t for t in (trailers.get(T.REVERTS),) if t)
        if targets:
            self.reverts.append((sha, list(targets)))
        elif T.LAYER not in trailers:
            card, section = trailers.get(T.CARD), trailers.get(T.SECTION)
            if card and section:
                value = [sha, trailers.get(T.KEYWORDS) or "", trailers.get(T.SUMMARY) or ""]
                got = self.entries.get(key := f"{card}/{section}")
                if got is None:
                    self.entries[key] = [value]
                else:
                    got.append(value)
                more = trailers.get(T.MORE_SECTIONS)
                if more:  # a new card describing each of its sections (gitmem import)
                    for line in more.split("\n"):
                        sid, _, kws = line.partition("\t")
                        self.entries.setdefault(f"{card}/{sid}", []).append([sha, kws, ""])

    def onto(self, state: Replay) -> None:
        """Fold these (newer) commits into ``state``, oldest first."""
        for key, values in self.entries.items():
            values.reverse()
            have = state.entries.get(key)
            if have is None:
                state.entries[key] = values
            else:
                have.extend(values)
        for sha, targets in reversed(self.reverts):
            state.reverts[sha] = targets
            state._set_active(sha, True)
        if self.merges:
            state.merges[:0] = self.merges
        if self.tip is not None:
            state.commit = self.tip


def log(repo: MemoryRepo, rev: str) -> Stream:
    """The records a fold reads: each commit's trailer block as written."""
    return stream_log(repo.git, rev, TRAILERS)


def fold(records: Stream) -> _Fold:
    """Fold each piece of the log as git writes it (parsing overlaps git's walk)."""
    folded = _Fold()
    with records, no_gc():
        for piece in records.pieces():
            folded.feed(piece)
    return folded


class FullReplay:
    """All of a branch's history replayed by one ``git log``, which starts at once: the
    caller may do other work while git walks, then takes ``result()``."""

    def __init__(self, repo: MemoryRepo, branch: str = MAIN) -> None:
        self._repo, self._branch = repo, branch
        # The blocks as written (no ``git config`` asked first: a ``trailer.<token>.key``
        # alias renames nothing in them), read by gitmem alone.
        self._log = log(repo, f"refs/heads/{names.branch(branch)}")
        repo.store.start()  # git cat-file starts while git walks: the tip is read next

    def result(self) -> Replay:
        state = Replay()
        try:
            folded = fold(self._log)
        except GitError:
            if self._repo.tip(self._branch) is None:
                return state  # a branch with no commits yet: nothing to replay
            raise
        with no_gc():
            folded.onto(state)
        return state

    def close(self) -> None:
        self._log.close()


def replay_all(repo: MemoryRepo, branch: str = MAIN) -> Replay:
    """The replay of all of ``branch``'s history (empty for a branch with no commits)."""
    return FullReplay(repo, branch).result()


Fold = _Fold  # what ``advance`` folded in, for callers that update only what it touched


def advance(repo: MemoryRepo, state: Replay, tip: Sha, folded: list[_Fold] | None = None) -> bool:
    """Fold in commits after ``state.commit`` if history only grew linearly; the commits
    folded in are appended to ``folded`` (entries oldest first once folded)."""
    if state.commit is None:
        return False
    if state.commit == tip:
        return True
    got = repo.store.read(tip)
    parents = (
        [
            ln[7:]
            for ln in got.data.split(b"\n\n", 1)[0].decode().split("\n")
            if ln.startswith("parent ")
        ]
        if got is not None and got.kind == "commit"
        else []
    )
    if len(parents) == 2:
        return _advance_merge(repo, state, tip, parents[0], parents[1], folded)
    try:
        new = fold(log(repo, f"{state.commit}..{tip}"))
    except GitmemError:  # the cached commit is gone (gc after a rewrite)
        return False
    if new.tip != tip or not new.linear or new.oldest_parent != state.commit:
        return False  # a merge or a rewrite: replay from scratch instead
    new.onto(state)
    if folded is not None:
        folded.append(new)
    return True


def _advance_merge(
    repo: MemoryRepo,
    state: Replay,
    tip: str,
    ours: str,
    theirs: str,
    folded: list[_Fold] | None,
) -> bool:
    """Fold in a merge (what ``gitmem sync`` and ``git pull`` make) without replaying all
    history: the commits it brought from ``theirs`` and the merge itself, when that gives
    exactly the full replay. It does when each side since the fork is one line of commits
    without merges or reverts, ``state`` is on our line, and no card section has an entry
    on both sides (then the order git's log interleaves the sides in changes nothing:
    each section's entries are the fork's, then its one side's, in order). Else False."""
    try:
        side = fold(log(repo, f"{ours}..{tip}"))  # the merge, then their line to the fork
        mine = fold(log(repo, f"{theirs}..{ours}"))  # our line since the fork
        if side.tip != tip or side.merges != [tip] or side.reverts:
            return False
        fork = side.oldest_parent
        if mine.tip is not None and (
            not mine.linear
            or mine.merges
            or mine.reverts
            or mine.oldest_parent != fork
            or mine.tip != ours
        ):
            return False
        if mine.tip is None and fork != ours:
            return False
        if set(mine.entries) & set(side.entries):
            return False
        if state.commit == ours:
            since = _Fold()
        elif state.commit == fork:
            since = mine
        else:
            since = fold(log(repo, f"{state.commit}..{ours}"))
            if since.tip != ours or not since.linear or since.oldest_parent != state.commit:
                return False  # state is not on our line since the fork
    except GitmemError:  # the cached commit is gone (gc after a rewrite)
        return False
    # No section has an entry on both sides: the merge contests none (``uncontested``).
    both = _Fold(tip=tip, merges=side.merges, uncontested=[tip])
    for key in {**since.entries, **side.entries}:  # newest first: theirs, then ours
        both.entries[key] = side.entries.get(key, []) + since.entries.get(key, [])
    both.onto(state)
    if folded is not None:
        folded.append(both)
    return True


def replay_at(repo: MemoryRepo, rev: str) -> Replay:
    """The replay of the history behind ``rev`` (any commit, not only a branch tip)."""
    state = Replay()
    with no_gc():
        fold(log(repo, rev)).onto(state)
    return state
