"""Layer I, resolved: the replayed trailers reconciled with the cards' headings at the
replay's commit, each entry marked fresh or stale (freshness.py). What this reads from
immutable objects (a blob's sections, an entry's written digest, a merge's contested
sections) is kept in ``Facts``, cached with the replay, so a refresh reads only new ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gitmem.errors import CorruptObject
from gitmem.index import cache_file, freshness
from gitmem.index.model import CardEntry, Index, SectionEntry, split_keywords
from gitmem.index.replay import Replay
from gitmem.memory.cards import card_path, first_title, measured
from gitmem.memory.names import is_slug
from gitmem.memory.repo import MemoryRepo


@dataclass
class Facts:
    """What resolving reads from immutable objects, kept with the replay so a refresh
    reads only new ones."""

    # card blob -> [[title, ""], [section id, heading, digest of its text], ...]
    blobs: dict[str, list[list[str]]] = field(default_factory=dict)
    # "card/sid\0sha" -> the section's digest in the entry's commit (None: stale whatever)
    written: dict[str, str | None] = field(default_factory=dict)
    contested: dict[str, list[str]] = field(default_factory=dict)  # merge -> its "key\0sha"s
    # card blob -> [its size in bytes, each section's, in order]: `gitmem cards` reads no blob
    sizes: dict[str, list[int]] = field(default_factory=dict)
    # card blob -> its ``blobs`` row as the cache file kept it (a piece), decoded when asked:
    # a fold of 10 commits decodes the cards they changed, not all of them
    kept: dict[str, bytes] = field(default_factory=dict)

    def rows(self, blob: str) -> list[list[str]] | None:
        """``blobs[blob]``, from the piece kept for it when not decoded yet (None: unknown)."""
        got = self.blobs.get(blob)
        if got is None and blob in self.kept:
            got = cache_file.unpiece(self.kept.pop(blob))
            if isinstance(got, list):
                self.blobs[blob] = got
        return self.blobs.get(blob)

    def piece(self, blob: str) -> bytes:
        """``blob``'s row as the cache file keeps it (the piece read, if it was not decoded)."""
        kept = self.kept.get(blob)
        return kept if kept is not None else cache_file.piece(self.blobs[blob])


def _card_facts(facts: Facts, blob: str, data: bytes) -> None:
    # No "# Title": the card's name stands in (``entries``) -- facts are kept by blob,
    # and two cards may hold the same bytes.
    text = data.decode("utf-8", "replace")
    got = measured(text)
    facts.blobs[blob] = [[first_title(text), ""], *([sid, head, d] for sid, head, d, _ in got)]
    facts.sizes[blob] = [len(data), *(n for _, _, _, n in got)]


Layout = list[tuple[str, str]]  # (card, blob), by card; its facts are ``Facts.rows(blob)``


def layout(repo: MemoryRepo, commit: str, facts: Facts) -> Layout:
    """The cards of ``commit``'s tree, sorted, each with its blob, the blobs not known yet
    read in one pass of cat-file and measured (``Facts.rows``)."""
    cards = []
    for entry in repo.store.read_tree(f"{commit}:cards"):
        name = entry.name.decode("utf-8", "replace")
        if not entry.is_tree and name.endswith(".md") and is_slug(name[:-3]):
            cards.append((name[:-3], entry.sha))
    new = sorted({blob for _, blob in cards if facts.rows(blob) is None})
    for blob, got in zip(new, repo.store.resolved_all(new), strict=True):
        if got is None:  # a tree names it and git cannot read it
            raise CorruptObject(blob, next(f"cards/{c}.md" for c, b in cards if b == blob))
        _card_facts(facts, blob, got.data if got.kind == "blob" else b"")
    return sorted(cards)


def _learn_written(
    repo: MemoryRepo, replay: Replay, facts: Facts, todo: set[tuple[str, str, str]]
) -> None:
    """The written digests of entries (sha, card, sid) not known yet: the blob each entry
    commit wrote is the replay's; a card of the tip's is digested already."""
    groups: dict[tuple[str, str], list[str]] = {}
    for sha, card, sid in todo:
        groups.setdefault((sha, card), []).append(sid)
    wanted = [
        (sha, card, replay.blobs.get(sha) or f"{sha}:{card_path(card)}", sids)
        for (sha, card), sids in sorted(groups.items())
    ]
    held = {w[2]: facts.rows(w[2]) for w in wanted}
    known = {b: {row[0]: row[2] for row in rows[1:]} for b, rows in held.items() if rows}
    for (sha, card, _, _), got in freshness.written(repo, wanted, known):
        for sid, digest in got.items():
            facts.written[f"{card}/{sid}\0{sha}"] = digest


def resolve(repo: MemoryRepo, replay: Replay, facts: Facts | None = None) -> Index:
    """Reconcile the replayed trailers with the card headings at ``replay.commit``."""
    if replay.commit is None:
        return Index(())
    facts = facts if facts is not None else Facts()
    return Index(tuple(entries(repo, replay, facts, layout(repo, replay.commit, facts))))


def _unknown(
    replay: Replay, facts: Facts, current: dict[str, list[str] | None]
) -> set[tuple[str, str, str]]:
    """The current entries (sha, card, sid) whose written digest is not known yet; the
    ones whose commit's ``Gitmem-Digest`` gave it are learnt here, reading nothing."""
    todo = set()
    for key, cur in current.items():
        if cur is None or not cur[2] or f"{key}\0{cur[0]}" in facts.written:
            continue
        digest = replay.digests.get(cur[0])
        if digest is not None:
            facts.written[f"{key}\0{cur[0]}"] = digest
        else:
            todo.add((cur[0], key.partition("/")[0], key.partition("/")[2]))
    return todo


def _known_rows(facts: Facts, blob: str) -> list[list[str]]:
    rows = facts.rows(blob)
    assert rows is not None, blob  # (``layout`` learnt every blob it names)
    return rows


def entries(repo: MemoryRepo, replay: Replay, facts: Facts, cards: Layout) -> list[CardEntry]:
    """The index entries of ``cards`` (some or all of ``replay.commit``'s)."""
    doubled: set[str] = set()
    for merge in replay.merges:
        if merge not in facts.contested:
            facts.contested[merge] = freshness.contested(repo, merge)
        doubled.update(facts.contested[merge])
    infos = [(project, _known_rows(facts, blob)) for project, blob in cards]
    current = {
        f"{p}/{row[0]}": replay.current(f"{p}/{row[0]}") for p, info in infos for row in info[1:]
    }
    _learn_written(repo, replay, facts, _unknown(replay, facts, current))
    out = []
    for project, info in infos:
        secs = []
        for sid, heading, digest in info[1:]:
            cur = current[f"{project}/{sid}"]
            if cur is None:
                secs.append(SectionEntry(sid, heading, (), None, None))
                continue
            # An entry without a summary (the memory tool's) leaves it unindexed.
            summary = cur[2] or None
            fact = f"{project}/{sid}\0{cur[0]}"
            then = facts.written.get(fact)
            stale = summary is not None and (fact in doubled or then is None or then != digest)
            secs.append(SectionEntry(sid, heading, split_keywords(cur[1]), summary, cur[0], stale))
        out.append(CardEntry(project, info[0][0] or project, tuple(secs)))
    return out
