"""Dates in a query, matched against when things were said or written, not as words.

``in June``, ``on Tuesdays``, ``in 2023``, ``last week``, ``before March 2024``: each
becomes a condition on a document's date (a turn: when it was said; a section value:
when it was written). A document that meets them ranks higher; none is dropped, since
the words may still be about something else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

_MONTHS = "january february march april may june july august september october november december"
MONTHS = {m: i + 1 for i, m in enumerate(_MONTHS.split())}
MONTHS |= {m[:3]: i for m, i in MONTHS.items() if m != "may"} | {"sept": 9}
WEEKDAYS = {
    d: i
    for i, d in enumerate(
        ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    )
}
WEEKDAYS |= {d + "s": i for d, i in list(WEEKDAYS.items())}
_YEAR = re.compile(r"(19|20)\d\d")
_RANGE = {"before": -1, "until": -1, "till": -1, "after": 1, "since": 1}


@dataclass(frozen=True)
class When:
    """The date conditions of a query: each one given must hold."""

    months: frozenset[int] = frozenset()  # any year's
    weekdays: frozenset[int] = frozenset()
    after: str = ""  # ISO date: on or after it
    before: str = ""  # ISO date: strictly before it

    def holds(self, iso: str) -> bool:
        """Whether a document dated ``iso`` (ISO 8601) meets every condition."""
        day = iso[:10]
        if len(day) < 10:
            return False
        if (self.after and day < self.after) or (self.before and day >= self.before):
            return False
        if self.months and int(day[5:7]) not in self.months:
            return False
        if self.weekdays:
            try:
                return date.fromisoformat(day).weekday() in self.weekdays
            except ValueError:
                return False
        return True


def parse(raw: list[str], query: str, today: date | None = None) -> tuple[When | None, set[int]]:
    """The date conditions in the query's folded words ``raw`` (``query``: as typed, so
    "May" the month is told from "may" the verb), and the positions of the words they
    used (not search terms, and a "before" there does not ask for a past value)."""
    today = today or datetime.now(UTC).date()
    used: set[int] = set()
    months: set[int] = set()
    weekdays: set[int] = set()
    after, before = "", ""
    for i, w in enumerate(raw):
        if i in used:  # the year of "March 2024"
            continue
        prev = raw[i - 1] if i else ""
        got = _span(raw, i, query, today)
        if got is None:
            if w in WEEKDAYS:
                weekdays.add(WEEKDAYS[w])
                used.add(i)
            continue
        (lo, hi), width, month = got
        used.update(range(i, i + width))
        if prev == "last":
            used.add(i - 1)
        if prev in _RANGE:
            used.add(i - 1)
            if _RANGE[prev] < 0:
                before = min(before or lo, lo)
            else:
                after = max(after, hi if prev == "after" else lo)
        elif month:
            months.add(month)
        else:
            after, before = max(after, lo), min(before or hi, hi)
    if not used:
        return None, used
    return When(frozenset(months), frozenset(weekdays), after, before), used


def _span(
    raw: list[str], i: int, query: str, today: date
) -> tuple[tuple[str, str], int, int] | None:
    """The dates word ``i`` names: (first day, day after), how many words it took, and
    the month when it named a month of no year (its span: the last one up to today)."""
    w = raw[i]
    nxt = raw[i + 1] if i + 1 < len(raw) else ""
    if w in MONTHS and (w != "may" or re.search(r"\bMay\b", query)):
        m = MONTHS[w]
        if _YEAR.fullmatch(nxt):
            return (f"{nxt}-{m:02d}-01", _next_month(int(nxt), m)), 2, 0
        year = today.year if m <= today.month else today.year - 1
        return (f"{year}-{m:02d}-01", _next_month(year, m)), 1, m
    if _YEAR.fullmatch(w):
        return (f"{w}-01-01", f"{int(w) + 1}-01-01"), 1, 0
    days = {"week": 7, "month": 31, "year": 366}.get(w) if i and raw[i - 1] == "last" else None
    if w == "yesterday":
        days = 1
    if days:
        return ((today - timedelta(days=days)).isoformat(), today.isoformat()), 1, 0
    return None


def _next_month(year: int, month: int) -> str:
    return f"{year + month // 12}-{month % 12 + 1:02d}-01"
