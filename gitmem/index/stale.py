"""``gitmem stale``: what in memory may no longer be true, or is there twice.

- stale entries: the section changed after its summary was written (see freshness.py);
- unindexed sections: no entry says what they hold;
- untouched sections: their text has not changed for ``hygiene.untouched_days`` days;
- summaries naming numbers or dates that the section's text does not contain;
- near-duplicate sections across cards: word 3-shingles with a Jaccard similarity of
  at least ``DUPLICATE_JACCARD``.

Everything is read from main's tip and its history; nothing is written.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from itertools import combinations

from gitmem.index import build as index_mod
from gitmem.index.freshness import last_writes
from gitmem.memory.cards import card_path, section_texts
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.wording import count

DUPLICATE_JACCARD = 0.5
MIN_SHINGLES = 3
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Stale:
    card: str
    section: str
    summary: str
    commit: str


@dataclass(frozen=True)
class Untouched:
    card: str
    section: str
    last_change: str  # ISO date of the commit that last changed the section's text
    days: int


@dataclass(frozen=True)
class Numbers:
    card: str
    section: str
    summary: str
    missing: list[str]  # numbers or dates the summary names and the text lacks


@dataclass(frozen=True)
class Duplicate:
    first: str  # "card § section"
    second: str
    similarity: float


@dataclass(frozen=True)
class StaleReport:
    """What may no longer be true in memory (``gitmem stale``): stale entries, unindexed
    sections, sections untouched for ``untouched_days``, summaries naming numbers the
    section lacks, and near-duplicate sections."""

    untouched_days: int
    stale: list[Stale] = field(default_factory=list)
    unindexed: list[str] = field(default_factory=list)  # "card § section"
    untouched: list[Untouched] = field(default_factory=list)
    numbers: list[Numbers] = field(default_factory=list)
    duplicates: list[Duplicate] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    @property
    def empty(self) -> bool:
        return not (
            self.stale or self.unindexed or self.untouched or self.numbers or self.duplicates
        )

    def lines(self) -> list[str]:
        if self.empty:
            return [
                "Nothing stale: every entry is fresh, every section indexed, touched within "
                f"{count(self.untouched_days, 'day')}, no summary names a missing number, "
                "no near-duplicates."
            ]
        out: list[str] = []
        if self.stale:
            out.append(f"Stale entries ({len(self.stale)}): the section changed after its summary")
            out += [f"  {s.card} § {s.section}: {s.summary}  ({s.commit[:7]})" for s in self.stale]
        if self.unindexed:
            out.append(
                f"Unindexed sections ({len(self.unindexed)}): no summary says what they hold"
            )
            out += [f"  {u}" for u in self.unindexed]
        if self.untouched:
            out.append(
                f"Untouched for {count(self.untouched_days, 'day')} or more "
                f"({len(self.untouched)}):"
            )
            out += [
                f"  {u.card} § {u.section}: last changed {u.last_change[:10]} "
                f"({count(u.days, 'day')} ago)"
                for u in self.untouched
            ]
        if self.numbers:
            out.append(f"Summaries naming what the section does not say ({len(self.numbers)}):")
            out += [
                f"  {n.card} § {n.section}: {', '.join(n.missing)} not in the text "
                f"(summary: {n.summary})"
                for n in self.numbers
            ]
        if self.duplicates:
            out.append(f"Near-duplicate sections ({len(self.duplicates)}):")
            out += [f"  {d.first} ~ {d.second} ({d.similarity:.0%} alike)" for d in self.duplicates]
        out.append("`gitmem consolidate` asks the model to fix these, as a session you review.")
        return out


def missing_numbers(summary: str, text: str) -> list[str]:
    """Numbers and dates in ``summary`` that ``text`` does not contain (commas ignored)."""
    plain = text.replace(",", "")
    out: list[str] = []
    for found in _NUMBER.findall(summary):
        value = found.replace(",", "").rstrip(".:/-")
        if value and value not in plain and value not in out:
            out.append(value)
    return out


def shingles(text: str) -> set[str]:
    words = _WORD.findall(text.lower())
    return {" ".join(words[i : i + 3]) for i in range(len(words) - 2)}


def duplicates(bodies: dict[tuple[str, str], str]) -> list[Duplicate]:
    """Pairs of sections of different cards whose bodies are alike (candidates share a
    shingle; only those are compared)."""
    sets = {key: shingles(body) for key, body in bodies.items()}
    sets = {k: v for k, v in sets.items() if len(v) >= MIN_SHINGLES}
    holders: dict[str, list[tuple[str, str]]] = {}
    for key, sh in sets.items():
        for s in sh:
            holders.setdefault(s, []).append(key)
    pairs: set[tuple[tuple[str, str], tuple[str, str]]] = set()
    for keys in holders.values():
        if len(keys) > 50:  # a phrase everyone uses says nothing
            continue
        for a, b in combinations(sorted(keys), 2):
            if a[0] != b[0]:
                pairs.add((a, b))
    out = []
    for a, b in sorted(pairs):
        sim = len(sets[a] & sets[b]) / len(sets[a] | sets[b])
        if sim >= DUPLICATE_JACCARD:
            out.append(Duplicate(f"{a[0]} § {a[1]}", f"{b[0]} § {b[1]}", round(sim, 3)))
    return out


def stale_report(
    repo: MemoryRepo, *, days: int | None = None, now: float | None = None
) -> StaleReport:
    """The ``StaleReport`` of main's tip; untouched means ``days`` or more
    (default ``hygiene.untouched_days``)."""
    limit = days if days is not None else repo.config.untouched_days
    tip = repo.branch_tip(MAIN)
    idx = index_mod.refresh(repo, MAIN)
    rep = StaleReport(limit)
    bodies: dict[tuple[str, str], str] = {}
    for c in idx.cards:
        text = (repo.store.read_blob(f"{tip}:{card_path(c.project)}") or b"").decode(
            "utf-8", "replace"
        )
        texts = section_texts(text)  # once a card: a section at a time is quadratic
        for s in c.sections:
            body = texts.get(s.id, "")
            bodies[(c.project, s.id)] = body.split("\n", 1)[1] if "\n" in body else ""
            if s.stale and s.summary is not None:
                rep.stale.append(Stale(c.project, s.id, s.summary, s.commit or ""))
            if not s.indexed:
                rep.unindexed.append(f"{c.project} § {s.id}")
            if s.summary:
                missing = missing_numbers(s.summary, body)
                if missing:
                    rep.numbers.append(Numbers(c.project, s.id, s.summary, missing))
    when = time.time() if now is None else now
    changed = last_writes(repo, tip, [c.project for c in idx.cards])
    for c in idx.cards:
        for s in c.sections:
            got = changed.get((c.project, s.id))
            if got is None:
                continue
            t = got[1]
            age = int((when - t) // 86400)
            if age >= limit:
                iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
                rep.untouched.append(Untouched(c.project, s.id, iso, age))
    rep.duplicates.extend(duplicates(bodies))
    return rep
