"""How gitmem words things for people: "1 edit", "3 edits"; memory's text made visible."""

from __future__ import annotations

import re
import unicodedata

# What a terminal acts on or hides rather than shows: controls (tab and newline are
# text), format characters (bidi overrides, zero-widths), line and paragraph separators,
# and lone surrogates (undecodable bytes).
_HIDDEN = frozenset(("Cc", "Cf", "Zl", "Zp", "Cs"))
_TEXT = frozenset("\t\n")
_ASCII_HIDDEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def count(n: int, noun: str, plural: str | None = None) -> str:
    """ "1 edit", "3 edits" ("1 entry", "3 entries" with ``plural``)."""
    return f"{n} {noun}" if n == 1 else f"{n} {plural or noun + 's'}"


def visible(text: str) -> str:
    """``text`` as its characters say, for a terminal or a pager: every control, format,
    bidi or separator character shown as its escape (``\\x1b``, ``\\u202e``), never acted
    on and never dropped; tabs and newlines stay as they are."""
    if text.isascii() and not _ASCII_HIDDEN.search(text):
        return text
    return "".join(_escaped(c) if _hidden(c) else c for c in text)


def _hidden(c: str) -> bool:
    return c not in _TEXT and unicodedata.category(c) in _HIDDEN


def _escaped(c: str) -> str:
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"
