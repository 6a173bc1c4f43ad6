"""``gitmem cards``: every card of a branch with its sections, sizes and last change.

The last change of every card comes from one ``git log --name-only`` over ``cards/``,
read while git still walks and stopped once every card has been seen: newest first,
the first commit naming a card's path is the last one that touched it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from gitmem.index import build as index_mod
from gitmem.memory import names
from gitmem.memory.cards import card_path, sections
from gitmem.memory.repo import MAIN, MemoryRepo


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


def last_changes(repo: MemoryRepo, tip: str, paths: set[str]) -> dict[str, tuple[str, str]]:
    """path -> (commit, date) of the newest commit on ``tip`` touching it; one git log."""
    found: dict[str, tuple[str, str]] = {}
    if not paths:
        return found
    args = ("log", "-z", "--format=%x01%H%x1f%aI", "--name-only", tip, "--", "cards/")
    current: tuple[str, str] | None = None
    with repo.git.stream(*args) as stream:
        for piece in stream.pieces():
            for item in piece.decode("utf-8", "surrogateescape").split("\0"):
                item = item.lstrip("\n")
                if item.startswith("\x01"):
                    sha, _, date = item[1:].partition("\x1f")
                    current = (sha, date)
                elif item and current and item in paths and item not in found:
                    found[item] = current
            if len(found) == len(paths):
                break  # every card seen: the rest of history is not needed
    return found


def list_cards(repo: MemoryRepo, branch: str = MAIN) -> list[CardInfo]:
    """The cards at the tip of ``branch``, sorted by name."""
    tip = repo.branch_tip(names.branch(branch))
    idx = index_mod.refresh(repo, branch)
    entries = {c.project: {s.id: s for s in c.sections} for c in idx.cards}
    texts: dict[str, str] = {}
    for entry in repo.store.read_tree(f"{tip}:cards"):
        name = entry.name.decode("utf-8", "replace")
        if entry.is_tree or not name.endswith(".md") or not names.is_slug(name[:-3]):
            continue
        texts[name[:-3]] = (repo.store.read_blob(entry.sha) or b"").decode("utf-8", "replace")
    changes = last_changes(repo, tip, {card_path(p) for p in texts})
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
        card = idx.card(project)
        last = changes.get(card_path(project))
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
