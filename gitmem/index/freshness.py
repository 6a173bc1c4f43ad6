"""Fresh or stale: an index entry is stale when its section's text changed after the entry
was written.

The summary of a section was written for the text the section had in the commit that
carries the entry: its ``Gitmem-Digest`` trailer, or for an entry without one the card
as that commit left it. When the section's text at the tip differs from that (a person's
commit, a memory-tool edit that rewrote other sections, a merge, a hand resolution),
the entry is stale. Two more cases make an entry stale whatever the text says:

- the commit was accepted in part in review (``decide._partial_message``): its summary
  describes the whole edit, of which only some hunks landed;
- a merge joined two lines of history that both wrote an entry for the section: one
  side's summary would otherwise win silently. A new entry after the merge is fresh.

These are facts about immutable objects (a blob's sections, a commit's card, a merge's
two sides), so the index's cache keeps them (``build.Facts``) and a reindex finds them again.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gitmem.memory import trailers as T
from gitmem.memory.cards import card_of, card_path, digests
from gitmem.memory.repo import MemoryRepo
from gitmem.ops.history import Commit, read_log

__all__ = ["PARTIAL_NOTE", "contested", "digests", "written"]

PARTIAL_NOTE = b"\n\nAccepted in part in review: "
_CHUNK = 1024  # entries whose commits and blobs are read at once
MAX_COMMITS_PER_CARD = 500  # how far back a card's history is walked for a section's writer


# (entry commit, card, the blob its log line named or ``REV:PATH``, the section ids)
Wanted = tuple[str, str, str, list[str]]


def written(
    repo: MemoryRepo, wanted: list[Wanted], known: Mapping[str, Mapping[str, str]]
) -> Iterator[tuple[Wanted, dict[str, str | None]]]:
    """Each of ``wanted`` with the digest of each of its sections in the card's blob at
    the entry's commit, None when the entry is stale whatever the tip says (accepted in
    part, no such card or section then). ``known``: blob -> its digests, when held (the
    tip's cards: no read). The commits and the other blobs are read in one pass of
    ``cat-file`` (a group at a time), never one round trip per entry."""
    for at in range(0, len(wanted), _CHUNK):  # (a chunk's blobs held at once: 300 MB)
        chunk = wanted[at : at + _CHUNK]
        names = [w[0] for w in chunk] + [w[2] for w in chunk if w[2] not in known]
        objects = iter(repo.store.resolved_all(names))
        commits = [next(objects) for _ in chunk]
        for want, commit in zip(chunk, commits, strict=True):
            blob = None if want[2] in known else next(objects)
            partial = commit is not None and PARTIAL_NOTE in commit.data.split(b"\n\n", 1)[-1]
            if partial or (want[2] not in known and (blob is None or blob.kind != "blob")):
                yield want, dict.fromkeys(want[3])
                continue
            then = known.get(want[2]) or digests(
                blob.data.decode("utf-8", "replace") if blob else "", want[3]
            )
            yield want, {sid: then.get(sid) for sid in want[3]}


def _described(commits: list[Commit]) -> dict[str, list[str]]:
    """``card/sid`` -> the commits of ``commits`` that wrote an entry for it."""
    out: dict[str, list[str]] = {}
    for c in commits:
        card, sid = c.get(T.CARD), c.get(T.SECTION)
        if c.reverts or T.REVERTS in c.trailers or T.LAYER in c.trailers or not (card and sid):
            continue
        out.setdefault(f"{card}/{sid}", []).append(c.sha)
    return out


def contested(repo: MemoryRepo, merge: str) -> list[str]:
    """The entries of sections both lines of history joined by ``merge`` described, as
    ``card/sid\\0sha`` (either side's)."""
    ours = _described(read_log(repo.git, f"{merge}^2..{merge}^1"))
    theirs = _described(read_log(repo.git, f"{merge}^1..{merge}^2"))
    return [
        f"{key}\0{sha}"
        for key in sorted(ours.keys() & theirs.keys())
        for sha in (*ours[key], *theirs[key])
    ]


def last_writes(
    repo: MemoryRepo, tip: str, cards: list[str]
) -> dict[tuple[str, str], tuple[str, int]]:
    """(card, section) -> (the commit, its commit time) from which the section's text is
    what it is at ``tip``: one git log of the cards, their blobs read back until each
    section's text differs (at most ``MAX_COMMITS_PER_CARD`` per card)."""
    if not cards:
        return {}
    paths = sorted({card_path(c) for c in cards})
    raw = repo.git.out("log", "--format=%x00%H %ct", "--name-only", tip, "--", *paths)
    history: dict[str, list[tuple[str, int]]] = {}
    for record in raw.split("\0"):
        head, _, names = record.strip("\n").partition("\n")
        if not head:
            continue
        sha, _, date = head.partition(" ")
        for name in names.split("\n"):
            card = card_of(name)
            if card is not None:
                history.setdefault(card, []).append((sha, int(date)))
    out: dict[tuple[str, str], tuple[str, int]] = {}
    for card in cards:
        now = digest_of(repo, f"{tip}:{card_path(card)}")
        todo = set(now)
        for rev, stamp in history.get(card, [])[:MAX_COMMITS_PER_CARD]:
            if not todo:
                break
            then = digest_of(repo, f"{rev}:{card_path(card)}")
            for sid in list(todo):
                if then.get(sid) == now[sid]:
                    out[(card, sid)] = (rev, stamp)  # still the same text this far back
                else:
                    todo.discard(sid)
    return out


def digest_of(repo: MemoryRepo, rev_path: str) -> dict[str, str]:
    """``digests`` of the card at ``REV:PATH`` ({} when there is none)."""
    raw = repo.store.read_blob(rev_path)
    return digests(raw.decode("utf-8", "replace")) if raw is not None else {}
