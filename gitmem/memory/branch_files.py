"""The files gitmem keeps per branch under ``.git/gitmem/`` (the index's caches), named in
one place so that whoever ends a branch removes them too."""

from __future__ import annotations

import contextlib
import os

from gitmem.memory.repo import MemoryRepo

# The index's one cache file (the rendered I block, the replay state, the facts behind it)
# and each card's last change (index/card_list.py).
KINDS = ("marshal", "cards")


def path(repo: MemoryRepo, branch: str, kind: str) -> str:
    """``.git/gitmem/index-<branch>.<kind>``, a ``/`` in the branch written ``%``."""
    return str(repo.gitmem_dir / f"index-{branch.replace('/', '%')}.{kind}")


def drop(repo: MemoryRepo, branch: str) -> None:
    """Remove ``branch``'s files (a session branch that landed or was archived: its name is
    never used again, and the files would only take disk space)."""
    for kind in KINDS:
        with contextlib.suppress(OSError):
            os.unlink(path(repo, branch, kind))
