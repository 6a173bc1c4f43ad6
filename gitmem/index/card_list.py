"""``gitmem cards``: every card of a branch with its sections, sizes and last change.

The last change of every card is the index's replay's (``build.last_changes``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from gitmem.index import build as index_mod
from gitmem.memory import names
from gitmem.memory.cards import card_path, sections
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
    """The cards at the tip of ``branch``, sorted by name."""
    tip = repo.branch_tip(names.branch(branch))
    idx = index_mod.refresh(repo, branch)
    by_name = {c.project: c for c in idx.cards}
    entries = {c.project: {s.id: s for s in c.sections} for c in idx.cards}
    texts: dict[str, str] = {}
    for entry in repo.store.read_tree(f"{tip}:cards"):
        name = entry.name.decode("utf-8", "replace")
        if entry.is_tree or not name.endswith(".md") or not names.is_slug(name[:-3]):
            continue
        texts[name[:-3]] = (repo.store.read_blob(entry.sha) or b"").decode("utf-8", "replace")
    changes = index_mod.last_changes(repo, branch)
    out = []
    for project, text in sorted(texts.items()):
        lines = text.split("\n")
        known = entries.get(project, {})
        secs = []
        for s in sections(text):
            body = "\n".join(lines[s.start : s.end])
            e = known.get(s.id)
            secs.append(
                CardSection(
                    s.id,
                    s.heading,
                    len(body.encode()),
                    bool(e and e.indexed),
                    e.summary if e else None,
                )
            )
        card = by_name.get(project)
        last = changes.get(project)
        out.append(
            CardInfo(
                project,
                card.title if card else project,
                card_path(project),
                len(text.encode()),
                tuple(secs),
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
