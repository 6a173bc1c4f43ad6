"""``gitmem usage --cards``: what reading each card (layer E) cost across sessions, which
sections are read most and which never, to guide consolidation.

Usage lines name each card read (``card_reads``: card, section or none for the whole card,
tokens). Lines written before gitmem recorded that carry only the E total: it is reported
as unattributed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from gitmem.index.build import Index
from gitmem.wording import count


@dataclass
class CardCost:
    card: str
    tokens: int = 0
    reads: int = 0
    whole_reads: int = 0
    sessions: set[str] = field(default_factory=set)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "sessions": len(self.sessions)}


@dataclass(frozen=True)
class CardsReport:
    """Tokens spent reading each card across sessions (``gitmem usage --cards``): per card,
    per section, the sections never read, and the tokens no card accounts for."""

    cards: list[CardCost]  # most tokens first
    sections: list[tuple[str, int]]  # "card § section", reads: most read first
    never_read: list[str]  # sections of the current cards no read reached
    unattributed_tokens: int  # E tokens on lines that do not name their cards
    sessions: int

    def to_json(self) -> dict[str, Any]:
        return {
            "cards": [c.to_json() for c in self.cards],
            "sections": [{"section": s, "reads": n} for s, n in self.sections],
            "never_read": self.never_read,
            "unattributed_tokens": self.unattributed_tokens,
            "sessions": self.sessions,
        }

    def render(self) -> str:
        if not self.cards:
            lines = ["No card reads recorded yet."]
            if self.unattributed_tokens:
                lines.append(
                    f"  ({self.unattributed_tokens:,} E tokens on older lines that do "
                    "not name their cards)"
                )
        else:
            lines = [f"Card reads (layer E) over {count(self.sessions, 'session')}:"]
            width = max([len("CARD"), *(len(c.card) for c in self.cards)])
            lines.append(
                f"  {'CARD':<{width}}  {'TOKENS':>8}  {'READS':>5}  {'WHOLE':>5}  SESSIONS"
            )
            for c in self.cards:
                lines.append(
                    f"  {c.card:<{width}}  {c.tokens:>8,}  {c.reads:>5}  "
                    f"{c.whole_reads:>5}  {len(c.sessions)}"
                )
            if self.unattributed_tokens:
                lines.append(
                    f"  ({self.unattributed_tokens:,} E tokens on older lines that do "
                    "not name their cards)"
                )
        if self.sections:
            lines.append("Sections read most:")
            lines += [f"  {s}: {count(n, 'read')}" for s, n in self.sections[:10]]
        if self.never_read:
            lines.append(f"Never read ({len(self.never_read)}): candidates to compact or drop")
            lines += [f"  {s}" for s in self.never_read]
        return "\n".join(lines) + "\n"


def card_usage(records: list[dict[str, Any]], index: Index) -> CardsReport:
    """The ``CardsReport`` of usage ``records`` (from ``load_usage``) against ``index``."""
    costs: dict[str, CardCost] = {}
    section_reads: dict[str, int] = {}
    unattributed = 0
    sessions: set[str] = set()
    for r in records:
        reads = r.get("card_reads")
        e = int((r.get("layers") or {}).get("E", 0) or 0)
        if not isinstance(reads, list) or not reads:
            unattributed += e
            continue
        sid = str(r.get("session"))
        sessions.add(sid)
        for read in reads:
            if not isinstance(read, dict):
                continue
            card = str(read.get("card"))
            cost = costs.setdefault(card, CardCost(card))
            cost.tokens += int(read.get("tokens") or 0)
            cost.reads += 1
            cost.sessions.add(sid)
            section = read.get("section")
            if section:
                key = f"{card} § {section}"
                section_reads[key] = section_reads.get(key, 0) + 1
            else:
                cost.whole_reads += 1
    never = [
        f"{c.project} § {s.id}"
        for c in index.cards
        if not (costs.get(c.project) and costs[c.project].whole_reads)
        for s in c.sections
        if f"{c.project} § {s.id}" not in section_reads
    ]
    ranked = sorted(costs.values(), key=lambda c: (-c.tokens, c.card))
    most = sorted(section_reads.items(), key=lambda kv: (-kv[1], kv[0]))
    return CardsReport(ranked, most, never, unattributed, len(sessions))
