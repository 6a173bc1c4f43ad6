"""What the history, card, index and search pages show: each read by the function the
matching command calls (`gitmem log`, `show`, `index`, `search`, `revert`)."""

from __future__ import annotations

import itertools
import tempfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt

from gitmem.api import render_index
from gitmem.errors import InvalidInput, NotFound
from gitmem.features.audit import LogEntry, audit_log, card_edits, log_entry, read_card
from gitmem.features.revert import revert_commit, revert_target
from gitmem.index import provenance
from gitmem.index.build import card_created, refresh
from gitmem.index.card_list import CardInfo, list_cards
from gitmem.index.model import CardEntry
from gitmem.memory import names
from gitmem.memory.cards import card_path, sections
from gitmem.memory.repo import MAIN
from gitmem.review.render import revert_text
from gitmem.review.revert_session import is_session, landed_edits, revert_session
from gitmem.search.passage import open_hit
from gitmem.search.ranked import check_day
from gitmem.search.snippets import SearchHit, search_history

if TYPE_CHECKING:
    from gitmem import MemoryRepo

# Card Markdown is untrusted: raw HTML is shown as text, and markdown-it's own link check
# makes javascript:, vbscript:, file: and data: (but images) text, not links.
_MD = MarkdownIt("commonmark", {"html": False, "breaks": True})  # a card is line by line


def markdown_html(text: str) -> str:
    return str(_MD.render(text))


def history(
    repo: MemoryRepo, card: str | None = None, limit: int = 200, skip: int = 0
) -> list[LogEntry]:
    return audit_log(repo, card, limit=limit, edits_only=True, skip=skip)


SHOWN = 10  # a card page's edits; its blame names commits among the newest ten


@dataclass(frozen=True)
class Start:
    """Where a page of a card's edits starts: after the newest ``skip`` edits (read by
    count from main), or before commit ``before`` (a cursor: the page walks from its
    parents), ``skip`` then counting the edits above it for the page's heading."""

    skip: int = 0
    before: str | None = None


def page_start(
    repo: MemoryRepo, skip: str | None, before: str | None = None, n: str | None = None
) -> Start:
    """A page's ``?skip=N``, or its cursor ``?before=SHA&n=N``; a malformed one, or a
    cursor that is not a commit on main, is refused."""
    key, count = ("n", n) if before is not None else ("skip", skip)
    if count and (not count.isdigit() or len(count) > 9):
        raise InvalidInput(f"{key} must be a count of edits, not {count[:80]!r}")
    if before is None:
        return Start(int(count or 0))
    if not 4 <= len(before) <= 64 or before.strip("0123456789abcdef"):
        raise InvalidInput(f"before must be a commit id, not {before[:80]!r}")
    got = repo.store.read(f"{before}^{{commit}}")
    if got is None:
        raise InvalidInput(f"before: no commit {before!r}")
    tip = repo.tip(MAIN) or ""
    if repo.git.run("merge-base", "--is-ancestor", got.sha, tip, check=False).returncode:
        raise InvalidInput(f"before: {got.sha[:7]} is not on {MAIN!r}")
    return Start(int(count or 0), got.sha)


@dataclass(frozen=True)
class CardPage:
    info: CardEntry | None
    text: str
    html: str
    blame: list[tuple[str, str, bool]]  # (commit sha, line, written then or before) per line
    edits: list[LogEntry]  # SHOWN edits from the page's start, as `gitmem log NAME`
    older: str | None  # the query of the page of older edits (None: there are none)
    start: Start = Start()
    base: LogEntry | None = None  # the edit just before the page's oldest
    # the lines the agent reads beside sections whose text no trusted key vouches for
    unverified: dict[str, str] = field(default_factory=dict)  # by section id
    reshaped: str | None = None  # the card's line, when such a commit reshaped it

    @property
    def newer(self) -> str | None:
        """The query of the page of newer edits ("": the first page; None: this is it)."""
        if self.start == Start():
            return None
        return f"?skip={self.start.skip - SHOWN}" if self.start.skip > SHOWN else ""


def card(repo: MemoryRepo, name: str, start: Start = Start()) -> CardPage:
    """A card, its index entries, one page of its edits and, on the first page, a blame
    over just those edits. A page is one walk of git's log: from main, or from a
    cursor's parents, to the page's last edit or the card's creation, whichever comes
    first; a page after a merge that changed the card is read by count (``card_edits``)."""
    text = read_card(repo, name)  # NotFound / InvalidInput: the CLI's words
    info = refresh(repo, MAIN).card(name)
    by_count = start.before is None and start.skip > 0
    if by_count:
        edits, forked = history(repo, name, limit=SHOWN + 1, skip=start.skip), True
    else:
        rev = f"{start.before}^@" if start.before else repo.tip(MAIN) or MAIN
        got = card_edits(repo, name, rev, SHOWN + 1, created=card_created(repo, name))
        edits, forked = got.edits, got.forked
    base = edits[SHOWN] if len(edits) > SHOWN else None
    edits = edits[:SHOWN]
    older = None
    if base is not None:
        n = start.skip + SHOWN
        older = f"?skip={n}" if forked else f"?before={edits[-1].sha}&n={n}"
    first = start == Start()
    lines = blame(repo, name, [e.sha for e in edits], base is not None) if first else []
    found = provenance.unverified(repo, MAIN)
    marks = {sid: u.line() for (card, sid), u in found.items() if card == name}
    shape = provenance.reshaped(repo, MAIN).get(name)
    return CardPage(
        info, text, markdown_html(text), lines, edits, older, start, base, marks,
        shape.line() if shape else None,
    )  # fmt: skip


def blame(repo: MemoryRepo, name: str, shas: list[str], older: bool) -> list[tuple[str, str, bool]]:
    """The commit that wrote each line of a card on main, among ``shas`` (its edits, newest
    first): git blame over just those commits (``-S``, each grafted on the next), so it
    walks no history; with ``older``, a line the oldest did not write is marked before."""
    tip = repo.tip(MAIN) or ""
    chain = ([tip] if not shas or tip != shas[0] else []) + shas
    grafts = [f"{a} {b}" for a, b in itertools.pairwise(chain)] + chain[-1:]
    with tempfile.NamedTemporaryFile("w", suffix=".revs") as revs:
        revs.write("\n".join(grafts) + "\n")
        revs.flush()
        path = card_path(names.project(name))
        out = repo.git.out("blame", "--porcelain", "-S", revs.name, tip, "--", path)
    rows: list[tuple[str, str, bool]] = []
    sha, boundary = "", set()
    for line in out.split("\n"):
        if line.startswith("\t"):
            rows.append((sha, line[1:], older and sha in boundary))
        elif line == "boundary":
            boundary.add(sha)
        elif len(line) > 40 and line[40:41] == " " and line[:40].isalnum():
            sha = line[:40]
    return rows


@dataclass(frozen=True)
class SectionPage:
    text: str  # as `gitmem show NAME SECTION` prints it
    values: list[tuple[LogEntry, str | None]]  # newest first: an edit, the value it left
    blame: list[tuple[str, str, bool]]  # the card's blame, the section's lines only
    card: CardPage  # the page of the card's edits looked through (its pager's)


def section(repo: MemoryRepo, name: str, sid: str, start: Start = Start()) -> SectionPage:
    """A section's values through one page of the card's edits, each as
    `gitmem show NAME/SECTION@COMMIT` opens it, listed where it changed (None: absent);
    the edit before the page's oldest tells whether that one changed it."""
    text = read_card(repo, name, sid)  # NotFound / InvalidInput: the CLI's words
    page = card(repo, name, start)
    values: list[tuple[LogEntry, str | None]] = []
    for e in [*([page.base] if page.base else []), *reversed(page.edits)]:
        try:
            value: str | None = open_hit(repo, f"{name}/{sid}@{e.sha}").text
        except NotFound:
            value = None
        if not values or values[-1][1] != value:
            values.append((e, value))
    if page.base and values[0][0] is page.base:
        values = values[1:]  # on the next page
    span = next(s for s in sections(page.text) if s.id == sid)
    lines = page.blame[span.start : span.end]
    return SectionPage(text, values[::-1], lines, page)


def cards(repo: MemoryRepo) -> list[CardInfo]:
    return list_cards(repo)


def index_block(repo: MemoryRepo) -> tuple[str, str]:
    """The I block exactly as the agent sees it, and its size against the budget."""
    text, size = render_index(repo)
    split = f" · split: {size.split.line()}" if size.split else ""
    return text, size.line() + split


def search(repo: MemoryRepo, query: str, as_of: str) -> list[SearchHit]:
    names.check_utf8(query, "query")
    return search_history(repo, query, 20, as_of=check_day(as_of) if as_of else None)


def opened(repo: MemoryRepo, ref: str) -> str:
    """What a hit's ref opens: `gitmem show REF`'s text."""
    return open_hit(repo, ref).text


def revert_preview(repo: MemoryRepo, target: str) -> list[tuple[LogEntry, str]]:
    """The commits a revert of ``target`` (a session, or one commit on main) undoes, each
    with its diff, for the confirmation page; a target `gitmem revert` refuses for what
    it is (no such commit or session, a merge, nothing of it on main) is refused here."""
    names.check_forbidden(target, "commit")
    if is_session(repo, target):
        commits = landed_edits(repo, target)
        if not commits:
            raise NotFound(f"session {target} has no edits on {MAIN} left to revert")
    else:
        commits = [revert_target(repo, target, MAIN)]
    return [
        (log_entry(repo, c), repo.git.out("show", "--format=", "--no-color", c.sha))
        for c in commits
    ]


def revert(repo: MemoryRepo, target: str) -> str:
    """Revert a session or one commit as `gitmem revert` does; the one line it prints."""
    if is_session(repo, target):
        return revert_text(revert_session(repo, target, actor="ui"))
    res = revert_commit(repo, target, actor="ui")
    return f"reverted {res.reverted[:7]} in {res.commit[:7]} ({', '.join(res.paths)})"
