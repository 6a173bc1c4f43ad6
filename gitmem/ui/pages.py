"""What the history, card, index and search pages show: each read by the function the
matching command calls (`gitmem log`, `show`, `index`, `search`, `revert`)."""

from __future__ import annotations

import itertools
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt

from gitmem.api import render_index
from gitmem.errors import InvalidInput, NotFound
from gitmem.features.audit import LogEntry, audit_log, read_card
from gitmem.features.revert import revert_commit
from gitmem.index.build import refresh
from gitmem.index.card_list import CardInfo, list_cards
from gitmem.index.model import CardEntry
from gitmem.memory import names
from gitmem.memory.cards import card_path, sections
from gitmem.memory.repo import MAIN
from gitmem.review.revert_session import is_session, landed_edits, revert_session
from gitmem.search.passage import open_ref
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


def page_start(value: str | None) -> int:
    """A page's ``?skip=N``: how many of the newest edits come before it."""
    if not value:
        return 0
    if not value.isdigit() or len(value) > 9:
        raise InvalidInput(f"skip must be a count of edits, not {value!r}")
    return int(value)


@dataclass(frozen=True)
class CardPage:
    info: CardEntry | None
    text: str
    html: str
    blame: list[tuple[str, str, bool]]  # (commit sha, line, written then or before) per line
    edits: list[LogEntry]  # SHOWN edits after the newest ``skip``, as `gitmem log NAME`
    older: bool  # the card has edits before those
    skip: int = 0
    base: LogEntry | None = None  # the edit just before the page's oldest


def card(repo: MemoryRepo, name: str, skip: int = 0) -> CardPage:
    """A card, its index entries, one page of its edits and, on the first page, a blame
    over just those edits: git walks history once (the log, as far as the page), and
    blame reads only the commits it found."""
    text = read_card(repo, name)  # NotFound / InvalidInput: the CLI's words
    edits = history(repo, name, limit=SHOWN + 1, skip=skip)
    older = len(edits) > SHOWN
    base = edits[SHOWN] if older else None
    edits = edits[:SHOWN]
    info = refresh(repo, MAIN).card(name)
    lines = blame(repo, name, [e.sha for e in edits], older) if skip == 0 else []
    return CardPage(info, text, markdown_html(text), lines, edits, older, skip, base)


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
    older: bool
    skip: int = 0
    edits: int = 0  # how many of the card's edits the page looked through


def section(repo: MemoryRepo, name: str, sid: str, skip: int = 0) -> SectionPage:
    """A section's values through one page of the card's edits, each as
    `gitmem show NAME/SECTION@COMMIT` opens it, listed where it changed (None: absent);
    the edit before the page's oldest tells whether that one changed it."""
    text = read_card(repo, name, sid)  # NotFound / InvalidInput: the CLI's words
    page = card(repo, name, skip)
    values: list[tuple[LogEntry, str | None]] = []
    for e in [*([page.base] if page.base else []), *reversed(page.edits)]:
        try:
            value: str | None = open_ref(repo, f"{name}/{sid}@{e.sha}").text
        except NotFound:
            value = None
        if not values or values[-1][1] != value:
            values.append((e, value))
    if page.base and values[0][0] is page.base:
        values = values[1:]  # on the next page
    span = next(s for s in sections(page.text) if s.id == sid)
    lines = page.blame[span.start : span.end]
    return SectionPage(text, values[::-1], lines, page.older, skip, len(page.edits))


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
    return open_ref(repo, ref).text


def revert_preview(repo: MemoryRepo, target: str) -> list[tuple[LogEntry, str]]:
    """The commits a revert of ``target`` (a commit or a session) undoes, each with its
    diff, for the confirmation page."""
    names.check_forbidden(target, "commit")
    shas = [c.sha for c in landed_edits(repo, target)] if is_session(repo, target) else [target]
    by_sha = {e.sha: e for e in audit_log(repo, edits_only=True)}
    out = []
    for sha in shas:
        entry = by_sha.get(sha) or next((e for e in by_sha.values() if e.sha.startswith(sha)), None)
        if entry is not None:
            out.append((entry, repo.git.out("show", "--format=", "--no-color", entry.sha)))
    return out


def revert(repo: MemoryRepo, target: str) -> str:
    """Revert a session or one commit as `gitmem revert` does; the one line it prints."""
    if is_session(repo, target):
        return revert_session(repo, target, actor="ui").text()
    res = revert_commit(repo, target, actor="ui")
    return f"reverted {res.reverted[:7]} in {res.commit[:7]} ({', '.join(res.paths)})"
