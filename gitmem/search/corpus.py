"""The search index: every section value a branch's history has held, and its transcripts.

A pure function of the branch's first-parent history, folded oldest first, one commit
at a time (``fold``): each card a commit writes is compared section by section with the
values in force; a changed or removed section's value becomes *past* (with the date it
was replaced) and its new text becomes the *current* document, carrying the section's
index entry (keywords, summary). Committed transcripts (``sessions/<id>.jsonl``) add one
document per turn. A past value's text is not kept: its document names where it was read
(the card's blob and the section's place in it) and the text is read from git when a hit
shows it, so the state grows with the number of values, not with their text. Documents are kept as weighted term counts in an inverted index, so
a new commit costs only its own documents (``advance``), and ranking reads the postings
of the query's terms only.

The state is a derived cache under ``.git/gitmem/`` like the memory index's: keyed by
the commit it was built at and carrying a sha1 of its content, so a damaged or edited
file is rebuilt from history, never served; ``gitmem reindex`` compares it with a
rebuild (``rebuild``) by the state's ``fingerprint``, which the file carries, so a cache
that matches is never loaded beside the rebuilt state. A rebuild reads the log a piece
at a time and folds each commit as it is parsed: what it holds is the state itself.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import marshal
import os
import sys
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import nullcontext as no_gc  # (the index no longer pauses the GC)
from dataclasses import dataclass, field
from typing import Any, ClassVar

from gitmem.errors import GitmemError
from gitmem.git.objects import ObjectStore
from gitmem.git.runner import Git
from gitmem.memory import trailers as T
from gitmem.memory.cards import sections
from gitmem.memory.names import is_slug
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.search.terms import terms

CACHE_VERSION = 6  # 6: the dates packed in one buffer
_DIGEST = 20
SAVE_EVERY = 256  # commits folded in memory before the file on disk is rewritten
ZERO = "0" * 40
TREE = b"40000"

CURRENT, PAST, TURN, GONE = 0, 1, 2, 3
# A document: [kind, card, section, heading, text, keywords, summary, date, until, ref, length,
# commit, origin]; ref is a section's card title, or a turn's "<session>#<n>"; commit wrote
# the value; origin is where a section value was read: the card blob's raw id and the
# section's place among the card's sections (4 bytes, big-endian); b"" for a turn. A past
# value's text is "" (``text_of`` reads it back through its origin).
# A posting: a doc id and its count in one number, count << shift | doc. A term's postings
# are 4 bytes each ("I": 8 bits of count, 24 of doc) while they fit, else 8 ("Q": 32 + 32).
POSTING, WIDE = "I", "Q"
_SHIFT = {POSTING: 24, WIDE: 32}
_LITTLE = sys.byteorder == "little"  # a posting's low bytes (its doc) come first
(
    KIND,
    CARD,
    SECTION,
    HEADING,
    TEXT,
    KEYWORDS,
    SUMMARY,
    DATE,
    UNTIL,
    REF,
    LENGTH,
    COMMIT,
    ORIGIN,
) = range(13)
# Field weights (integers, so a rebuild and an incremental fold add up to the same state).
W_CARD, W_HEADING, W_KEYWORDS, W_SUMMARY, W_TEXT = 6, 4, 4, 3, 2


class Docs:
    """The documents, kept in columns (a list of 13-field lists took ~230 bytes a document
    beside its values): ``docs[n]`` is document n as a list (a copy: ``set`` changes it), the
    kind and length are arrays, a commit id and an origin fixed-width bytes in one bytearray
    each (all zero for none), the strings lists of shared values, and the dates (one per
    commit, ~75 bytes each as str objects) packed in one buffer the date and until columns
    point into."""

    _STR = (CARD, SECTION, HEADING, TEXT, KEYWORDS, SUMMARY, REF)
    _AT: ClassVar[dict[int, int]] = {f: i for i, f in enumerate(_STR)}

    def __init__(self) -> None:
        self.kind = bytearray()
        self.length: array[int] = array("I")
        self.strs: list[list[str]] = [[] for _ in self._STR]
        self.commits = bytearray()
        self.origins = bytearray()
        self.width = 0  # bytes of a commit id (20, or 32 in a sha256 repo); 0 before the first
        # dates: value i is dtext[doff[i]:doff[i + 1]] (value 0 is ""); date, until: value ids
        self.dtext = bytearray()
        self.doff: array[int] = array("I", [0, 0])
        self.date: array[int] = array("I")
        self.until: array[int] = array("I")
        self._last = ("", 0)  # the date value added last (a commit's documents share it)

    def __len__(self) -> int:
        return len(self.kind)

    def _date_text(self, i: int) -> str:
        off = self.doff
        return self.dtext[off[i] : off[i + 1]].decode("utf-8", "surrogatepass")

    def _date_id(self, value: str) -> int:
        if value == "":
            return 0
        if value == self._last[0]:
            return self._last[1]
        self.dtext += value.encode("utf-8", "surrogatepass")
        self.doff.append(len(self.dtext))
        self._last = (value, len(self.doff) - 2)
        return self._last[1]

    def __getitem__(self, n: int) -> list[Any]:
        w = self.width
        st = self.strs
        commit = self.commits[n * w : (n + 1) * w]
        origin = bytes(self.origins[n * (w + 4) : (n + 1) * (w + 4)])
        return [
            self.kind[n],
            st[0][n],
            st[1][n],
            st[2][n],
            st[3][n],
            st[4][n],
            st[5][n],
            self._date_text(self.date[n]),
            self._date_text(self.until[n]),
            st[6][n],
            self.length[n],
            commit.hex() if any(commit) else "",
            origin if any(origin) else b"",
        ]

    def __iter__(self) -> Iterator[list[Any]]:
        return (self[n] for n in range(len(self)))

    def _widen(self, commit: str, origin: bytes) -> None:
        w = len(commit) // 2 or max(len(origin) - 4, 0)
        if not self.width and w:
            self.width = w
            self.commits = bytearray(w * len(self))
            self.origins = bytearray((w + 4) * len(self))
        if (commit and len(commit) != 2 * self.width) or (origin and len(origin) != self.width + 4):
            raise ValueError("commit ids of two widths")

    def append(self, doc: list[Any]) -> None:
        self._widen(doc[COMMIT], doc[ORIGIN])
        self.kind.append(doc[KIND])
        self.length.append(doc[LENGTH])
        for col, f in zip(self.strs, self._STR, strict=True):
            col.append(doc[f])
        self.date.append(self._date_id(doc[DATE]))
        self.until.append(self._date_id(doc[UNTIL]))
        w = self.width
        self.commits += bytes.fromhex(doc[COMMIT]) if doc[COMMIT] else bytes(w)
        self.origins += doc[ORIGIN] or bytes(w + 4 if w else 0)

    def set(self, n: int, f: int, value: Any) -> None:
        """Change field ``f`` of document n (its kind, a string, or its origin)."""
        if f == KIND:
            self.kind[n] = value
        elif f == ORIGIN:
            w = self.width + 4
            self.origins[n * w : (n + 1) * w] = value or bytes(w)
        elif f == DATE:
            self.date[n] = self._date_id(value)
        elif f == UNTIL:
            self.until[n] = self._date_id(value)
        else:
            self.strs[self._AT[f]][n] = value

    def to_data(self) -> list[Any]:
        return [
            bytes(self.kind),
            self.length.tobytes(),
            self.strs,
            bytes(self.commits),
            bytes(self.origins),
            self.width,
            bytes(self.dtext),
            self.doff.tobytes(),
            self.date.tobytes(),
            self.until.tobytes(),
        ]

    @classmethod
    def from_data(cls, data: list[Any]) -> Docs:
        docs = cls()
        kind, length, strs, commits, origins, docs.width, dtext, doff, date, until = data
        docs.kind, docs.commits, docs.origins = (
            bytearray(kind),
            bytearray(commits),
            bytearray(origins),
        )
        docs.length.frombytes(length)
        docs.strs = strs
        docs.dtext = bytearray(dtext)
        docs.doff = array("I")
        docs.doff.frombytes(doff)
        docs.date.frombytes(date)
        docs.until.frombytes(until)
        n, w, values = len(docs.kind), docs.width, len(docs.doff) - 1
        if (
            len(docs.length) != n
            or len(strs) != len(cls._STR)
            or any(len(c) != n for c in strs)
            or len(commits) != n * w
            or len(origins) != (n * (w + 4) if w else 0)
            or len(docs.date) != n
            or len(docs.until) != n
            or values < 1
            or docs.doff[0] != 0
            or docs.doff[1] != 0
            or docs.doff[-1] != len(dtext)
            or any(a > b for a, b in zip(docs.doff, docs.doff[1:], strict=False))
            or (n and max(max(docs.date), max(docs.until)) >= values)
        ):
            raise ValueError("document columns of different lengths")
        return docs


@dataclass
class SearchState:
    commit: str | None = None
    docs: Docs = field(default_factory=Docs)
    # term -> its postings (count << shift | doc, docs ascending): 4 bytes a posting where
    # they fit (``POSTING``), 8 where not (``WIDE``); a dict of dicts took ~60
    postings: dict[str, array[int]] = field(default_factory=dict)
    live: int = 0  # documents not GONE
    total: int = 0  # sum of their weighted lengths
    cards: dict[str, dict[str, int]] = field(default_factory=dict)  # card -> section -> doc
    titles: dict[str, str] = field(default_factory=dict)
    entries: dict[str, list[str]] = field(default_factory=dict)  # card/section -> [kw, summary]
    past: dict[str, list[int]] = field(default_factory=dict)  # card/section -> past docs
    sessions: dict[str, list[Any]] = field(default_factory=dict)  # id -> [lines, sha1, [docs]]
    unsaved: int = 0  # commits folded since the file on disk (not part of the state)
    norms: tuple[tuple[int, int, int], list[float]] | None = None  # ranking's, derived
    read: Any = None  # blob id -> bytes: where past texts are read from (not part of the state)

    def length_norms(self, k1: float, b: float) -> list[float]:
        """BM25's length normalisation of every document, k1 * (1 - b + b * len / avg)."""
        key = (len(self.docs), self.live, self.total)
        if self.norms is None or self.norms[0] != key:
            avg = self.total / max(self.live, 1) or 1.0
            self.norms = (key, [k1 * (1 - b + b * n / avg) for n in self.docs.length])
        return self.norms[1]

    def to_data(self) -> dict[str, Any]:
        return {
            "version": CACHE_VERSION,
            "commit": self.commit,
            "docs": self.docs.to_data(),
            "postings": {t: a.tobytes() for t, a in self.postings.items()},
            "wide": [t for t, a in self.postings.items() if a.typecode == WIDE],
            "live": self.live,
            "total": self.total,
            "cards": self.cards,
            "titles": self.titles,
            "entries": self.entries,
            "past": self.past,
            "sessions": self.sessions,
        }

    def comparable(self) -> dict[str, Any]:
        """``to_data`` with each document's dates as values rather than where they are
        packed (which depends on the order they were met): equal for equal states."""
        data = self.to_data()
        docs, text = self.docs, self.docs._date_text
        data["docs"] = [
            *data["docs"][:6],
            [(text(a), text(b)) for a, b in zip(docs.date, docs.until, strict=True)],
        ]
        return data

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> SearchState:
        keys = (
            "commit",
            "docs",
            "postings",
            "live",
            "total",
            "cards",
            "titles",
            "entries",
            "past",
            "sessions",
        )
        state = cls(**{k: data[k] for k in keys})
        state.docs = Docs.from_data(data["docs"])
        wide = set(data["wide"])
        state.postings = {
            t: _postings(b, WIDE if t in wide else POSTING) for t, b in data["postings"].items()
        }
        return state


def _postings(raw: bytes, typecode: str) -> array[int]:
    got = array(typecode)
    got.frombytes(raw)
    return got


def _split(post: array[int]) -> tuple[Sequence[int], Sequence[int]]:
    """A term's doc ids and counts, as two sequences (cut apart by C loops: a ranking
    reads every posting of the query's terms)."""
    s = _SHIFT[post.typecode]
    if post.typecode == POSTING and _LITTLE:
        raw = bytearray(memoryview(post).cast("B"))
        counts = raw[3::4]
        raw[3::4] = bytes(len(post))
        return memoryview(raw).cast("I"), counts
    mask = (1 << s) - 1
    return [p & mask for p in post], [p >> s for p in post]


def docs_of(post: array[int]) -> Sequence[int]:
    """A term's doc ids, ascending."""
    return _split(post)[0]


def pairs(post: array[int]) -> Iterator[tuple[int, int]]:
    """A term's (doc, count) pairs."""
    docs, counts = _split(post)
    return zip(docs, counts, strict=True)


def _append(post: dict[str, array[int]], term: str, n: int, count: int) -> None:
    got = post.get(term)
    if got is None:
        got = post[term] = array(POSTING)
    if got.typecode == POSTING and (count > 0xFF or n > 0xFFFFFF):
        got = post[term] = array(WIDE, ((c << 32) | d for d, c in pairs(got)))
    got.append((count << _SHIFT[got.typecode]) | n)


# -- documents ---------------------------------------------------------------------


def _weighted(doc: list[Any]) -> Counter[str]:
    counts: Counter[str] = Counter()
    if doc[KIND] == TURN:
        fields = [(doc[TEXT], W_TEXT)]
    else:
        card = f"{doc[CARD]} {doc[REF]}"  # the card's slug, whole and in parts, and its title
        fields = [
            (card, W_CARD),
            (doc[HEADING], W_HEADING),
            (doc[KEYWORDS], W_KEYWORDS),
            (doc[SUMMARY], W_SUMMARY),
            (doc[TEXT], W_TEXT),
        ]
    for text, weight in fields:
        for term in terms(text):
            counts[term] += weight
    return counts


def _add(state: SearchState, doc: list[Any]) -> int:
    counts = _weighted(doc)
    doc[LENGTH] = sum(counts.values())
    n = len(state.docs)
    state.docs.append(doc)
    post = state.postings
    for term, count in counts.items():
        _append(post, term, n, count)
    state.live += 1
    state.total += doc[LENGTH]
    return n


def _drop(state: SearchState, n: int) -> None:
    doc = state.docs[n]
    if doc[KIND] == GONE:
        return
    for term in _weighted(doc):
        got = state.postings.get(term)
        if got is not None:
            docs = docs_of(got)
            at = bisect_left(docs, n)
            if at < len(docs) and docs[at] == n:
                del got[at]
            if not got:
                del state.postings[term]
    state.live -= 1
    state.total -= doc[LENGTH]
    state.docs.set(n, KIND, GONE)
    state.docs.set(n, TEXT, "")


def _retire(state: SearchState, key: str, n: int, date: str) -> None:
    """A section value replaced at ``date``: it stays searchable as a past value (its terms
    stay in the postings; its text is let go, read back through its origin when needed)."""
    for f, value in ((KIND, PAST), (UNTIL, date), (TEXT, "")):
        state.docs.set(n, f, value)
    state.past.setdefault(key, []).append(n)


def origin_text(read: Any, origin: bytes) -> str:
    """The text of the section an origin names: the card blob read and cut as a fold does."""
    raw: bytes = read(origin[:-4].hex()) or b""
    secs = _card_sections(raw.decode("utf-8", "replace"))[1]
    pos = int.from_bytes(origin[-4:], "big")
    return secs[pos][2] if pos < len(secs) else ""


def text_of(state: SearchState, doc: list[Any], read: Any = None) -> str:
    """A document's text: a past section value's read from git (``read``, else the
    state's), any other document's from the document."""
    if doc[KIND] != PAST or not doc[ORIGIN]:
        return str(doc[TEXT])
    return origin_text(read or state.read, doc[ORIGIN])


# -- folding one commit ------------------------------------------------------------


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


def _card_sections(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    lines = text.split("\n")
    title = next((ln[2:].strip() for ln in lines if ln.startswith("# ")), "")
    # ids, headings and titles recur in every value of a section: one string each
    out = [
        (sys.intern(s.id), sys.intern(s.heading), "\n".join(lines[s.start + 1 : s.end]).strip())
        for s in sections(text)
    ]
    return sys.intern(title), out


def _fold_card(
    state: SearchState, c: LogCommit, card: str, blob: str, entry_key: str | None, read: Any
) -> None:
    have = state.cards.get(card, {})
    if blob == ZERO:
        for sid, gone in have.items():
            _retire(state, f"{card}/{sid}", gone, c.date)
        state.cards.pop(card, None)
        state.titles.pop(card, None)
        return
    raw: bytes = read(blob) or b""
    title, secs = _card_sections(raw.decode("utf-8", "replace"))
    state.titles[card] = title
    blob_id = bytes.fromhex(blob)
    now: dict[str, int] = {}
    for pos, (sid, heading, text) in enumerate(secs):
        key = f"{card}/{sid}"
        n = have.get(sid)
        doc = state.docs[n] if n is not None else None
        if n is not None and doc is not None and doc[HEADING] == heading and doc[TEXT] == text:
            entry = state.entries.get(key)
            if key == entry_key and entry and [doc[KEYWORDS], doc[SUMMARY]] != entry:
                _drop(state, n)  # the index entry changed, the text did not
                doc = [
                    CURRENT,
                    card,
                    sid,
                    heading,
                    text,
                    entry[0],
                    entry[1],
                    doc[DATE],
                    "",
                    title,
                    0,
                    doc[COMMIT],
                    doc[ORIGIN],
                ]
                n = _add(state, doc)
            now[sid] = n
            continue
        if n is not None:
            _retire(state, key, n, c.date)
        if c.reverts:  # an undone edit brings back the entry that described this text
            for old in reversed(state.past.get(key, [])):
                was = state.docs[old]
                if text_of(state, was, read) == text:
                    state.entries[key] = [was[KEYWORDS], was[SUMMARY]]
                    break
        kw, summary = state.entries.get(key, ["", ""])
        now[sid] = _add(
            state,
            [
                CURRENT,
                card,
                sid,
                heading,
                text,
                kw,
                summary,
                c.date,
                "",
                title,
                0,
                c.sha,
                blob_id + pos.to_bytes(4, "big"),
            ],
        )
    for sid, gone in have.items():
        if sid not in now:
            _retire(state, f"{card}/{sid}", gone, c.date)
    state.cards[card] = now


def _fold_session(state: SearchState, sid: str, blob: str, read: Any) -> None:
    known = state.sessions.get(sid)
    if blob == ZERO:
        for n in known[2] if known else ():
            _drop(state, n)
        state.sessions.pop(sid, None)
        return
    lines = (read(blob) or b"").split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    start, ids = 0, []
    if known is not None:
        count, digest, ids = known
        if count <= len(lines) and hashlib.sha1(b"\n".join(lines[:count])).hexdigest() == digest:
            start = count  # appended to: only the new turns are read
        else:
            for n in ids:
                _drop(state, n)
            ids = []
    for i in range(start, len(lines)):
        doc = turn_doc(sid, i + 1, lines[i])
        if doc is not None:
            ids.append(_add(state, doc))
    state.sessions[sid] = [len(lines), hashlib.sha1(b"\n".join(lines)).hexdigest(), ids]


def turn_doc(session: str, n: int, line: bytes) -> list[Any] | None:
    """One transcript line as a document (None for a line that holds no text)."""
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    text = rec.get("text") if isinstance(rec, dict) else None
    if not isinstance(text, str) or not text.strip():
        return None
    role = str(rec.get("role", "?"))
    return [
        TURN,
        "",
        "",
        role,
        text,
        "",
        "",
        str(rec.get("at", "")),
        "",
        f"{session}#{n}",
        0,
        "",
        b"",
    ]


def fold(state: SearchState, c: LogCommit, read: Any) -> None:
    """Fold in one commit, newer than every commit folded so far."""
    entry_key = None
    card, section = c.trailers.get(T.CARD), c.trailers.get(T.SECTION)
    if card and section and not c.reverts and T.LAYER not in c.trailers:
        entry_key = f"{card}/{section}"
        # a section's keywords recur from edit to edit (summaries do not): one string each
        state.entries[entry_key] = [
            sys.intern(c.trailers.get(T.KEYWORDS) or ""),
            c.trailers.get(T.SUMMARY) or "",
        ]
    for ch in c.changes:
        folder, _, name = ch.path.partition("/")
        if folder == "cards" and name.endswith(".md") and is_slug(name[:-3]):
            _fold_card(state, c, sys.intern(name[:-3]), ch.blob, entry_key, read)
        elif folder == "sessions" and name.endswith(".jsonl") and "/" not in name:
            _fold_session(state, name[:-6], ch.blob, read)
    state.commit = c.sha


# -- reading history ---------------------------------------------------------------

_FORMAT = "%x00%x1e%H%x1f%P%x1f%aI%x1f%(trailers)%x1f"  # a NUL starts each record


_PIECE = 1 << 18  # bytes of the log read at a time


# git's own caches for a walk of every tree: its delta bases (96 MiB by default) and the
# pack windows it maps (touched pages count as its memory) make a log of all of history
# with --raw grow to 4x what it prints; bounded, the walk takes no longer.
_WALK = (
    "-c",
    "core.deltaBaseCacheLimit=8m",
    "-c",
    "core.packedGitWindowSize=8m",
    "-c",
    "core.packedGitLimit=32m",
)


def _log_args(rev: str) -> tuple[str, ...]:
    return (
        *T.DEFAULT_BLOCKS,
        *_WALK,
        "log",
        "--first-parent",
        "--diff-merges=first-parent",
        "--reverse",
        "--raw",
        "--no-abbrev",
        "--no-renames",
        f"--format={_FORMAT}",
        rev,
        "--",
    )


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
    (a merge: what it changed against its first parent), parsed as git writes them: the
    log is never held whole, nor its commits all at once."""
    with repo.git.stream(*_log_args(rev)) as stream:
        for piece in stream.pieces(_PIECE):
            for record in piece.split(b"\0"):
                if record:
                    yield _parse(record.decode("utf-8", "replace")[1:])


def read_commits(repo: MemoryRepo, rev: str) -> list[LogCommit]:
    """``iter_commits`` as a list."""
    return list(iter_commits(repo, rev))


_FAST_MAX = 32  # more new commits than this: one git log reads them
_plain_block = T.plain_block  # a message whose trailers git reads the one obvious way


def _iso(signature: str) -> str | None:
    """The date of an author line as git's %aI writes it."""
    try:
        epoch, tz = signature.rsplit(" ", 2)[1:]
        sign = -1 if tz[0] == "-" else 1
        offset = dt.timedelta(hours=int(tz[1:3]), minutes=int(tz[3:5])) * sign
        return dt.datetime.fromtimestamp(int(epoch), dt.timezone(offset)).isoformat()
    except (ValueError, IndexError, OverflowError):
        return None


def _entries(repo: MemoryRepo, tree: str | None) -> dict[bytes, tuple[bytes, str]]:
    """A tree's entries by raw bytes (name -> (mode, sha)), parsed once by the store."""
    if tree is None:
        return {}
    entries = repo.store.read_tree(tree)
    return {e.name: (e.mode, e.sha) for e in entries}


def _changed(repo: MemoryRepo, old: str | None, new: str | None) -> list[tuple[bytes, Any, Any]]:
    """(name, old entry, new entry) for the entries that differ between two trees; the
    trees' raw entry bytes are compared first, so a 1,000-card folder costs little."""
    if old == new:
        return []
    a = set(repo.store._tree(old)[1]) if old else set()
    b = set(repo.store._tree(new)[1]) if new else set()
    names = {chunk[chunk.index(b" ") + 1 : chunk.index(b"\0")] for chunk in a ^ b}
    if not names:
        return []
    before, after = _entries(repo, old), _entries(repo, new)
    return [(n, before.get(n), after.get(n)) for n in sorted(names)]


def _changes(repo: MemoryRepo, old_root: str, new_root: str) -> list[Change]:
    """What ``git log --raw`` lists under cards/ and sessions/ (top level) between trees."""
    out: list[Change] = []
    tops = {n: (x, y) for n, x, y in _changed(repo, old_root, new_root)}
    for folder in (b"cards", b"sessions"):
        a, b = tops.get(folder, (None, None))
        if a is None and b is None:
            continue
        old = a[1] if a and a[0] == TREE else None
        new = b[1] if b and b[0] == TREE else None
        for name, x, y in _changed(repo, old, new):
            path = f"{folder.decode()}/{name.decode('utf-8', 'surrogateescape')}"
            if y is not None and y[0] != TREE:
                out.append(Change(path, y[1]))
            elif x is not None and x[0] != TREE:
                out.append(Change(path, ZERO))
    out.sort(key=lambda ch: ch.path)
    return out


def _read_fast(repo: MemoryRepo, base: str, tip: str) -> list[LogCommit] | None:
    """The commits after ``base`` up to ``tip`` read through the object store (no git
    process), when each has one parent and a plain message; None otherwise."""
    out: list[LogCommit] = []
    sha = tip
    while sha != base:
        if len(out) >= _FAST_MAX:
            return None
        got = repo.store.read(sha)
        if got is None or got.kind != "commit":
            return None
        head, _, message = got.data.decode("utf-8", "replace").partition("\n\n")
        tree, parents, date = "", [], None
        for line in head.split("\n"):
            key, _, value = line.partition(" ")
            if key == "tree":
                tree = value
            elif key == "parent":
                parents.append(value)
            elif key == "author":
                date = _iso(value)
            elif key == "encoding":
                return None
        block = _plain_block(message)
        if len(parents) != 1 or date is None or block is None:
            return None
        trailers, reverts = T.gitmem_trailers(block)
        if not reverts and trailers.get(T.REVERTS):
            reverts = (trailers[T.REVERTS],)
        parent = repo.store.read(parents[0])
        if parent is None or parent.kind != "commit" or not parent.data.startswith(b"tree "):
            return None
        changes = _changes(repo, parent.data[5 : parent.data.index(b"\n")].decode(), tree)
        out.append(LogCommit(sha, parents[0], date, trailers, reverts, tuple(changes)))
        sha = parents[0]
    out.reverse()
    return out


class _WalkGit(Git):
    """git whose ``cat-file --batch`` keeps ``_WALK``'s bounded caches: reading every card
    blob of history, an unbounded one maps the whole pack and grows as large as it."""

    def popen(self, *args: str) -> Any:
        return super().popen(*_WALK, *args)


def build(repo: MemoryRepo, tip: str) -> SearchState:
    state = SearchState()
    store = ObjectStore(_WalkGit(repo.git.cwd), repo.git_dir)
    try:
        with no_gc():
            for c in iter_commits(repo, tip):
                fold(state, c, store.read_blob)
    finally:
        store.close()
    state.commit = tip
    state.read = repo.store.read_blob
    return state


def advance(repo: MemoryRepo, state: SearchState, tip: str) -> bool:
    """Fold in the commits after ``state.commit`` when ``tip``'s first-parent history
    extends it; False when it does not (a rewrite, or a merge from the side)."""
    if state.commit is None:
        return False
    if state.commit == tip:
        return True
    try:
        new = _read_fast(repo, state.commit, tip)
        if new is None:
            new = read_commits(repo, f"{state.commit}..{tip}")
    except GitmemError:  # the cached commit is gone
        return False
    if not new or new[0].parent != state.commit or new[-1].sha != tip:
        return False
    for c in new:
        fold(state, c, repo.store.read_blob)
    state.unsaved += len(new)
    return True


# -- the cache file ----------------------------------------------------------------


def _path(repo: MemoryRepo, branch: str) -> str:
    return str(repo.gitmem_dir / f"search-{branch.replace('/', '%')}.marshal")


def fingerprint(state: SearchState) -> bytes:
    """A sha1 of the state's content, read a document at a time: the same for equal states
    however they were made (marshal's bytes are not: they follow how objects are shared)."""
    h = hashlib.sha1(repr((CACHE_VERSION, state.commit, state.live, state.total)).encode())
    for doc in state.docs:
        h.update(repr(doc).encode())
    h.update(b"\x00postings")
    for term, post in state.postings.items():
        h.update(b"%d %s %s " % (len(post), post.typecode.encode(), repr(term).encode()))
        h.update(post.tobytes())
    for part in (state.cards, state.titles, state.entries, state.past, state.sessions):
        h.update(b"\x00part")
        for item in part.items():
            h.update(repr(item).encode())
    return h.digest()


# The file: sha1 of the rest, then the state's fingerprint, then the marshalled state.
def load(repo: MemoryRepo, branch: str) -> SearchState | None:
    try:
        with open(_path(repo, branch), "rb") as fh:
            raw = memoryview(fh.read())
        digest, rest = raw[:_DIGEST], raw[_DIGEST:]
        if hashlib.sha1(rest).digest() != digest:
            return None  # damaged or edited: rebuilt from history
        with no_gc():
            data = marshal.loads(rest[_DIGEST:])
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            return None
        state = SearchState.from_data(data)
        state.read = repo.store.read_blob
        return state
    except (OSError, ValueError, KeyError, TypeError, EOFError):
        return None


def save(repo: MemoryRepo, branch: str, state: SearchState, mark: bytes | None = None) -> None:
    """Write the cache file (``mark``: the state's fingerprint, when known already)."""
    path = _path(repo, branch)
    tmp = f"{path}.{os.getpid()}.tmp"
    mark = mark or fingerprint(state)
    blob = marshal.dumps(state.to_data())
    digest = hashlib.sha1(mark)
    digest.update(blob)
    try:
        with open(tmp, "wb") as fh:
            fh.write(digest.digest() + mark)
            fh.write(blob)
        os.replace(tmp, path)  # readers see the old file or the new one, never half
    except OSError:  # a read-only or full disk: the cache is simply not kept
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return
    state.unsaved = 0


def _stored_fingerprint(repo: MemoryRepo, branch: str) -> bytes | None:
    """The fingerprint the cache file carries, when the file is whole (read in pieces)."""
    try:
        with open(_path(repo, branch), "rb") as fh:
            digest, check = fh.read(_DIGEST), hashlib.sha1()
            mark = fh.read(_DIGEST)
            check.update(mark)
            while chunk := fh.read(1 << 16):  # a read allocates its whole size at once
                check.update(chunk)
    except OSError:
        return None
    return mark if len(mark) == _DIGEST and check.digest() == digest else None


def current(repo: MemoryRepo, branch: str = MAIN) -> SearchState:
    """The search state at ``branch``'s tip, folding in only new commits when it can: from
    this process's last state, the branch's cache file, or (a session branch) main's."""
    tip = repo.tip(branch)
    memo = repo.memo.get(("search", branch))
    state = memo if isinstance(memo, SearchState) else None
    if tip is None:
        return SearchState()
    if state is not None and state.commit == tip:
        return state
    rebuilt = False
    if state is None or not advance(repo, state, tip):
        state = None
        for source in dict.fromkeys([branch, MAIN]):
            loaded = load(repo, source)
            # a session branch folds its few commits onto main's file: no file of its own
            # (one per session would pile up) until it has SAVE_EVERY commits to keep
            if loaded is not None and advance(repo, loaded, tip):
                state = loaded
                break
        if state is None and branch != MAIN and (main_tip := repo.tip(MAIN)) is not None:
            base = build(repo, main_tip)  # main's file first: the next session starts from it
            save(repo, MAIN, base)
            if advance(repo, base, tip):
                state = base
        if state is None:
            state, rebuilt = build(repo, tip), True
    if rebuilt or state.unsaved >= SAVE_EVERY:
        save(repo, branch, state)
    repo.memo[("search", branch)] = state
    return state


def rebuild(repo: MemoryRepo, branch: str = MAIN) -> tuple[SearchState, bool | None]:
    """Rebuild from all of history (reindex): (the state, whether the cache matched it:
    None when there was none, False when it differed or was damaged)."""
    tip = repo.tip(branch)
    fresh = build(repo, tip) if tip else SearchState()
    mark = fingerprint(fresh)
    if _stored_fingerprint(repo, branch) == mark:
        same: bool | None = True  # the same content: no second state loaded to compare
    else:
        same = False if os.path.exists(_path(repo, branch)) else None  # damaged
        cached = load(repo, branch)
        if cached is not None:
            if tip is not None and cached.commit != tip:
                advance(repo, cached, tip)
            same = cached.comparable() == fresh.comparable()
            del cached
        if same is not True:
            save(repo, branch, fresh, mark)
    repo.memo[("search", branch)] = fresh
    return fresh, same
