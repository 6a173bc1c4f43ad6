"""``gitmem reindex``: the index and the search index rebuilt from all of history, and
compared with what their caches held (which are replaced where they differed)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gitmem.index import build
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.search import cache, terms


@dataclass(frozen=True)
class ReindexResult:
    """What ``reindex`` found: the rebuilt index's size and whether the caches held the same."""

    cards: int
    sections: int
    had_cache: bool
    matches_cache: bool
    differences: list[str] = field(default_factory=list)
    search_index: str = "no cache before"  # no cache before | matched | rebuilt

    def to_json(self) -> dict[str, object]:
        return {
            "cards": self.cards,
            "sections": self.sections,
            "had_cache": self.had_cache,
            "matches_cache": self.matches_cache,
            "differences": list(self.differences),
            "search_index": self.search_index,
        }


def reindex(repo: MemoryRepo, branch: str = MAIN) -> ReindexResult:
    """Rebuild the index and the search index of ``branch`` from all of history, replace
    any cache that differed, and report the differences (``gitmem reindex``).

    Raises ``NotFound`` for an unknown branch.
    """
    repo.branch_tip(branch)
    # the search index first, and let go: its state and the index's are never held at once
    search_ok = cache.rebuild(repo, branch)[1]
    repo.memo.pop(("search", branch), None)
    terms.forget()
    rebuilt, cached, served_ok = build.rebuild_checked(repo, branch)
    sections = sum(len(c.sections) for c in rebuilt.cards)
    same = cached is None or cached == rebuilt
    diff = [] if same or cached is None else build.differences(cached, rebuilt)
    if not served_ok:  # what `gitmem index` and the prompt were given
        same = False
        cached = cached or rebuilt
        diff.append("the rendered index `gitmem index` serves differed from history")
    if search_ok is False:
        same = False
        cached = cached or rebuilt
        diff.append("the search index differed from history")
    state = "no cache before" if search_ok is None else "matched" if search_ok else "rebuilt"
    return ReindexResult(len(rebuilt.cards), sections, cached is not None, same, diff, state)
