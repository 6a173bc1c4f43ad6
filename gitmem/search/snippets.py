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
    repo: MemoryRepo, query: str, limit: int = 10, *, branch: str = MAIN, as_of: str | None = None
) -> list[SearchHit]:
    """The hits of ``ranked.search`` on ``branch``, in the engine's order (``as_of``, a
    YYYY-MM-DD date: what memory held that day)."""
    names.branch(branch)
    repo.branch_tip(branch)  # an unknown branch is an error, not "no matches"
    limit = max(1, min(limit, ranked.MAX_LIMIT))
    return [from_hit(h) for h in ranked.search(repo, query, limit, branch=branch, as_of=as_of)]


def lines(hits: list[SearchHit]) -> list[str]:
    """Each hit as ``gitmem search`` prints it: where, then (date, state, what opens it,
    score), then the snippet."""
    out = []
    for h in hits:
        f = h.fields
        state = f.get("state")
        if isinstance(f.get("current"), bool):  # an engine may say it as a flag
            state = "current" if f["current"] else "past"
        until = str(f.get("until") or "")[:10]
        when = f"{h.date[:10]} to {until}" if until else h.date[:10]
        if h.kind == "transcript":
            where = f"{f.get('session') or h.ref} turn {f.get('turn')} {f.get('role')}"
            extra = [when, f"ref {h.ref}"]
        else:
            commit = str(f.get("commit") or "")[:7]
            opens = f"ref {h.ref}" if state == "past" and h.ref else ""
            extra = [when, str(state or ""), opens, f"commit {commit}" if commit else ""]
            where = h.where()
        score = h.fields.get("score")
        if isinstance(score, int | float) and not isinstance(score, bool):
            extra.append(f"score {score:.2f}")
        out.append(f"{where}  ({', '.join(e for e in extra if e)})")
        out.append(f"    {h.snippet}")
    return out
