"""The search state as a fold over a branch's first-parent history, oldest first.

Each card a commit writes is compared section by section with the values in force: a
changed or removed section's value becomes *past* (with the date it was replaced) and
its new text the *current* document, carrying the section's index entry (keywords,
summary). Committed transcripts (``sessions/<id>.jsonl``) add one document per turn.
History is read with one ``git log --raw``, a piece at a time, so a rebuild holds the
state and not the log.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from gitmem.errors import GitmemError
from gitmem.git.objects import ObjectStore
from gitmem.git.runner import Git
from gitmem.memory import trailers as T
from gitmem.memory.names import is_slug
from gitmem.memory.repo import MemoryRepo
from gitmem.search.documents import CURRENT, Doc, Read, card_sections, text_of, turn_docs
from gitmem.search.state import SearchState

ZERO = "0" * 40
# git's caches while it walks all of history: left at their defaults (96 MiB of delta
# bases, every pack window mapped) git grows to the pack's size (reindex's 300 MB budget)
BOUNDED = (
    "-c",
    "core.deltaBaseCacheLimit=8m",
    "-c",
    "core.packedGitWindowSize=8m",
    "-c",
    "core.packedGitLimit=32m",
)


@dataclass(frozen=True)
class Change:
    path: str
    blob: str  # ZERO when the file was deleted


@dataclass(frozen=True)
class LogCommit:
    sha: str
    parent: str | None
    date: str
    trailers: dict[str, str]
    reverts: tuple[str, ...]
    changes: tuple[Change, ...]


def fold(state: SearchState, c: LogCommit, read: Read) -> None:
    """Fold in one commit, newer than every commit folded so far."""
    entry_key = None
    card, section = c.trailers.get(T.CARD), c.trailers.get(T.SECTION)
    if card and section and not c.reverts and T.LAYER not in c.trailers:
        entry_key = f"{card}/{section}"
        # a section's keywords recur from edit to edit (summaries do not): one string each
        keywords = sys.intern(c.trailers.get(T.KEYWORDS) or "")
        state.entries[entry_key] = (keywords, c.trailers.get(T.SUMMARY) or "")
    for ch in c.changes:
        folder, _, name = ch.path.partition("/")
        if folder == "cards" and name.endswith(".md") and is_slug(name[:-3]):
            _fold_card(state, c, sys.intern(name[:-3]), ch.blob, entry_key, read)
        elif folder == "sessions" and name.endswith(".jsonl") and "/" not in name:
            _fold_session(state, name[:-6], ch.blob, read)
    state.commit = c.sha


def _fold_card(
    state: SearchState, c: LogCommit, card: str, blob: str, entry_key: str | None, read: Read
) -> None:
    have = dict(state.cards.get(card, {}))
    if blob == ZERO:
        for sid, gone in have.items():
            state.retire(f"{card}/{sid}", gone, c.date)
        state.cards.pop(card, None)
        state.titles.pop(card, None)
        return
    title, secs = card_sections((read(blob) or b"").decode("utf-8", "replace"))
    state.titles[card] = title
    now: dict[str, int] = {}
    for pos, (sid, heading, text) in enumerate(secs):
        key = f"{card}/{sid}"
        n = have.pop(sid, None)
        if n is not None and (state.docs[n].heading, state.docs[n].text) == (heading, text):
            entry = state.entries.get(key) if key == entry_key else None
            now[sid] = _same_text(state, n, entry, title)
            continue
        if n is not None:
            state.retire(key, n, c.date)
        if c.reverts:  # an undone edit brings back the entry that described this text
            _entry_of_undone(state, key, text, read)
        kw, summary = state.entries.get(key, ("", ""))
        doc = Doc(
            CURRENT, card, sid, heading, text, kw, summary, c.date, "", title, c.sha, blob, pos
        )
        now[sid] = state.add(doc)
    for sid, gone in have.items():  # sections no longer in the card
        state.retire(f"{card}/{sid}", gone, c.date)
    state.cards[card] = now


def _same_text(state: SearchState, n: int, entry: tuple[str, str] | None, title: str) -> int:
    """The document of a section whose text did not change: a new one when the commit
    gave it another index entry, else the same."""
    doc = state.docs[n]
    if entry is None or (doc.keywords, doc.summary) == entry:
        return n
    state.drop(n)
    return state.add(doc._replace(keywords=entry[0], summary=entry[1], ref=title))


def _entry_of_undone(state: SearchState, key: str, text: str, read: Read) -> None:
    for old in reversed(state.past.get(key, [])):
        was = state.docs[old]
        if text_of(was, read) == text:
            state.entries[key] = (was.keywords, was.summary)
            return


def _fold_session(state: SearchState, sid: str, blob: str, read: Read) -> None:
    known = state.sessions.get(sid)
    if blob == ZERO:
        for n in known[2] if known else ():
            state.drop(n)
        state.sessions.pop(sid, None)
        return
    lines = (read(blob) or b"").split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    start, ids = 0, list[int]()
    if known is not None:
        count, digest, ids = known
        if count <= len(lines) and hashlib.sha1(b"\n".join(lines[:count])).hexdigest() == digest:
            start = count  # appended to: only the new turns are read
        else:
            for n in ids:
                state.drop(n)
            ids = []
    last = state.docs[ids[-1]] if ids else None
    ids.extend(state.add(doc) for doc in turn_docs(sid, lines, start, last))
    state.sessions[sid] = (len(lines), hashlib.sha1(b"\n".join(lines)).hexdigest(), ids)


# -- reading history ---------------------------------------------------------------

_FORMAT = "%x00%x1e%H%x1f%P%x1f%aI%x1f%(trailers)%x1f"  # a NUL starts each record
_PIECE = 1 << 18  # bytes of the log read at a time


def _parse(record: str) -> LogCommit:
    sha, parents, date, block, raw = record.split("\x1f", 4)
    trailers, reverts = T.gitmem_trailers(block)
    if not reverts and trailers.get(T.REVERTS):
        reverts = (trailers[T.REVERTS],)
    changes = []
    for line in raw.split("\n"):
        if line.startswith(":") and "\t" in line:
            meta, path = line.split("\t", 1)
            changes.append(Change(path, meta.split()[3]))
    changes.sort(key=lambda ch: ch.path)
    first = parents.split()[0] if parents.split() else None
    return LogCommit(sha, first, date, trailers, reverts, tuple(changes))


def iter_commits(repo: MemoryRepo, rev: str) -> Iterator[LogCommit]:
    """The first-parent commits of ``rev`` oldest first, each with the files it changed
    (a merge: what it changed against its first parent), parsed while git writes them."""
    args = ("log", "--first-parent", "--diff-merges=first-parent", "--reverse", "--raw")
    with repo.git.stream(
        *T.DEFAULT_BLOCKS,
        *BOUNDED,
        *args,
        "--no-abbrev",
        "--no-renames",
        f"--format={_FORMAT}",
        rev,
        "--",
    ) as stream:
        for piece in stream.pieces(_PIECE):
            for record in piece.split(b"\0"):
                if record:
                    yield _parse(record.decode("utf-8", "replace")[1:])


class _BoundedGit(Git):
    """git whose every process keeps ``BOUNDED`` caches: the rebuild's ``cat-file``, reading
    every card blob of history, otherwise maps and keeps the whole pack."""

    def popen(self, *args: str) -> subprocess.Popen[bytes]:
        return super().popen(*BOUNDED, *args)


def build(repo: MemoryRepo, tip: str, step: Callable[[int], None] | None = None) -> SearchState:
    """The state at ``tip``, folded from all of its history (``step(done)`` after each
    commit: the progress a person watches)."""
    state = SearchState()
    store = ObjectStore(_BoundedGit(repo.git.cwd), repo.git_dir)
    try:
        for done, c in enumerate(iter_commits(repo, tip), 1):
            fold(state, c, store.read_blob)
            if step is not None:
                step(done)
    finally:
        store.close()
    state.commit = tip
    return state


def advance(repo: MemoryRepo, state: SearchState, tip: str) -> bool:
    """Fold in the commits after ``state.commit`` when ``tip``'s first-parent history
    extends it; False when it does not (a rewrite, or a merge from the side)."""
    if state.commit is None:
        return False
    if state.commit == tip:
        return True
    try:
        new = list(iter_commits(repo, f"{state.commit}..{tip}"))
    except GitmemError:  # the cached commit is gone
        return False
    if not new or new[0].parent != state.commit or new[-1].sha != tip:
        return False
    for c in new:
        fold(state, c, repo.store.read_blob)
    state.unsaved += len(new)
    return True
