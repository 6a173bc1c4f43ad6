"""Fresh or stale: an index entry is stale when its section's text changed after the entry
was written.

The summary of a section was written for the text the section had in the commit that
carries the entry. When the section's text at the tip differs from that (a person's
commit, a memory-tool edit that rewrote other sections, a merge, a hand resolution),
the entry is stale. Two more cases make an entry stale whatever the text says:

- the commit was accepted in part in review (``decide._partial_message``): its summary
  describes the whole edit, of which only some hunks landed;
- a merge joined two lines of history that both wrote an entry for the section: one
  side's summary would otherwise win silently. A new entry after the merge is fresh.

Everything here is a pure function of history and the tip's tree, so ``gitmem reindex``
and the incremental cache agree. Facts about immutable objects (a card blob's section
digests, the card blob at a commit, a merge's doubly described sections) are kept in
``.git/gitmem/index-fresh-<branch>.marshal`` with a digest, like the index cache.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from gitmem.index import digest_file
from gitmem.memory import trailers as T
from gitmem.memory.cards import sections
from gitmem.memory.repo import MemoryRepo

VERSION = 2
PARTIAL_NOTE = b"\n\nAccepted in part in review: "
_PARTIAL = "~"  # the card blob "at" a commit accepted in part: never equal to a real one


def digests(text: str) -> dict[str, str]:
    """Each section's id -> a digest of its text. Trailing blanks of lines and blank lines
    at the section's end do not count: appending a section after it changes nothing."""
    lines = text.split("\n")
    out: dict[str, str] = {}
    for s in sections(text):
        body = "\n".join(ln.rstrip() for ln in lines[s.start : s.end]).rstrip("\n")
        out[s.id] = hashlib.sha1(body.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return out


@dataclass
class Memo:
    """Facts about immutable objects, so keeping them is always right."""

    blobs: dict[str, dict[str, str]] = field(default_factory=dict)  # card blob -> digests
    at: dict[str, str] = field(default_factory=dict)  # "commit:card" -> card blob ("" none)
    contested: dict[str, list[str]] = field(default_factory=dict)  # merge -> ["card/sid\0sha"]
    # the last answer: a digest of its question (tip, entries, merges) and the stale keys
    last: tuple[str, list[str]] = ("", [])
    dirty: bool = False


def _path(repo: MemoryRepo, branch: str) -> str:
    return str(repo.gitmem_dir / f"index-fresh-{branch.replace('/', '%')}.marshal")


def _load(repo: MemoryRepo, branch: str) -> Memo:
    data = digest_file.read(_path(repo, branch))
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return Memo()
    try:
        return Memo(data["blobs"], data["at"], data["contested"], tuple(data["last"]))
    except (KeyError, TypeError):
        return Memo()


def _save(repo: MemoryRepo, branch: str, memo: Memo) -> None:
    data = {"version": VERSION, "blobs": memo.blobs, "at": memo.at, "contested": memo.contested,
            "last": list(memo.last)}
    digest_file.write(_path(repo, branch), data)
    memo.dirty = False


def memo_for(repo: MemoryRepo, branch: str) -> Memo:
    got = repo.memo.get(("fresh", branch))
    if isinstance(got, Memo):
        return got
    memo = _load(repo, branch)
    repo.memo[("fresh", branch)] = memo
    return memo


def _card_blobs(repo: MemoryRepo, commit: str) -> dict[str, str]:
    return {
        e.name.decode("utf-8", "replace")[:-3]: e.sha
        for e in repo.store.read_tree(f"{commit}:cards")
        if not e.is_tree and e.name.endswith(b".md")
    }


def _blob_at(repo: MemoryRepo, memo: Memo, commit: str, card: str) -> str:
    key = f"{commit}:{card}"
    got = memo.at.get(key)
    if got is not None:
        return got
    head = repo.store.read(commit)
    if head is not None and PARTIAL_NOTE in head.data.split(b"\n\n", 1)[-1]:
        got = _PARTIAL
    else:
        found = repo.store.read(f"{commit}:cards/{card}.md")
        got = found.sha if found and found.kind == "blob" else ""
    memo.at[key] = got
    memo.dirty = True
    return got


def _prefetch(repo: MemoryRepo, memo: Memo, pairs: set[tuple[str, str]]) -> None:
    """Read every (commit, card) not known yet in one ``git cat-file --batch``: the commit
    (accepted in part?) and the card's blob there, digested at once. A first refresh of a
    large client would otherwise read thousands of trees one at a time. git resolves
    ``REV:PATH`` itself here; it never follows a symlink in a tree, and a symlink's blob
    simply differs from the card's."""
    if not pairs:
        return
    order = sorted(pairs)
    names = [n for sha, card in order for n in (sha, f"{sha}:cards/{card}.md")]
    raw = repo.git.run("cat-file", "--batch", input="".join(f"{n}\n" for n in names).encode()).stdout
    pos = 0
    got: list[tuple[str, bytes] | None] = []
    for _ in names:
        end = raw.index(b"\n", pos)
        head = raw[pos:end].split(b" ")
        pos = end + 1
        if len(head) != 3:  # "<name> missing" (or ambiguous)
            got.append(None)
            continue
        size = int(head[2])
        got.append((head[0].decode() + " " + head[1].decode(), raw[pos : pos + size]))
        pos += size + 1
    for i, (sha, card) in enumerate(order):
        commit, blob = got[2 * i], got[2 * i + 1]
        if commit is not None and PARTIAL_NOTE in commit[1].split(b"\n\n", 1)[-1]:
            value = _PARTIAL
        elif blob is not None and blob[0].endswith(" blob"):
            value = blob[0].split(" ")[0]
            if value not in memo.blobs:
                memo.blobs[value] = digests(blob[1].decode("utf-8", "replace"))
        else:
            value = ""
        memo.at[f"{sha}:{card}"] = value
    memo.dirty = True


def _digests_of(repo: MemoryRepo, memo: Memo, blob: str) -> dict[str, str]:
    got = memo.blobs.get(blob)
    if got is None:
        raw = repo.store.read_blob(blob) or b""
        got = digests(raw.decode("utf-8", "replace"))
        memo.blobs[blob] = got
        memo.dirty = True
    return got


def contested(repo: MemoryRepo, memo: Memo, merge: str) -> list[str]:
    """The sections both joined lines of history wrote an entry for, as ``card/sid\\0sha``
    for every such entry (either side's)."""
    got = memo.contested.get(merge)
    if got is not None:
        return got
    head = repo.store.read(merge)
    parents = [
        ln[7:].decode() for ln in (head.data.split(b"\n\n", 1)[0].split(b"\n") if head else [])
        if ln.startswith(b"parent ")
    ]
    out: list[str] = []
    if len(parents) >= 2:
        raw = repo.git.run(
            *T.DEFAULT_BLOCKS, "log", "-z", "--left-right", "--format=%m%x1f%H%x1f%(trailers)",
            f"{parents[0]}...{parents[1]}",
        ).stdout.decode("utf-8", "replace")
        sides: dict[str, dict[str, list[str]]] = {}
        for record in raw.split("\0"):
            side, _, rest = record.lstrip("\n").partition("\x1f")
            sha, _, block = rest.partition("\x1f")
            if not sha or not block:
                continue
            trailers, reverts = T.gitmem_trailers(block)
            card, sid = trailers.get(T.CARD), trailers.get(T.SECTION)
            if reverts or T.REVERTS in trailers or T.LAYER in trailers or not (card and sid):
                continue
            sides.setdefault(f"{card}/{sid}", {}).setdefault(side, []).append(sha)
        for key, by_side in sorted(sides.items()):
            if len(by_side) == 2:
                out += [f"{key}\0{sha}" for shas in by_side.values() for sha in shas]
    memo.contested[merge] = out
    memo.dirty = True
    return out


def stale_keys(
    repo: MemoryRepo,
    branch: str,
    tip: str,
    entries: Iterable[tuple[str, str, str]],
    merges: Iterable[str] = (),
) -> set[str]:
    """The ``card/section`` keys of ``entries`` (card, section id, entry commit) that are
    stale at ``tip``."""
    memo = memo_for(repo, branch)
    todo = list(entries)
    if not todo:
        return set()
    merges = list(merges)
    question = hashlib.sha1(repr((tip, todo, merges)).encode()).hexdigest()
    if memo.last[0] == question:  # the same tip, entries and merges: the same answer
        return set(memo.last[1])
    now = _card_blobs(repo, tip)
    doubled: set[str] = set()
    for merge in merges:
        doubled.update(contested(repo, memo, merge))
    _prefetch(repo, memo, {(sha, card) for card, _, sha in todo if f"{sha}:{card}" not in memo.at})
    out: set[str] = set()
    for card, sid, sha in todo:
        key = f"{card}/{sid}"
        if f"{key}\0{sha}" in doubled:
            out.add(key)
            continue
        current = now.get(card)
        then = _blob_at(repo, memo, sha, card)
        if then == current:
            continue
        if then in ("", _PARTIAL) or current is None:
            out.add(key)
            continue
        was = _digests_of(repo, memo, then).get(sid)
        if was is None or was != _digests_of(repo, memo, current).get(sid):
            out.add(key)
    memo.last = (question, sorted(out))  # kept on disk with the next new facts
    if memo.dirty:
        _prune(memo, todo, now)
        _save(repo, branch, memo)  # a cache that cannot be written is simply not kept
    return out


def _prune(memo: Memo, todo: list[tuple[str, str, str]], now: dict[str, str]) -> None:
    """Keep what the current entries and cards need (the memo would grow with history)."""
    keep_at = {f"{sha}:{card}" for card, _, sha in todo}
    memo.at = {k: v for k, v in memo.at.items() if k in keep_at}
    keep_blobs = set(now.values()) | set(memo.at.values())
    memo.blobs = {k: v for k, v in memo.blobs.items() if k in keep_blobs}
