"""The rendered index kept card by card, so a new process after a few commits renders
only the cards those commits touched, without loading the replay state of all history.

``.git/gitmem/index-<branch>.cards.marshal`` holds, at one commit, that commit's ``cards``
tree as git stores it (with where each entry starts), and for each card its blob, the
length of its rendered lines in the I block file kept with it (``.txt``, named by its
digest) and where its record is in ``.cards.rows`` (marshal bytes behind a digest, read
only for a card new commits touched; new records are appended) of its resolved sections.
Each section with an entry keeps the digest of its text in the entry's commit (None: stale
whatever the text -- accepted in part, doubled by a merge, no such card then), so its stale
mark at a new tip is a comparison with the new blob, not a look through history. Each
piece has a digest and the cards file names the others (the block's digest, the records
file's token): a damaged or mismatched piece is ignored and all is rebuilt.

``advance`` brings it to the tip when history only grew linearly by a few commits without
reverts whose trailer blocks are plain, reading each new commit's ``cards`` tree only
where it differs from its parent's (common prefix and suffix), and when every section of a
touched card has its current entry either in the new commits or in the kept card. Anything
else (a revert, a merge, a section that reappeared) returns None and the caller refreshes
in full, which gives the same text by design (tests/test_scale.py checks both ways agree).
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import marshal
import os
from array import array
from typing import Any

from gitmem.errors import GitmemError
from gitmem.git.objects import TREE_MODE
from gitmem.index import digest_file, freshness
from gitmem.index import state_cache as index_cache
from gitmem.index.build import (
    CardEntry,
    Index,
    Layout,
    SectionEntry,
    card_info,
    render_block,
    render_card,
)
from gitmem.index.replay import _Fold
from gitmem.memory import branch_files
from gitmem.memory import trailers as T
from gitmem.memory.names import is_slug
from gitmem.memory.repo import MAIN, MemoryRepo

_LAYOUT = 3  # the file's layout (cards as records, the tree kept): another one is not read
_FAST_MAX = 128  # more new commits than this: a full refresh reads them

# One new commit: (sha, its root tree, accepted in part in review).
_Commit = tuple[str, str, bool]


def _read_new(repo: MemoryRepo, base: str, tip: str) -> tuple[_Fold, list[_Commit]] | None:
    """What ``fold(log(repo, f"{base}..{tip}"))`` gives, with the commits oldest first,
    read through the object store (no git process) when ``tip`` is a few commits above
    ``base``, each with one parent and a message whose trailers git reads the one obvious
    way (``trailers.plain_block``); None otherwise."""
    got = _Fold(tip=tip, oldest_parent=base)
    commits: list[_Commit] = []
    sha = tip
    for _ in range(_FAST_MAX):
        if sha == base:
            commits.reverse()
            return got, commits
        obj = repo.store.read(sha)
        if obj is None or obj.kind != "commit":
            return None
        raw_head, _, raw_message = obj.data.partition(b"\n\n")
        parents = []
        tree = ""
        for line in raw_head.decode("utf-8", "replace").split("\n"):
            key, _, value = line.partition(" ")
            if key == "parent":
                parents.append(value)
            elif key == "tree" and not tree:
                tree = value
            elif key == "encoding":
                return None
        block = T.plain_block(raw_message.decode("utf-8", "replace"))
        if len(parents) != 1 or block is None or not tree:
            return None
        if block:
            got.add(sha, *T.gitmem_trailers(block))
        # as ``freshness`` tells a commit accepted in part (its message past the first blank line)
        commits.append((sha, tree, freshness.PARTIAL_NOTE in obj.data.split(b"\n\n", 1)[-1]))
        sha = parents[0]
    return None


# -- the cards tree, entry by entry --------------------------------------------------------
_BLOB_MODES = (b"100644", b"100755", b"120000")


def _parse(raw: bytes, n: int) -> tuple[list[tuple[bytes, str, str]], list[int]]:
    """A tree's (mode, name, blob) entries and where each starts; ValueError if malformed."""
    out: list[tuple[bytes, str, str]] = []
    starts: list[int] = []
    pos = 0
    while pos < len(raw):
        sp = raw.index(b" ", pos)
        nul = raw.index(b"\0", sp)
        end = nul + 1 + n
        if end > len(raw):
            raise ValueError("a tree entry cut short")
        starts.append(pos)
        out.append(
            (raw[pos:sp], raw[sp + 1 : nul].decode("utf-8", "replace"), raw[nul + 1 : end].hex())
        )
        pos = end
    return out, starts


def _cards_of(entries: list[tuple[bytes, str, str]]) -> dict[str, str] | None:
    """project -> blob of the entries ``build.layout`` reads as cards; None when one is
    something ``layout`` would read in a way this file does not keep (a submodule)."""
    out: dict[str, str] = {}
    for mode, name, sha in entries:
        if mode == TREE_MODE or not name.endswith(".md") or not is_slug(name[:-3]):
            continue
        if mode not in _BLOB_MODES:
            return None
        out[name[:-3]] = sha
    return out


def _starts(data: bytes, n: int) -> list[int]:
    return _parse(data, n)[1]


def _diff(
    old: bytes, starts: list[int], new: bytes, n: int
) -> tuple[dict[str, str | None], list[int]] | None:
    """The cards that differ from tree ``old`` (whose entries start at ``starts``) to tree
    ``new`` (project -> new blob, None: gone), and where ``new``'s entries start. Only the
    entries between the trees' common prefix and common suffix are parsed; None when that
    part of ``new`` is not whole entries (then the caller refreshes in full)."""
    if old == new:
        return {}, starts
    a, b = old, new  # slices of bytes compare at memcmp speed (a memoryview's do not)
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # the longest common prefix
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    prefix = lo
    lo, hi = 0, min(len(a), len(b)) - prefix
    while lo < hi:  # the longest common suffix not overlapping it
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    i0 = max(bisect.bisect_right(starts, prefix) - 1, 0)
    e0 = starts[i0] if starts else 0
    bounds = [*starts, len(a)]
    i1 = bisect.bisect_left(bounds, len(a) - lo)
    e1 = bounds[i1]
    new_end = len(b) - (len(a) - e1)
    if new_end < e0:
        return None
    was, _ = _parse(a[e0:e1], n)
    now, at = _parse(b[e0:new_end], n)  # whole entries up to the common suffix, or ValueError
    before, after = _cards_of(was), _cards_of(now)
    if before is None or after is None:
        return None
    changes: dict[str, str | None] = {
        p: after.get(p) for p in before.keys() | after.keys() if before.get(p) != after.get(p)
    }
    delta = new_end - e1
    tail = starts[i1:] if not delta else [x + delta for x in starts[i1:]]
    return changes, [*starts[:i0], *(e0 + x for x in at), *tail]


def _cards_tree(repo: MemoryRepo, root: str) -> bytes | None:
    """The ``cards`` tree of root tree ``root`` as git stores it (b"": none); None when
    it is not a plain folder (``layout`` refuses a symlink: the full path says so)."""
    obj = repo.store.read(root)
    if obj is None or obj.kind != "tree":
        return None
    for mode, name, sha in _parse(obj.data, repo.store.sha_bytes)[0]:
        if name == "cards":
            if mode != TREE_MODE:
                return None
            cards = repo.store.read(sha)
            return cards.data if cards is not None and cards.kind == "tree" else None
    return b""


def _path(repo: MemoryRepo, branch: str) -> str:
    return branch_files.path(repo, branch, "cards.marshal")


def _rows_path(repo: MemoryRepo, branch: str) -> str:
    return branch_files.path(repo, branch, "cards.rows")


def drop(repo: MemoryRepo, branch: str) -> None:
    for path in (_path(repo, branch), _rows_path(repo, branch)):
        with contextlib.suppress(OSError):
            os.unlink(path)


# A card's record: where it is in the records file (offset, size), or its bytes, new.
Row = tuple[int, int] | bytes
_TOKEN = 20  # the records file starts with a random token its cards file names


def save(
    repo: MemoryRepo,
    branch: str,
    commit: str,
    index: Index,
    cards: Layout,
    headings: index_cache.Headings,
    merges: list[str],
    text_in: str,
) -> None:
    """Keep ``index`` (filled from ``cards``, whose headings lists are ``headings``'s) with
    the merges of the history behind it (newest first), which staleness depends on; its
    I block is kept under ``text_in`` (``state_cache.save_text``) right after."""
    blob_of = {id(info): blob for blob, info in headings.items()}
    todo = [
        (c.project, s.id, s.commit)
        for c in index.cards
        for s in c.sections
        if s.indexed and s.commit
    ]
    try:
        got = repo.store.read(f"{commit}:cards")
        tree = got.data if got is not None and got.kind == "tree" else b""
        starts = _starts(tree, repo.store.sha_bytes)
        written = freshness.written_digests(repo, branch, todo, merges)
    except (GitmemError, ValueError):
        return
    names: list[str] = []
    blobs: list[str] = []
    rows: list[Row] = []
    for (project, info), card in zip(cards, index.cards, strict=True):
        blob = blob_of.get(id(info))
        if blob is None or project != card.project:
            return  # not the layout this index was filled from: keep nothing
        secs = [
            [
                s.id,
                list(s.keywords),
                s.summary,
                s.commit,
                written.get((project, s.id, s.commit)) if s.indexed and s.commit else None,
            ]
            for s in card.sections
        ]
        names.append(project)
        blobs.append(blob)
        rows.append(marshal.dumps(secs))
    _write(
        repo, branch, commit, tree, starts, names, blobs, rows, index.parts(), merges, text_in, None
    )


def _write(
    repo: MemoryRepo,
    branch: str,
    commit: str,
    tree: bytes,
    starts: list[int],
    names: list[str],
    blobs: list[str],
    rows: list[Row],
    parts: list[str],
    merges: list[str],
    text_in: str,
    source: dict[str, Any] | None,
) -> None:
    """The cards file. The rendered lines are not in it but in ``text_in``'s I block file
    (``state_cache.save_text``, written right after), named by the text's digest; the
    cards' records are in a records file (``.cards.rows``), each behind its digest: the
    new ones are appended to the one ``source`` (the cards file read) names, when it is
    this branch's and still as that file left it, else all are written to a new one
    first (a new token: the old cards file no longer reads it)."""
    fresh = [r for r in rows if isinstance(r, bytes)]
    new_bytes = sum(len(r) + 20 for r in fresh)
    live = new_bytes + sum(r[1] for r in rows if not isinstance(r, bytes))
    path = _rows_path(repo, branch)
    at: int | None = None
    if (
        source is not None
        and source["rows_of"] == branch
        and source["size"] + new_bytes <= 2 * live + 262144
    ):
        at = _append(path, source["size"], b"".join(hashlib.sha1(r).digest() + r for r in fresh))
    rewritten = at is None
    if at is not None and source is not None:
        token, size = source["token"], at + new_bytes
    else:  # every record written anew
        old = b""
        if source is not None and len(fresh) < len(rows):
            old = _records(repo, source)
        token = os.urandom(_TOKEN)
        out = [token]
        for r in rows:
            out.append(
                hashlib.sha1(r).digest() + r if isinstance(r, bytes) else old[r[0] : r[0] + r[1]]
            )
        blob = b"".join(out)
        if not digest_file.replace(f"{path}.{os.getpid()}.tmp", path, blob):
            return
        at, size = _TOKEN, len(blob)
    offsets: list[int] = []
    sizes: list[int] = []
    pos = _TOKEN if rewritten else at  # where the records written now start
    for r in rows:
        if isinstance(r, bytes) or rewritten:
            n = len(r) + 20 if isinstance(r, bytes) else r[1]
            offsets.append(pos)
            sizes.append(n)
            pos += n
        else:
            offsets.append(r[0])
            sizes.append(r[1])
    body = render_block(parts).encode("utf-8")
    digest_file.write(
        _path(repo, branch),
        {
            "version": index_cache.CACHE_VERSION,
            "layout": _LAYOUT,
            "commit": commit,
            "tree": tree,
            "starts": array("I", starts).tobytes(),
            "names": names,
            "blobs": blobs,
            "rows_of": branch,
            "token": token,
            "size": size,
            "offsets": array("Q", offsets).tobytes(),
            "sizes": array("I", sizes).tobytes(),
            "lengths": array("I", [len(p) for p in parts]).tobytes(),
            "text": hashlib.sha1(body).hexdigest(),
            "txt": text_in,
            "merges": merges,
        },
    )


def _append(path: str, size: int, data: bytes) -> int | None:
    """``data`` appended to ``path`` when it is ``size`` bytes long; where it starts, or None."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    except OSError:
        return None
    try:
        if os.fstat(fd).st_size != size or os.write(fd, data) != len(data):
            return None
        return size
    except OSError:
        return None
    finally:
        os.close(fd)


def _records(repo: MemoryRepo, data: dict[str, Any]) -> bytes:
    """The records file ``data`` (a cards file) names; ValueError if it is another one."""
    with open(_rows_path(repo, data["rows_of"]), "rb") as fh:
        raw = fh.read()
    if raw[:_TOKEN] != data["token"] or len(raw) < data["size"]:
        raise ValueError("not the records file this cards file was written with")
    return raw


def _record(fh: Any, offset: int, size: int) -> list[list[Any]]:
    """One card's record (its sections) from the open records file; ValueError if damaged."""
    fh.seek(offset)
    raw = fh.read(size)
    if len(raw) != size or hashlib.sha1(raw[20:]).digest() != raw[:20]:
        raise ValueError("a damaged card record")
    got: list[list[Any]] = marshal.loads(raw[20:])
    return got


def _parts(repo: MemoryRepo, data: dict[str, Any]) -> list[str] | None:
    """Each card's rendered lines at the file's commit, cut from the I block kept with it
    (None when that block is not the one the cards file was written with)."""
    try:
        with open(index_cache.text_path(repo, data["txt"]), "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    head = f"{data['commit']}\n{index_cache.CACHE_VERSION}\n{data['text']}\n".encode()
    if not raw.startswith(head):
        return None
    body = raw[len(head) :]
    if hashlib.sha1(body).hexdigest() != data["text"]:
        return None
    lengths = array("I", data["lengths"]).tolist()
    if not lengths:
        return []
    text = body.decode("utf-8")
    start = len(_BLOCK_HEAD)
    if not text.startswith(_BLOCK_HEAD) or len(text) != start + sum(lengths) + len(_BLOCK_TAIL):
        return None
    out = []
    for n in lengths:
        out.append(text[start : start + n])
        start += n
    return out


_BLOCK_HEAD, _, _BLOCK_TAIL = render_block(["\0"]).partition("\0")


def _load(repo: MemoryRepo, branch: str) -> dict[str, Any] | None:
    data = digest_file.read(_path(repo, branch))
    if (
        not isinstance(data, dict)
        or data.get("version") != index_cache.CACHE_VERSION
        or data.get("layout") != _LAYOUT
    ):
        return None
    return data


def advance(repo: MemoryRepo, branch: str, tip: str) -> str | None:
    """The I block at ``tip`` from the kept cards and the commits since (which are kept in
    turn, under ``branch``), or None. A branch with no cards of its own (a session's: it
    starts at main's tip) starts from main's. Untouched cards are reused as stored."""
    own = _load(repo, branch)
    data = own if own is not None or branch == MAIN else _load(repo, MAIN)
    if data is None:
        return None
    try:
        parts = _parts(repo, data)
        if parts is None:
            return None
        if data["commit"] == tip:
            return render_block(parts)
        with open(_rows_path(repo, data["rows_of"]), "rb") as fh:
            if fh.read(_TOKEN) != data["token"]:
                return None  # not the records file this cards file was written with
            got = _moved(repo, data, tip, parts, fh)
    except (
        GitmemError,
        KeyError,
        IndexError,
        TypeError,
        ValueError,
        EOFError,
        UnicodeDecodeError,
        OSError,
    ):
        return None
    if got is None:
        return None
    # (a session branch still at main's commit reads main's: kept as is.) The caller keeps
    # the text under ``branch`` (``build.rendered``), where the file says it is.
    _write(repo, branch, tip, *got, data["merges"], branch, data)
    return render_block(got[-1])


def _moved(
    repo: MemoryRepo, data: dict[str, Any], tip: str, parts: list[str], fh: Any
) -> tuple[bytes, list[int], list[str], list[str], list[Row], list[str]] | None:
    """The kept pieces at ``tip`` (tree, starts, names, blobs, rows, parts), or None."""
    read = _read_new(repo, data["commit"], tip)
    if read is None:
        return None
    new, commits = read
    if new.reverts or new.merges:
        return None
    n = repo.store.sha_bytes
    names: list[str] = data["names"]
    blobs: list[str] = data["blobs"]
    base_blob = dict(zip(names, blobs, strict=True))
    entries = new.entries  # newest first: not folded onto any state
    cards_of: dict[str, set[str]] = {}  # commit -> the cards it wrote an entry for
    for key, values in entries.items():
        for value in values:
            cards_of.setdefault(value[0], set()).add(key.partition("/")[0])
    tree: bytes = data["tree"]
    starts = array("I", data["starts"]).tolist()
    changed: dict[str, str | None] = {}  # project -> its blob at tip (None: gone)
    then: dict[tuple[str, str], str | None] = {}  # (commit, card) -> the card's blob there
    for sha, root, _partial in commits:
        now = _cards_tree(repo, root)
        if now is None:
            return None
        diff = _diff(tree, starts, now, n)
        if diff is None:
            return None
        changed.update(diff[0])
        tree, starts = now, diff[1]
        for name in cards_of.get(sha, ()):
            then[(sha, name)] = changed[name] if name in changed else base_blob.get(name)
    partial = {sha for sha, _, p in commits if p}
    touched = set(changed) | {key.partition("/")[0] for key in entries}
    at = {name: i for i, name in enumerate(names)}
    rows: list[Row] = list(
        zip(array("Q", data["offsets"]).tolist(), array("I", data["sizes"]).tolist(), strict=True)
    )
    if len(rows) != len(names):
        return None
    redone: dict[str, tuple[str, bytes, str] | None] = {}  # project -> (blob, row, part)
    digested: dict[str, dict[str, str]] = {}
    for project in sorted(touched):
        blob = changed[project] if project in changed else base_blob.get(project)
        if blob is None:
            if project in at:
                redone[project] = None  # the card is gone
            continue
        text = (repo.store.read_blob(blob) or b"").decode("utf-8", "replace")
        info = card_info(text)
        current = digested[blob] = freshness.digests(text)  # (often the blob an entry wrote)
        old = {}
        if project in at:
            kept = rows[at[project]]
            assert not isinstance(kept, bytes)
            old = {s[0]: s for s in _record(fh, *kept)}
        secs: list[list[Any]] = []
        for sid, _heading in info[1:]:
            got = entries.get(f"{project}/{sid}")
            if got:
                sha, kws, text_summary = got[0]
                summary = text_summary or None
                keywords = [k for k in (k.strip() for k in kws.split(",")) if k]
                written = None
                if summary is not None:
                    blob_then = then.get((sha, project))
                    if sha not in partial and blob_then is not None:
                        if blob_then not in digested:
                            raw = repo.store.read_blob(blob_then) or b""
                            digested[blob_then] = freshness.digests(raw.decode("utf-8", "replace"))
                        written = digested[blob_then].get(sid)
                secs.append([sid, keywords, summary, sha, written])
            elif sid in old:
                secs.append(old[sid])
            else:
                return None  # its entry, if any, is in older history: a full refresh
        shown = []
        for (sid, heading), (_, kws_, summary_, sha_, written_) in zip(info[1:], secs, strict=True):
            # stale: the section's text differs from the entry's (see freshness.py)
            stale = (
                summary_ is not None
                and bool(sha_)
                and (written_ is None or written_ != current.get(sid))
            )
            shown.append(SectionEntry(sid, heading, tuple(kws_), summary_, sha_, stale))
        card = CardEntry(project, info[0][0] or project, tuple(shown))
        redone[project] = (blob, marshal.dumps(secs), render_card(card))
    if all(p in at for p, v in redone.items() if v is not None) and all(
        v is not None for v in redone.values()
    ):
        names, blobs, rows, parts = list(names), list(blobs), list(rows), list(parts)
        for project, got_row in redone.items():
            assert got_row is not None
            i = at[project]
            blobs[i], rows[i], parts[i] = got_row
        return tree, starts, names, blobs, rows, parts
    keep = {p: (blobs[i], rows[i], parts[i]) for p, i in at.items()}
    for project, got_row in redone.items():
        if got_row is None:
            del keep[project]
        else:
            keep[project] = got_row
    order = sorted(keep)
    return (
        tree,
        starts,
        order,
        [keep[p][0] for p in order],
        [keep[p][1] for p in order],
        [keep[p][2] for p in order],
    )
