"""Replaying history: every commit's gitmem trailers, oldest first, folded into a state.

``Replay`` is what the trailers said, in order; ``replay_all`` builds it from one
``git log`` (``ops/history.py``, git's own trailer parsing). ``index.build`` keeps
it in a cache and folds in only the commits that extend it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from gitmem.errors import GitError
from gitmem.memory import names
from gitmem.memory import trailers as T
from gitmem.memory.cards import card_of, card_path
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops.history import Commit, iter_log


@dataclass
class Replay:
    """Everything the trailers said, in order: enough to resolve the index at any point."""

    commit: str | None = None
    # "card/section" -> its entries oldest first, as pieces of one or more NUL-joined
    # "sha\0kw1, kw2\0summary": the cache loads a string per section, not a list per
    # commit (`gitmem index` after 10 commits <= 2x a cached one, issue 21)
    entries: dict[str, list[str]] = field(default_factory=dict)
    inactive: set[str] = field(default_factory=set)  # entry or revert commits undone
    # revert commit -> the commits it undoes (one, or all of a session's)
    reverts: dict[str, list[str]] = field(default_factory=dict)
    # merge commits, oldest first: where two lines of history may both describe a section
    merges: list[str] = field(default_factory=list)
    # entry commit -> its card's blob after it, as the log showed it (the stale marks
    # compare digests of it without asking git for the commit's tree)
    blobs: dict[str, str] = field(default_factory=dict)
    # entry commit -> its section's digest as its Gitmem-Digest trailer gave it (the stale
    # marks compare it with the tip's; an entry without one is checked against ``blobs``)
    digests: dict[str, str] = field(default_factory=dict)
    # card -> [the commit that last changed it, its author date], least recent first: the
    # folded I block's recency, from the log lines the replay reads anyway
    changes: dict[str, list[str]] = field(default_factory=dict)
    # card -> the first commit the replay saw adding it (a history walk of the card
    # stops there: the UI's history page)
    created: dict[str, str] = field(default_factory=dict)

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
        """Fold in one commit newer than everything folded so far."""
        self.commit = c.sha
        for path, now in c.changed.items():
            changed = card_of(path)
            if changed is not None:
                self.changes.pop(changed, None)
                if now.strip("0"):  # (the zero id: the card was removed)
                    self.changes[changed] = [c.sha, c.date]
                    self.created.setdefault(changed, c.sha)
        if len(c.parents) > 1:
            self.merges.append(c.sha)
        targets = c.reverts or tuple(t for t in (c.trailers.get(T.REVERTS),) if t)
        if targets:
            self.reverts[c.sha] = list(targets)
            self._set_active(c.sha, True)
            return
        card, section = c.trailers.get(T.CARD), c.trailers.get(T.SECTION)
        if T.LAYER in c.trailers or not (card and section):
            return
        kws, summary = c.trailers.get(T.KEYWORDS) or "", c.trailers.get(T.SUMMARY) or ""
        digest, blob = c.trailers.get(T.DIGEST), c.changed.get(card_path(card))
        if digest and summary:
            self.digests[c.sha] = digest
        elif blob is not None:
            self.blobs[c.sha] = blob
        self.entries.setdefault(f"{card}/{section}", []).append(f"{c.sha}\0{kws}\0{summary}")
        more = c.trailers.get(T.MORE_SECTIONS)
        if more:  # a new card describing each of its sections (gitmem import)
            for line in more.split("\n"):
                sid, _, kws = line.partition("\t")
                self.entries.setdefault(f"{card}/{sid}", []).append(f"{c.sha}\0{kws}\0")

    def apply_all(self, commits: Iterable[Commit]) -> None:
        for c in commits:
            self.apply(c)

    def current(self, key: str) -> list[str] | None:
        """``key``'s newest entry not undone, as [sha, keywords, summary]."""
        for piece in reversed(self.entries.get(key, [])):
            fields = piece.split("\0")
            for at in range(len(fields) - 3, -1, -3):
                if fields[at] not in self.inactive:
                    return fields[at : at + 3]
        return None

    def history(self, key: str) -> list[list[str]]:
        """``key``'s entries oldest first, each [sha, keywords, summary]."""
        fields = "\0".join(self.entries.get(key, [])).split("\0")
        return [fields[at : at + 3] for at in range(0, len(fields) - 2, 3)]

    def packed(self) -> dict[str, str]:
        """``entries`` with each key's pieces joined into one (as the cache keeps them)."""
        return {key: "\0".join(pieces) for key, pieces in self.entries.items()}


def replay_at(repo: MemoryRepo, rev: str) -> Replay:
    """The replay of the history behind ``rev`` (any commit, not only a branch tip)."""
    state = Replay()
    state.apply_all(iter_log(repo.git, rev, reverse=True))
    return state


def replay_all(repo: MemoryRepo, branch: str = MAIN) -> Replay:
    """The replay of all of ``branch``'s history (empty for a branch with no commits)."""
    try:
        return replay_at(repo, f"refs/heads/{names.branch(branch)}")
    except GitError:
        if repo.tip(branch) is None:
            return Replay()  # a branch with no commits yet: nothing to replay
        raise
