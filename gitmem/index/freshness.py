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

from gitmem.errors import GitmemError
from gitmem.index import digest_file
from gitmem.memory import trailers as T
from gitmem.memory.cards import sections
from gitmem.memory.repo import MemoryRepo

VERSION = 3
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

    # card blob -> digests; as kept on disk, packed in one string ("sid\tdigest" lines),
    # unpacked when first used: a process reads the digests of a few cards of thousands
    blobs: dict[str, dict[str, str] | str] = field(default_factory=dict)
    at: dict[str, str] = field(default_factory=dict)  # "commit:card" -> card blob ("" none)
    contested: dict[str, list[str]] = field(default_factory=dict)  # merge -> ["card/sid\0sha"]
    # the last answer: a digest of its question (tip, entries, merges) and the stale keys
    last: tuple[str, list[str]] = ("", [])
    dirty: bool = False
    kept: int = -1  # facts in ``at`` when last pruned (or loaded)
    saved: int = 0  # facts in ``at`` and ``blobs`` when last read or written


def _path(repo: MemoryRepo, branch: str) -> str:
    return str(repo.gitmem_dir / f"index-fresh-{branch.replace('/', '%')}.marshal")


def _load(repo: MemoryRepo, branch: str) -> Memo:
    data = digest_file.read(_path(repo, branch))
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return Memo()
    try:
        return Memo(
            data["blobs"],
            data["at"],
            data["contested"],
            tuple(data["last"]),
            kept=len(data["at"]),
            saved=len(data["at"]) + len(data["blobs"]),
        )
    except (KeyError, TypeError):
        return Memo()


def _save(repo: MemoryRepo, branch: str, memo: Memo) -> None:
    for k, v in memo.blobs.items():  # packed in memory too: the next save packs only new ones
        if not isinstance(v, str):
            memo.blobs[k] = _pack(v)
    data = {
        "version": VERSION,
        "blobs": memo.blobs,
        "at": memo.at,
        "contested": memo.contested,
        "last": list(memo.last),
    }
    digest_file.write(_path(repo, branch), data)
    memo.dirty = False
    memo.saved = len(memo.at) + len(memo.blobs)


def _pack(digests: dict[str, str]) -> str:
    return "\n".join(f"{sid}\t{digest}" for sid, digest in digests.items())


def _unpack(packed: str) -> dict[str, str]:
    return dict(line.split("\t", 1) for line in packed.split("\n")) if packed else {}


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


def _prefetch(
    repo: MemoryRepo, memo: Memo, pairs: set[tuple[str, str]], now: dict[str, str]
) -> None:
    """Read every (commit, card) not known yet in three ``git cat-file``: the commits
    (accepted in part?), the card's blob at each, and the blobs whose sections are to be
    compared (not the ones still current), digested at once. A first refresh of
    a large client would otherwise read thousands of trees one at a time. The paths are
    asked newest commit first, as history goes: each commit's cards tree is then mostly a
    delta of the one git just read (in the order of the commit ids, git rebuilt every tree
    from far away: twice the time). git resolves ``REV:PATH`` itself here; it never follows
    a symlink in a tree, and a symlink's blob simply differs from the card's."""
    if not pairs:
        return
    if len(pairs) < _MANY:
        _prefetch_few(repo, memo, pairs)
        return
    commits = sorted({sha for sha, _ in pairs})
    heads = dict(zip(commits, _batch(repo, commits), strict=True))
    when: dict[str, int] = {}
    for sha, got in heads.items():
        when[sha] = _committed(got[1]) if got is not None else 0
    order = sorted(pairs, key=lambda pair: (-when[pair[0]], pair))
    found = _batch(repo, [f"{sha}:cards/{card}.md" for sha, card in order], check=True)
    read: dict[str, None] = {}  # the blobs whose sections are compared, newest first
    for (sha, card), blob in zip(order, found, strict=True):
        commit = heads[sha]
        if commit is not None and PARTIAL_NOTE in commit[1].split(b"\n\n", 1)[-1]:
            value = _PARTIAL
        elif blob is not None and blob[0].endswith(" blob"):
            value = blob[0].split(" ")[0]
            current = now.get(card)
            if current is not None and current != value:
                read[current] = read[value] = None
        else:
            value = ""
        memo.at[f"{sha}:{card}"] = value
    todo = [blob for blob in read if blob not in memo.blobs]  # as history goes, like trees
    for blob_sha, blob in zip(todo, _batch(repo, todo), strict=True):
        if blob is not None:
            memo.blobs[blob_sha] = digests(blob[1].decode("utf-8", "replace"))
    memo.dirty = True


# Fewer pairs than this (a refresh after some commits) are read by one git process, in
# any order: two more processes would cost more than the trees they spare.
_MANY = 256


# Fewer pairs than this are read through the object store's running ``git cat-file``:
# no git process started for the few commits of a refresh.
_FEW = 128


def _prefetch_few(repo: MemoryRepo, memo: Memo, pairs: set[tuple[str, str]]) -> None:
    order = sorted(pairs)
    names = [n for sha, card in order for n in (sha, f"{sha}:cards/{card}.md")]
    got = _read_few(repo, names) if len(pairs) < _FEW else None
    if got is None:
        got = _batch(repo, names)
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


def _read_few(repo: MemoryRepo, names: list[str]) -> list[tuple[str, bytes] | None] | None:
    """``_batch(repo, names)`` through the object store's running ``git cat-file`` (which
    resolves each name the same way), or None when it cannot read one: then git is asked."""
    out: list[tuple[str, bytes] | None] = []
    try:
        for name in names:
            obj = repo.store.resolved(name)
            out.append(None if obj is None else (f"{obj.sha} {obj.kind}", obj.data))
    except GitmemError:
        return None
    return out


def _batch(
    repo: MemoryRepo, names: list[str], check: bool = False
) -> list[tuple[str, bytes] | None]:
    """Each object of ``names`` as ("<sha> <type>", contents), None when missing, from one
    ``git cat-file --batch`` (``check``: ``--batch-check``, the contents empty)."""
    if not names:
        return []
    query = "".join(f"{n}\n" for n in names).encode()
    raw = repo.git.run("cat-file", "--batch-check" if check else "--batch", input=query).stdout
    pos = 0
    got: list[tuple[str, bytes] | None] = []
    for _ in names:
        end = raw.index(b"\n", pos)
        head = raw[pos:end].split(b" ")
        pos = end + 1
        if len(head) != 3:  # "<name> missing" (or ambiguous)
            got.append(None)
            continue
        size = 0 if check else int(head[2])
        got.append((head[0].decode() + " " + head[1].decode(), raw[pos : pos + size]))
        pos += 0 if check else size + 1
    return got


def _committed(commit: bytes) -> int:
    """A commit's committer time (0 if unreadable): only an order to read trees in."""
    for line in commit.split(b"\n\n", 1)[0].split(b"\n"):
        if line.startswith(b"committer "):
            try:
                return int(line.rsplit(b" ", 2)[-2])
            except (ValueError, IndexError):
                return 0
    return 0


def _digests_of(repo: MemoryRepo, memo: Memo, blob: str) -> dict[str, str]:
    got = memo.blobs.get(blob)
    if isinstance(got, str):
        got = memo.blobs[blob] = _unpack(got)
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
        ln[7:].decode()
        for ln in (head.data.split(b"\n\n", 1)[0].split(b"\n") if head else [])
        if ln.startswith(b"parent ")
    ]
    out: list[str] = []
    if len(parents) >= 2:
        raw = repo.git.run(
            *T.DEFAULT_BLOCKS,
            "log",
            "-z",
            "--left-right",
            "--format=%m%x1f%H%x1f%(trailers)",
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


def uncontested(repo: MemoryRepo, branch: str, merges: Iterable[str]) -> None:
    """Record that each of ``merges`` contests no section (``contested`` is ``[]``): what
    ``replay.advance`` found when it folded them in, having read both sides' trailers."""
    memo = memo_for(repo, branch)
    for merge in merges:
        if memo.contested.get(merge) != []:
            memo.contested[merge] = []
            memo.dirty = True


def stale_keys(
    repo: MemoryRepo,
    branch: str,
    tip: str,
    entries: Iterable[tuple[str, str, str]],
    merges: Iterable[str] = (),
    some: bool = False,
) -> set[str]:
    """The ``card/section`` keys of ``entries`` (card, section id, entry commit) that are
    stale at ``tip``. ``some``: the entries are those of some cards only (the ones a few
    commits touched), so what is kept about the other cards stays."""
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
    _prefetch(
        repo, memo, {(sha, card) for card, _, sha in todo if f"{sha}:{card}" not in memo.at}, now
    )
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
        pruned = _prune(memo, todo, now, some)
        # A refresh of a few cards adds a few facts, cheaper to find again than the whole
        # file is to write: it is written once they are many (or were pruned).
        if pruned or not some or len(memo.at) + len(memo.blobs) - memo.saved >= _SAVE_EVERY:
            _save(repo, branch, memo)  # a cache that cannot be written is simply not kept
    return out


def written_digests(
    repo: MemoryRepo, branch: str, entries: list[tuple[str, str, str]], merges: Iterable[str] = ()
) -> dict[tuple[str, str, str], str | None]:
    """For each (card, section id, entry commit) of ``entries``: the digest of the section's
    text in the entry's commit, or None when the entry is stale whatever the text at the tip
    says (doubled by a merge, accepted in part, no such card or section then). The entry is
    fresh at a tip exactly when the section's digest there is this one (``stale_keys``)."""
    memo = memo_for(repo, branch)
    doubled: set[str] = set()
    for merge in merges:
        doubled.update(contested(repo, memo, merge))
    _prefetch(
        repo, memo, {(sha, card) for card, _, sha in entries if f"{sha}:{card}" not in memo.at}, {}
    )
    out: dict[tuple[str, str, str], str | None] = {}
    for card, sid, sha in entries:
        if f"{card}/{sid}\0{sha}" in doubled:
            out[(card, sid, sha)] = None
            continue
        then = _blob_at(repo, memo, sha, card)
        out[(card, sid, sha)] = (
            None if then in ("", _PARTIAL) else _digests_of(repo, memo, then).get(sid)
        )
    return out


_SAVE_EVERY = 48  # new facts since the file was read or written: then it is written (finding
# a few commits' facts again costs about 0.2 ms a card, writing the file 5 ms at 100k commits)


def _prune(
    memo: Memo, todo: list[tuple[str, str, str]], now: dict[str, str], some: bool = False
) -> bool:
    """Keep what the current entries and cards need (the memo would grow with history);
    ``some``: ``todo`` covers some cards only, and the others' facts are all kept (and a
    refresh of a few cards prunes only once the facts grew by a quarter: keeping more is
    never wrong, and going through all of them costs more than the few cards). Whether
    it pruned."""
    if some and len(memo.at) <= memo.kept + memo.kept // 4 + 64:
        return False
    keep_at = {f"{sha}:{card}" for card, _, sha in todo}
    cards = {card for card, _, _ in todo}
    memo.at = {
        k: v
        for k, v in memo.at.items()
        if k in keep_at or (some and k.partition(":")[2] not in cards)
    }
    keep_blobs = set(now.values()) | set(memo.at.values())
    memo.blobs = {k: v for k, v in memo.blobs.items() if k in keep_blobs}
    memo.kept = len(memo.at)
    return True
