"""The public API's own functions: the operations whose entry point in a layer needs more
than one call (finding and opening a repo, the index as a value and as text).

Everything else the API offers is the layer's function itself, re-exported by
``gitmem/__init__.py``. The imports are inside the functions and nothing here is built
at import (no dataclass), so every command can use it at no cost to its start-up.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gitmem.agent.budget import Budget
    from gitmem.index.build import Index
    from gitmem.memory.repo import MemoryRepo

MAIN = "main"


def find_repo(path: str | os.PathLike[str] | None = None, *, client: str | None = None) -> Path:
    """The root of the client memory repo at or above ``path`` (default: the current
    directory), or of the workspace client named ``client`` (``$GITMEM_HOME/<client>``).

    Raises ``InvalidInput`` when both a path and a client are given,
    ``NotARepo`` when no gitmem repo holds ``path``, ``NotFound`` for an unknown client.
    """
    from gitmem.errors import InvalidInput
    from gitmem.memory.repo import find_root

    if path is not None and client:
        raise InvalidInput("give either -C PATH or --client NAME, not both")
    if client:
        from gitmem.setup.workspace import find_client

        return find_client(client)
    return find_root(path or ".")


def open_repo(
    path: str | os.PathLike[str] | None = None,
    *,
    client: str | None = None,
    finish_interrupted: bool = True,
) -> MemoryRepo:
    """Open the client memory repo at or above ``path`` (default: the current directory;
    a leading ``~`` is the home directory), or the workspace client ``client``.

    Returns a ``MemoryRepo``; use it as a context manager (``with open_repo(p) as repo:``)
    so the git processes it keeps open are closed. With ``finish_interrupted`` (the
    default, as every ``gitmem`` command does) an update of the working tree that a crash
    interrupted is finished first (see ``recover``). Raises what ``find_repo`` raises.
    """
    from gitmem.memory.repo import MemoryRepo
    from gitmem.ops.linked_worktrees import recover

    repo = MemoryRepo(find_repo(path, client=client))
    if finish_interrupted:
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


def render_index(repo: MemoryRepo, branch: str = MAIN) -> tuple[str, Budget]:
    """The index block exactly as ``gitmem index`` prints it and the agent is sent, and
    its size against ``limits.index_tokens`` (a ``Budget``: tokens, limit, estimated,
    ``state``, ``warning()``, ``split``: the cards listed in full and folded). Over budget
    the block is folded to fit; when even every card's name does not fit, it ends with a
    line saying so (nothing is left out).

    The size is counted with the API's ``count_tokens`` when ``ANTHROPIC_API_KEY`` is set
    (kept by content, so an unchanged block is counted once), else estimated.
    Raises ``NotFound`` for an unknown branch, ``ConfigError`` for a bad ``gitmem.toml``.
    """
    from gitmem.agent import budget

    repo.branch_tip(branch)
    return budget.block(repo, branch)
