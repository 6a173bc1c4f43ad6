"""How gitmem words counts for people: "1 edit", "3 edits"."""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    """ "1 edit", "3 edits" ("1 entry", "3 entries" with ``plural``)."""
    return f"{n} {noun}" if n == 1 else f"{n} {plural or noun + 's'}"
