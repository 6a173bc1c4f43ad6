"""Replaying history: every commit's gitmem trailers, oldest first, folded into a state.

``Replay`` is what the trailers said, in order; ``replay_all`` builds it from one
``git log`` and ``advance`` folds in commits that only extend the history it was
built at. ``index.resolve`` turns a state into the index.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import dataclass, field

from . import trailers as T
from .errors import GitmemError
from .git import Sha
from .history import Commit
from .repo import MAIN, MemoryRepo


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


_LEAN = "%H%x1f%P%x1f%(trailers:only,unfold,separator=%x1e)"
Raw = tuple[str, tuple[str, ...], dict[str, str], tuple[str, ...]]  # sha, parents, trailers, reverts


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic GC while building large acyclic structures (nothing to collect,
    but its passes over tens of thousands of new dicts and lists cost more than the work)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def replay_log(repo: MemoryRepo, rev: str) -> list[Raw]:
    """Commits of ``rev`` oldest first (parents before children), from one ``git log``."""
    raw = repo.git.output("log", "-z", "--reverse", "--topo-order", f"--format={_LEAN}", rev)
    with no_gc():
        return _parse_lean(raw)


def _parse_lean(raw: bytes) -> list[Raw]:
    out: list[Raw] = []
    for record in raw.decode("utf-8", "replace").split("\0"):
        sha, _, rest = record.strip("\n").partition("\x1f")
        if sha:
            parents, _, block = rest.partition("\x1f")
            out.append((sha, tuple(parents.split()), *T.gitmem_trailers(block)))
    return out


def replay_all(repo: MemoryRepo, branch: str = MAIN) -> Replay:
    state = Replay()
    tip = repo.tip(branch)
    if tip is not None:
        for sha, _parents, trailers, reverts in replay_log(repo, tip):
            state.apply_raw(sha, trailers, reverts)
    return state


def advance(repo: MemoryRepo, state: Replay, tip: Sha) -> bool:
    """Fold in commits after ``state.commit`` if history only grew linearly."""
    if state.commit is None:
        return False
    try:
        new = replay_log(repo, f"{state.commit}..{tip}")
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
