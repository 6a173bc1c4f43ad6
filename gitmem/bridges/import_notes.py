"""``gitmem import SOURCE``: notes become cards, one commit per card.

A note becomes ``cards/<name>.md`` (its name slugified) with a ``# Title`` line (the
note's own, its frontmatter's ``title``, or its name) and its ``##`` sections; a note
with none gets one section named after its title (several top-level ``#`` headings
and no ``##``, as many CLAUDE.md files have, become sections instead). Frontmatter is
kept as a fenced ``yaml`` block under the title. Each card is one commit with
``Gitmem-Actor: import`` whose trailers give every section an index entry with
keywords from its heading and no summary: the index lists them unindexed until an
edit summarises them.

Every card gets the checks ``edit.write_card`` makes of an edit creating a card (UTF-8,
size limits, duplicate headings, the secret scan); the commits are written one on the
other through the store's long-running writers, and ``main`` moves only once every card
was written (a fast-forward, or the same commits re-created on a tip that moved
meanwhile). A problem (a name clash, a card that exists,
an unreadable file) stops the import before anything is written unless ``skip`` says
to leave those notes out; nothing is ever overwritten.
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gitmem.bridges.import_kinds import find
from gitmem.bridges.import_sources import Found, Note, Problem
from gitmem.errors import Conflict, GitmemError, InvalidInput
from gitmem.features.edit import _check_result, check_edit, edit_texts
from gitmem.git.fast_import import FileCommit, write_chain
from gitmem.git.formats import BLOB_MODE, TREE_MODE, TreeEntry, tree_line, tree_order
from gitmem.git.objects import ObjectStore
from gitmem.git.runner import Sha
from gitmem.index import build as index
from gitmem.memory import names, secrets
from gitmem.memory.cards import card_path, code_lines, digests, heading_keywords, sections
from gitmem.memory.refs import IMPORTING
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.memory.trailers import IndexEntry, edit_message
from gitmem.ops.land import land

ACTOR = "import"


@dataclass(frozen=True)
class CardPlan:
    card: str
    source: str
    title: str
    sections: list[str]
    text: str = field(repr=False)

    def entries(self) -> list[IndexEntry]:
        out = []
        for s in sections(self.text):
            words = [w for w in heading_keywords(s.heading) if len(w) <= names.MAX_KEYWORD]
            out.append(IndexEntry.unsummarised(s.id, words or s.id.split("-")[:6]))
        return out


@dataclass
class ImportResult:
    """An import (or its plan, with ``dry_run``): the kind of source, the cards planned,
    the problems found, the notes skipped and the commits made."""

    kind: str
    source: str
    dry_run: bool
    cards: list[CardPlan] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        out = asdict(self)
        out["cards"] = [
            {"card": c.card, "source": c.source, "title": c.title, "sections": c.sections}
            for c in self.cards
        ]
        return out

    def describe(self) -> str:
        verb = "would import" if self.dry_run else "imported"
        n = len(self.cards)
        lines = [f"{self.source} ({self.kind}): {verb} {n} card{'s' if n != 1 else ''}"]
        for c in self.cards:
            secs = ", ".join(c.sections)
            lines.append(f"  {card_path(c.card)} <- {c.source}  [{secs}]")
        for p in self.problems:
            lines.append(f"  problem: {p}" + ("" if self.dry_run else " (left out)"))
        for s in self.skipped:
            lines.append(f"  not imported: {s}")
        if self.cards and not self.dry_run:
            lines.append(
                "Every section is listed unindexed until summarised (gitmem write, or a chat)."
            )
        return "\n".join(lines)


def _split_frontmatter(text: str) -> tuple[list[str], str]:
    if not text.startswith("---\n"):
        return [], text
    end = text.find("\n---\n", 3)
    if end == -1 and text.endswith("\n---"):
        end = len(text) - 4
    if end == -1:
        return [], text
    return text[4:end].split("\n"), text[end + 5 :]


def _frontmatter_title(lines: list[str]) -> str | None:
    for line in lines:
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("title", "name") and value.strip():
            return value.strip().strip("'\"").strip() or None
    return None


def _headings(body: str, level: str) -> list[int]:
    lines = body.split("\n")
    return [
        i
        for i, (line, code) in enumerate(zip(lines, code_lines(lines), strict=True))
        if not code and line.startswith(level)
    ]


def card_text(note: Note) -> tuple[str, str]:
    """(title, card text) of a note; the same text again for a card's own export."""
    text = note.text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    front, body = _split_frontmatter(text)
    body = body.lstrip("\n")
    title = _frontmatter_title(front) if front else None
    tops = _headings(body, "# ")
    if not _headings(body, "## ") and len(tops) > 1:
        # "# Code style", "# Workflow" (as many CLAUDE.md files have): the card's sections
        lines = body.split("\n")
        for i in tops:
            lines[i] = "#" + lines[i]
        body = "\n".join(lines)
    else:
        lines = body.split("\n")
        if lines[0].startswith("# "):
            title = title or lines[0][2:].strip()
            if lines[0][2:].strip() == title:
                body = "\n".join(lines[1:]).lstrip("\n")
    title = re.sub(r"\s+", " ", title or note.name).strip() or note.name
    if not _headings(body, "## "):
        body = f"## {title}\n\n{body}"
    head = f"# {title}\n\n"
    if front:
        # A fence longer than any run of backticks inside, so the block closes where it should.
        runs = [len(r) for r in re.findall(r"`+", "\n".join(front))]
        fence = "`" * max(3, max(runs, default=0) + 1)
        head += f"{fence}yaml\n" + "\n".join(front) + f"\n{fence}\n\n"
    out = head + body
    return title, out if out.endswith("\n") else out + "\n"


def card_name(note: Note) -> str:
    if note.kind == "basic-memory":
        front, _body = _split_frontmatter(note.text.replace("\r\n", "\n"))
        title = _frontmatter_title(front)
        if title and names.slugify(title):
            return names.slugify(title)
    return names.slugify(note.name)


def plan(repo: MemoryRepo, source: Path, kind: str | None = None) -> tuple[ImportResult, Found]:
    """What importing ``source`` would do; reads only."""
    limit = repo.config.max_card_bytes
    found = find(source, kind, limit, repo.root)
    res = ImportResult(found.kind, str(source), True)
    tip = repo.tip(MAIN)
    live = repo.head_branch() == MAIN  # main's working tree: a file there is a person's
    by_name: dict[str, list[Note]] = {}
    for note in found.notes:
        by_name.setdefault(card_name(note), []).append(note)
    problems: list[Problem] = list(found.problems)
    for name, notes in sorted(by_name.items()):
        if not name:
            for n in notes:
                problems.append(Problem(n.source, "no card name can be made from its name"))
            continue
        if len(notes) > 1:
            others = ", ".join(n.source for n in notes)
            for n in notes:
                problems.append(
                    Problem(n.source, f"{others} would all be card {name!r}; rename one")
                )
            continue
        note = notes[0]
        if tip is not None and repo.store.read(f"{tip}:{card_path(name)}") is not None:
            problems.append(
                Problem(note.source, f"card {name!r} exists already; never overwritten")
            )
            continue
        on_disk = repo.root / card_path(name)
        if live and (on_disk.exists() or on_disk.is_symlink()):
            problems.append(
                Problem(
                    note.source,
                    f"{card_path(name)} exists in the working tree (not committed); "
                    "never overwritten",
                )
            )
            continue
        planned = _check(repo, name, note, problems)
        if planned is not None:
            res.cards.append(planned)
    res.problems = [p.line() for p in sorted(problems, key=lambda p: p.source)]
    res.skipped = [s.line() for s in found.skipped]
    return res, found


def _check(repo: MemoryRepo, name: str, note: Note, problems: list[Problem]) -> CardPlan | None:
    """The card of ``note`` once the checks of every edit passed, else None (a problem)."""
    try:
        names.project(name)
        title, text = card_text(note)
        check_edit(repo, name, "", text)
        plan = CardPlan(name, note.source, title, [s.id for s in sections(text)], text)
        entries = plan.entries()  # the section ids come from the text: the first stands for all
        _check_result(repo, card_path(name), None, text, entries[0])
    except GitmemError as err:
        problems.append(Problem(note.source, str(err)))
        return None
    return plan


def import_notes(
    repo: MemoryRepo,
    source: str | os.PathLike[str],
    *,
    kind: str | None = None,
    dry_run: bool = False,
    skip: bool = False,
) -> ImportResult:
    """Make each note of ``source`` a card, one commit per card (``kind``: markdown,
    claude-code, memory-tool, basic-memory; default detected). ``dry_run`` only plans;
    a problem stops the import before anything is written, unless ``skip``."""
    res, _found = plan(repo, Path(source), kind)  # a leading ~ expanded where it is read
    if dry_run:
        return res
    if res.problems and not skip:
        clash = any("never overwritten" in p or "would all be card" in p for p in res.problems)
        n = len(res.problems)
        first = res.problems[0]
        more = f" and {n - 1} more" if n > 1 else ""
        err = Conflict if clash else InvalidInput
        raise err(
            f"nothing imported: {first}{more}; see `gitmem import --dry-run`, "
            "or --skip-problems to import the rest",
        )
    res.dry_run = False
    if res.cards:
        res.commits = _write(repo, res.cards)
        index.refresh(repo, MAIN)
    return res


def _write(repo: MemoryRepo, cards: list[CardPlan]) -> list[str]:
    """Every card as one commit, each on the one before; main moves once, by ``land`` (a
    fast-forward, or the same commits re-created on a tip that moved meanwhile). Unsigned,
    one ``git fast-import`` writes them all; signed, ``_signed_chain``."""
    allow = repo.config.secrets_allow
    parent = repo.branch_tip(MAIN)
    planned: list[FileCommit] = []
    for c in cards:
        entries = c.entries()
        path = card_path(c.card)
        # a new card: the lines it leaves (check_change's) are its whole text, scanned here
        secrets.check(edit_texts(c.card, c.text, entries[0]), allow)
        message = edit_message(
            c.card,
            entries[0],
            session=None,
            actor=ACTOR,
            subject=f"{c.card}: imported from {c.source}",
            more=tuple(entries[1:]),
            digest=digests(c.text, [entries[0].section_id]).get(entries[0].section_id),
        )
        who = repo.signature("AUTHOR"), repo.signature("COMMITTER")
        planned.append(FileCommit(path, c.text.encode(), *who, message))
    if repo.signing_key is None:
        shas = write_chain(repo.git, IMPORTING, parent, planned)
        repo.record_own(shas)
    else:
        shas = _signed_chain(repo, parent, planned)
    return list(land(repo, shas, MAIN, "gitmem import"))


def _signed_chain(repo: MemoryRepo, parent: Sha, planned: list[FileCommit]) -> list[Sha]:
    """The chain through the store's long-running object writers: blobs and trees many to
    a round trip, the commits signed in-process and written the same way
    (``write_signed_chain``); else each commit signed by git (``write_commit``)."""
    root = repo.store.read_commit(parent).tree
    trees = _chain_trees(repo.store, root, planned)
    if trees is None:  # a card in a folder of its own: tree by tree
        trees = []
        for f in planned:
            tree = repo.store.update_path(root, f.path, repo.store.write("blob", f.data))
            assert tree is not None  # a card was added
            trees.append(root := tree)
    chained = [
        (tree, f.author, f.committer, f.message) for tree, f in zip(trees, planned, strict=True)
    ]
    shas = repo.write_signed_chain(parent, chained)
    if shas is None:
        shas = []
        for tree, f in zip(trees, planned, strict=True):
            parent = repo.write_commit(tree, [parent], f.message)
            shas.append(parent)
    return shas


def _chain_trees(store: ObjectStore, root: Sha, planned: list[FileCommit]) -> list[Sha] | None:
    """The root tree after each new card of ``planned`` is added, in three round trips
    with git; None unless each is a new file right under ``cards/``."""
    top = store.read_tree(root)
    folder = next((e for e in top if e.name == b"cards"), None)
    inside = store.read_tree(folder.sha) if folder and folder.is_tree else []
    new = [f.path.removeprefix("cards/").encode() for f in planned]
    taken = {e.name for e in inside}
    if (folder and not folder.is_tree) or any(b"/" in n or n in taken for n in new):
        return None
    if len(set(new)) != len(new) or not all(f.path.startswith("cards/") for f in planned):
        return None
    blobs = store.write_many("blob", [f.data for f in planned])
    lines = sorted((tree_order(e), tree_line(e)) for e in inside)
    folders = []
    for name, blob in zip(new, blobs, strict=True):
        entry = TreeEntry(BLOB_MODE, name, blob)
        bisect.insort(lines, (tree_order(entry), tree_line(entry)))
        folders.append(b"".join(line for _, line in lines))
    others = [e for e in top if e.name != b"cards"]
    roots = [
        b"".join(tree_line(e) for e in sorted([*others, TreeEntry(TREE_MODE, b"cards", sha)],
                                              key=tree_order))
        for sha in store.write_many("tree", folders)
    ]  # fmt: skip
    return store.write_many("tree", roots)
