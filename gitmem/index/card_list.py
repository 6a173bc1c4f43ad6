"""``gitmem cards``: every card of a branch with its sections, sizes and last change.

Sizes, headings and the last change of every card are the index's (``build.card_sizes``,
``build.last_changes``), kept in its cache: a warm `gitmem cards` reads no card.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from gitmem.index import build as index_mod
from gitmem.memory import names
from gitmem.memory.cards import card_path
from gitmem.memory.repo import MAIN, MemoryRepo

__all__ = ["CardInfo", "CardSection", "list_cards", "size"]


@dataclass(frozen=True)
class CardSection:
    id: str
    heading: str
    bytes: int
    indexed: bool
    summary: str | None


@dataclass(frozen=True)
class CardInfo:
    """One card on a branch: its project, title, path, size in bytes, ``sections`` (each a
    ``CardSection``: id, heading, bytes, summary, indexed) and the last commit that changed it."""

    project: str
    title: str
    path: str
    bytes: int
    sections: tuple[CardSection, ...]
    last_commit: str | None  # the last commit that touched the card
    last_date: str | None  # its author date (ISO 8601)

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def list_cards(repo: MemoryRepo, branch: str = MAIN) -> list[CardInfo]:
    """The cards at the tip of ``branch``, sorted by name: read from the index's cache,
    which keeps each card's and section's size beside their digests (no card is read)."""
    repo.branch_tip(names.branch(branch))  # NotFound for a branch that is not there
    idx = index_mod.refresh(repo, branch)
    sizes = index_mod.card_sizes(repo, branch)
    changes = index_mod.last_changes(repo, branch)
    out = []
    for card in idx.cards:
        size_of = sizes[card.project]
        secs = tuple(
            CardSection(s.id, s.heading, n, s.indexed, s.summary)
            for s, n in zip(card.sections, size_of[1:], strict=True)
        )
        last = changes.get(card.project)
        out.append(
            CardInfo(
                card.project,
                card.title,
                card_path(card.project),
                size_of[0],
                secs,
                last[0] if last else None,
                last[1] if last else None,
            )
        )
    return out


def size(n: int) -> str:
    """A byte count for people: 512 B, 1.2 KiB, 3.4 MiB."""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1024 * 1024):.1f} MiB"
