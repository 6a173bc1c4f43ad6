"""``gitmem search``: what the ``search_history`` tool finds, as card § section with a snippet.

The search engine's hit type grows (a score, whether a value is current or past):
this adapter reads any hit through its JSON form, takes the fields it knows and
passes every field through to ``--json``, so the output stays valid as it changes.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from gitmem.memory import names
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.search import ranked

# "card § section: text", how a hit names a section when it has no fields for it.
_WHERE = re.compile(r"^(?P<card>[a-z0-9][a-z0-9._-]*) § (?P<section>[a-z0-9][a-z0-9-]*): ")


@dataclass(frozen=True)
class SearchHit:
    """One search hit, as the agent's search_history tool returns it: card, section,
    snippet, kind (a memory commit or a past session's turn), date and ref."""

    card: str | None
    section: str | None
    snippet: str
    kind: str  # what the engine calls it: commit, transcript, card...
    date: str
    ref: str  # a commit or "<session>#<turn>"
    fields: dict[str, Any] = field(default_factory=dict)  # the hit as the engine gave it

    def where(self) -> str:
        if self.card:
            return f"{self.card} § {self.section}" if self.section else self.card
        return f"{self.kind} {self.ref}".strip()

    def to_json(self) -> dict[str, Any]:
        return {
            **self.fields,
            "card": self.card,
            "section": self.section,
            "snippet": self.snippet,
            "kind": self.kind,
            "date": self.date,
            "ref": self.ref,
        }


def _fields(hit: Any) -> dict[str, Any]:
    if hasattr(hit, "to_json"):
        got = hit.to_json()
        if isinstance(got, dict):
            return dict(got)
    if dataclasses.is_dataclass(hit) and not isinstance(hit, type):
        return dataclasses.asdict(hit)
    return dict(vars(hit))


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def from_hit(hit: Any) -> SearchHit:
    """Any hit the engine returns, read by its field names."""
    d = _fields(hit)
    card = d.get("card") or d.get("project")
    section = d.get("section") or d.get("section_id")
    snippet = _text(d.get("snippet") if d.get("snippet") is not None else d.get("text"))
    m = _WHERE.match(snippet)
    if m and (not card or card == m["card"]):
        card, section = m["card"], section or m["section"]
        snippet = snippet[m.end() :]
    ref = d.get("ref") or d.get("sha") or d.get("commit") or ""
    return SearchHit(
        _text(card) or None,
        _text(section) or None,
        " ".join(snippet.split()),
        _text(d.get("kind")),
        _text(d.get("date")),
        _text(ref),
        d,
    )


def search_history(
    repo: MemoryRepo, query: str, limit: int = 10, *, branch: str = MAIN
) -> list[SearchHit]:
    """The hits of ``ranked.search`` on ``branch``, in the engine's order."""
    names.branch(branch)
    repo.branch_tip(branch)  # an unknown branch is an error, not "no matches"
    return [
        from_hit(h)
        for h in ranked.search(repo, query, max(1, min(limit, ranked.MAX_LIMIT)), branch=branch)
    ]


def lines(hits: list[SearchHit]) -> list[str]:
    """Two lines a hit: where (card § section, or the turn), then the snippet.

    ``acme-website § budget  (2026-12-01, current, commit fff8ca9, score 2.83)``; a past
    value says until when it held; a turn is named once (``transcript <session>#<n>``).
    """
    out = []
    for h in hits:
        extra = [h.date[:10]]
        for key in ("current", "state"):  # the engine says whether a value still holds
            value = h.fields.get(key)
            if isinstance(value, bool):
                extra.append("current" if value else "past")
            elif isinstance(value, str) and value and value != h.kind:
                extra.append(value)
        until = h.fields.get("until")
        if isinstance(until, str) and until:
            extra.append(f"until {until[:10]}")
        if h.card and h.ref:
            extra.append(f"commit {h.ref[:7]}")
        score = h.fields.get("score")
        if isinstance(score, int | float) and not isinstance(score, bool):
            extra.append(f"score {score:.2f}")
        out.append(f"{h.where()}  ({', '.join(e for e in extra if e)})")
        out.append(f"    {h.snippet}")
    return out
