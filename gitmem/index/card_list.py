"""``gitmem cards``: every card of a branch with its sections, sizes and last change.

The last change of every card comes from one ``git log --name-only`` over ``cards/``,
read while git still walks and stopped once every card has been seen: newest first,
the first commit naming a card's path is the last one that touched it. The answer is
kept per branch (``.git/gitmem/index-<branch>.cards``); when history grew from the kept
commit without a merge, only ``git log KEPT..TIP`` is read, which gives the same result.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from gitmem.errors import GitError
from gitmem.index import build as index_mod
from gitmem.index import cache_file
from gitmem.memory import branch_files, names
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


VERSION = 1  # of the kept file's layout: another one is not read
Changes = dict[str, tuple[str, str]]  # card path -> (commit, author date) of its last change


def last_changes(repo: MemoryRepo, tip: str, paths: set[str], since: str | None = None) -> Changes:
    """path -> (commit, date) of the newest commit on ``tip`` (after ``since``) touching it."""
    found: Changes = {}
    if not paths:
        return found
    rev = f"{since}..{tip}" if since else tip
    args = ("log", "-z", "--format=%x01%H%x1f%aI", "--name-only", rev, "--", "cards/")
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


def _linear_from(repo: MemoryRepo, old: str, tip: str) -> bool:
    """Whether ``tip`` is ``old`` with commits on top and no merge among them (then the
    log from ``tip`` is the log of ``old..tip`` followed by the log from ``old``)."""
    try:
        repo.git.run("merge-base", "--is-ancestor", old, tip)
        return not repo.git.out("rev-list", "--merges", "-n1", f"{old}..{tip}")
    except GitError:  # not an ancestor, or the kept commit is gone
        return False


def _kept(repo: MemoryRepo, branch: str) -> tuple[str, Changes] | None:
    got, _ = cache_file.read(branch_files.path(repo, branch, "cards"), 1, 1)
    head = got[0] if got else None
    if not isinstance(head, list) or len(head) != 3 or head[0] != VERSION:
        return None
    old, kept = head[1], head[2]
    if (
        not isinstance(old, str)
        or not isinstance(kept, dict)
        or not re.fullmatch("[0-9a-f]{40,64}", old)
    ):
        return None
    return old, {p: (v[0], v[1]) for p, v in kept.items()}


def card_changes(repo: MemoryRepo, branch: str, tip: str, paths: set[str]) -> Changes:
    """``last_changes(repo, tip, paths)``, from the kept answer and the commits since when
    it can: a card last changed long ago walks all history (``gitmem cards`` <= 250 ms at
    100k commits, issue 21)."""
    kept = _kept(repo, branch)
    if kept is not None and kept[0] == tip and paths <= kept[1].keys():
        return {p: kept[1][p] for p in paths}
    if kept is not None and _linear_from(repo, kept[0], tip):
        found = {**kept[1], **last_changes(repo, tip, paths, since=kept[0])}
    else:
        found = {}
    if not paths <= found.keys():
        found = last_changes(repo, tip, paths)
    found = {p: found[p] for p in paths if p in found}
    record = [VERSION, tip, {p: list(v) for p, v in found.items()}]
    cache_file.write(branch_files.path(repo, branch, "cards"), [record])
    return found


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
    changes = card_changes(repo, names.branch(branch), tip, {card_path(p) for p in texts})
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
