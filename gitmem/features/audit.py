"""The audit trail (``gitmem log``) and reading cards (``gitmem show``)."""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass

from gitmem.errors import NotFound
from gitmem.memory import names
from gitmem.memory import trailers as T
from gitmem.memory.cards import card_path, section_ids, section_text
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops.history import Commit, iter_log, read_log


@dataclass(frozen=True)
class LogEntry:
    """One commit of the audit trail: who (actor, author), when, which card and section,
    in which session, its summary, what it reverts; ``layer`` for a transcript, usage or
    synthesis commit (not a memory edit)."""

    sha: str
    date: str
    actor: str
    session: str | None
    card: str | None
    section: str | None
    summary: str
    reverts: str | None
    author: str = ""  # the git author, whoever wrote the trailers
    own: bool = True  # gitmem wrote this commit here: its actor and session are its own
    layer: str | None = None  # chat, usage, synthesis: not a memory edit

    @property
    def memory_edit(self) -> bool:
        return self.layer is None

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def line(self) -> str:
        where = f"{self.card} § {self.section}" if self.card and self.section else self.card or "-"
        return (
            f"{self.date[:16].replace('T', ' ')}  {self.actor:<12}  {self.session or '-':<22}  "
            f"{where:<32}  {self.summary}  {self.sha[:7]}"
        )


def audit_log(
    repo: MemoryRepo,
    project: str | None = None,
    *,
    branch: str = MAIN,
    limit: int | None = None,
    edits_only: bool = False,
    skip: int = 0,
) -> list[LogEntry]:
    """The newest ``limit`` commits on ``branch`` (all with None) after the newest
    ``skip``, newest first, as ``LogEntry`` values, of one card with ``project``; with
    ``edits_only``, memory edits only: no transcript, usage or synthesis commit. Raises
    ``NotFound`` for an unknown branch, ``InvalidInput`` for a bad card name."""
    tip = repo.branch_tip(branch)
    paths = [card_path(names.project(project))] if project else None
    own = repo.own_commits()
    want = None if limit is None else skip + limit
    count = want
    while True:  # filtered: read more history until ``want`` edits are found
        log = read_log(repo.git, tip, paths=paths, max_count=count)
        out = [e for e in (_entry(c, c.sha in own) for c in log) if e.memory_edit or not edits_only]
        if count is None or want is None or len(out) >= want or len(log) < count:
            return out[skip:want]
        count *= 4


@dataclass(frozen=True)
class EditPage:
    """Up to ``limit`` edits of one card from a starting commit, newest first."""

    edits: list[LogEntry]
    forked: bool  # the card's history merges two lines on the way (see ``card_edits``)


def card_edits(
    repo: MemoryRepo, project: str, start: str, limit: int, *, created: str | None = None
) -> EditPage:
    """The newest ``limit`` edits of ``project``'s card reachable from ``start`` (a rev:
    ``main``, ``SHA^@`` for the edits before SHA), as ``gitmem log PROJECT`` lists them,
    read while git walks. Git stops at the ``limit``th edit, or at ``created`` (the
    card's first commit: nothing older touches it), so a card's oldest page walks only
    the commits back to its creation. A merge that changed the card (``forked``) has
    edits on two lines of history, interleaved by date: its walk goes on to the end, and
    a page after it cannot start from one commit's parents (it is read by count)."""
    own = repo.own_commits()
    edits: list[LogEntry] = []
    forked = False
    log = iter_log(repo.git, start, paths=[card_path(names.project(project))])
    with contextlib.closing(log):
        for c in log:
            forked = forked or len(c.parents) > 1
            entry = _entry(c, c.sha in own)
            if entry.memory_edit:
                edits.append(entry)
            if len(edits) == limit or (c.sha == created and not forked):
                break
    return EditPage(edits, forked)


def log_entry(repo: MemoryRepo, commit: Commit) -> LogEntry:
    """One commit as the audit trail lists it."""
    return _entry(commit, commit.sha in repo.own_commits())


def _entry(c: Commit, mine: bool) -> LogEntry:
    # A commit gitmem did not write says who made it by its git author: its
    # Gitmem-Actor and Gitmem-Session trailers are claims anyone can type.
    return LogEntry(
        sha=c.sha,
        date=c.date,
        actor=(c.get(T.ACTOR) or c.author) if mine else c.author,
        session=c.get(T.SESSION) if mine else None,
        card=c.get(T.CARD),
        section=c.get(T.SECTION),
        summary=c.get(T.SUMMARY) or c.subject,
        reverts=c.get(T.REVERTS),
        author=c.author,
        own=mine,
        layer=c.get(T.LAYER),
    )


def read_card(
    repo: MemoryRepo, project: str, section: str | None = None, *, branch: str = MAIN
) -> str:
    """A card's text at the tip of ``branch``, or the text of one of its sections (by id,
    as the index lists it). Raises ``NotFound`` (no such card, section or branch),
    ``InvalidInput`` (a bad name)."""
    names.project(project)
    if section is not None:
        names.section_id(section)
    raw = repo.store.read_blob(f"refs/heads/{names.branch(branch)}:{card_path(project)}")
    if raw is None:
        repo.branch_tip(branch)  # no such branch: say that, not "no card"
        raise NotFound(f"no card {project!r} ({card_path(project)})")
    text = raw.decode("utf-8", "replace")
    if section is None:
        return text
    found = section_text(text, section)
    if found is None:
        known = ", ".join(section_ids(text)) or "none"
        raise NotFound(f"no section {section!r} in {project} (sections: {known})")
    return found
