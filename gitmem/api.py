"""The public API's own functions: the operations whose entry point in a layer needs more
than one call (finding and opening a repo, the index as text with its budget, reindex).

Everything else the API offers is the layer's function itself, re-exported by
``gitmem/__init__.py``. The imports are inside the functions, so importing this module
costs nothing beyond its own code (``gitmem index`` starts fast).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from gitmem.agent.budget import Budget
    from gitmem.index.build import Index
    from gitmem.memory.repo import MemoryRepo

MAIN = "main"


def find_repo(path: str | Path | None = None, *, client: str | None = None) -> Path:
    """The root of the client memory repo at or above ``path`` (default: the current
    directory), or of the workspace client named ``client`` (``$GITMEM_HOME/<client>``).

    Raises ``InvalidInput`` when both a path and a client are given,
    ``NotARepo`` when no gitmem repo holds ``path``, ``NotFound`` for an unknown client.
    """
    from gitmem.errors import InvalidInput
    from gitmem.memory.repo import find_root
    from gitmem.memory.workspace import find_client

    if path is not None and client:
        raise InvalidInput("give either -C PATH or --client NAME, not both")
    if client:
        return find_client(client)
    return find_root(Path(path or "."))


def open_repo(
    path: str | Path | None = None, *, client: str | None = None, finish_interrupted: bool = True
) -> MemoryRepo:
    """Open the client memory repo at or above ``path`` (or the workspace ``client``).

    Returns a ``MemoryRepo``; use it as a context manager (``with open_repo(p) as repo:``)
    so the git processes it keeps open are closed. With ``finish_interrupted`` (the
    default, as every ``gitmem`` command does) an update of the working tree that a crash
    interrupted is finished first (see ``recover``). Raises what ``find_repo`` raises.
    """
    from gitmem.memory.repo import MemoryRepo
    from gitmem.memory.worktree import recover

    repo = MemoryRepo(find_repo(path, client=client))
    if finish_interrupted:
        repo.store.clean_temporaries()
        recover(repo)
    return repo


def read_index(repo: MemoryRepo, branch: str = MAIN) -> Index:
    """The memory index (layer I) at ``branch``'s tip as a value: ``Index.cards``, each a
    ``CardEntry`` with its ``SectionEntry`` lines (summary, keywords, indexed, stale);
    ``Index.to_json()`` is what ``gitmem index --json`` prints, ``Index.render()`` the
    block without the budget note. Updates the index cache incrementally.

    Raises ``NotFound`` for an unknown branch, ``InvalidInput`` for an invalid name.
    """
    from gitmem.index import build

    repo.branch_tip(branch)  # an unknown branch is an error, not an empty index
    return build.refresh(repo, branch)


class RenderedIndex(NamedTuple):
    """The index block as the agent sees it (``text``) and its size against
    ``limits.index_tokens`` (``budget``: tokens, limit, estimated, ``state``, ``warning()``)."""

    text: str
    budget: Budget


def render_index(repo: MemoryRepo, branch: str = MAIN) -> RenderedIndex:
    """The index block exactly as ``gitmem index`` prints it and the agent is sent, with
    its budget. Over budget, the block ends with a line saying so (nothing is left out).

    The size is counted with the API's ``count_tokens`` when ``ANTHROPIC_API_KEY`` is set
    (kept by content, so an unchanged block is counted once), else estimated.
    Raises ``NotFound`` for an unknown branch, ``ConfigError`` for a bad ``gitmem.toml``.
    """
    from gitmem.agent import budget

    repo.branch_tip(branch)
    text, size = budget.block(repo, branch)
    return RenderedIndex(text, size)


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

    def text(self) -> str:
        from gitmem.wording import count

        msg = f"Reindexed {count(self.cards, 'card')}, {count(self.sections, 'section')}: "
        if self.matches_cache:
            return msg + ("cache matched." if self.had_cache else "no cache before.")
        return msg + "cache differed and was replaced:\n" + "\n".join(
            f"  {d}" for d in self.differences
        )


def reindex(repo: MemoryRepo, branch: str = MAIN) -> ReindexResult:
    """Rebuild the index and the search index of ``branch`` from all of history, replace
    any cache that differed, and report the differences (``gitmem reindex``).

    Raises ``NotFound`` for an unknown branch.
    """
    from gitmem.index import build
    from gitmem.search import corpus

    repo.branch_tip(branch)
    rebuilt, cached = build.rebuild(repo, branch)
    served_ok = build.check_served(repo, rebuilt, branch)
    search_ok = corpus.rebuild(repo, branch)[1]
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
