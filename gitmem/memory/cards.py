"""Cards are Markdown: a ``# Title`` line, then ``## `` sections whose ids are slugs."""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from gitmem.memory.names import slugify

# The empty file that holds a folder under cards/ (git keeps no empty folder); never shown.
KEEP = ".gitkeep"
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^## (.*)$", re.MULTILINE)  # "^", "$": at "\n" only, as split("\n")
_TITLE = re.compile(r"^# (.*)$", re.MULTILINE)  # a line of its own, as split("\n")
_TRAILING = re.compile(r"[^\S\n]+$", re.MULTILINE)  # what str.rstrip() takes off each line


def code_lines(lines: list[str]) -> list[bool]:
    """For each line, whether it is inside fenced code (or is a fence), as CommonMark
    reads fences: a fence closes only on the same character, at least as many of them,
    and nothing after; a backtick fence's info string has no backtick."""
    joined = "\n".join(lines)  # (a fence is on one line: the joined text has it or not)
    if "```" not in joined and "~~~" not in joined:
        return [False] * len(lines)  # no line can open a fence (most cards)
    out: list[bool] = []
    opened: str | None = None
    for line in lines:
        m = _FENCE.match(line)
        if opened is None:
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                opened = m.group(1)
                out.append(True)
            else:
                out.append(False)
            continue
        out.append(True)
        if (
            m
            and m.group(1)[0] == opened[0]
            and len(m.group(1)) >= len(opened)
            and not m.group(2).strip()
        ):
            opened = None
    return out


@dataclass(frozen=True)
class Section:
    id: str
    heading: str
    start: int  # index of the heading line
    end: int  # index one past the section's last line


def card_path(project: str) -> str:
    return f"cards/{project}.md"


def card_of(path: str) -> str | None:
    """The card a path in the tree holds, ``cards/<name>.md`` (``card_path`` read back);
    None for any other path. The name is not checked here: see ``names.project``."""
    if path.startswith("cards/") and path.endswith(".md") and path.count("/") == 1:
        return path[len("cards/") : -len(".md")]
    return None


def sections(text: str) -> list[Section]:
    """The level-2 sections of a card, in document order; fenced code is skipped.

    Two headings with the same slug get ids ``x``, ``x-2``, ``x-3`` (GitHub's rule).
    """
    found, starts, at, line = headings(text), [], 0, 0
    for _, _, offset in found:
        line += text.count("\n", at, offset)
        at = offset
        starts.append(line)
    ends = [*starts[1:], text.count("\n") + 1][: len(starts)]
    return [
        Section(sid, heading, start, end)
        for (sid, heading, _), start, end in zip(found, starts, ends, strict=True)
    ]


def headings(text: str) -> list[tuple[str, str, int]]:
    """Each level-2 heading outside fenced code as (its section's id, its text, the offset
    in ``text`` of its line), in order: what ``sections`` and ``measured`` read."""
    code = code_lines(text.split("\n")) if "```" in text or "~~~" in text else None
    found, at, line = [], 0, 0
    for m in _HEADING.finditer(text):  # the headings found by re, not line by line
        if code is not None:  # (lines are counted only where a fence may hide a heading)
            line += text.count("\n", at, m.start())
            at = m.start()
            if code[line]:
                continue
        found.append((m.group(1).strip().rstrip("#").strip(), m.start()))
    seen: dict[str, int] = {}
    out = []
    for heading, offset in found:
        base = base_id(heading)
        seen[base] = seen.get(base, 0) + 1
        out.append((base if seen[base] == 1 else f"{base}-{seen[base]}", heading, offset))
    return out


@functools.lru_cache(maxsize=4096)
def base_id(heading: str) -> str:
    """A heading's id before numbering: two headings with the same one are duplicates.
    (Kept for the headings seen last: every version of a card repeats most of them.)"""
    return slugify(heading) or "section"


def heading_keywords(heading: str) -> list[str]:
    """Index keywords derived from a heading: its words, lowercased, at most six."""
    words: list[str] = []
    for word in re.findall(r"[a-z0-9]+", heading.lower()):
        if word not in words:
            words.append(word)
    return words[:6]


def section_ids(text: str) -> list[str]:
    return [s.id for s in sections(text)]


def first_title(text: str) -> str:
    """The text of the card's first "# " line ("" when it has none); a byte-order mark
    some editors write before it is not part of it."""
    m = _TITLE.search(text.removeprefix("\ufeff"))
    return m.group(1).strip() if m else ""


def title(text: str) -> str | None:
    for line in text.removeprefix("\ufeff").split("\n"):  # a BOM some editors write
        if line.startswith("# "):
            return line[2:].strip()
        if line.strip():
            return None
    return None


def section_text(text: str, section_id: str) -> str | None:
    return section_texts(text).get(section_id)


def section_texts(text: str) -> dict[str, str]:
    """Each section's text (its heading line first), by id: the card parsed once."""
    lines = text.split("\n")
    return {s.id: "\n".join(lines[s.start : s.end]).rstrip("\n") + "\n" for s in sections(text)}


def reshaping(old: str, new: str) -> tuple[list[str], bool, bool]:
    """What changed from ``old`` to ``new`` that no section's own text shows: the ids of
    the sections only ``old`` has, whether the sections both have come in another order,
    and whether the text before the first section (title, lead) changed."""
    a, b = sections(old), sections(new)
    ids_a, ids_b = {s.id for s in a}, {s.id for s in b}
    removed = [s.id for s in a if s.id not in ids_b]
    reordered = [s.id for s in a if s.id in ids_b] != [s.id for s in b if s.id in ids_a]
    return removed, reordered, _lead(old, a) != _lead(new, b)


def _lead(text: str, found: list[Section]) -> str:
    lines = text.split("\n")[: found[0].start if found else None]
    return "\n".join(ln.rstrip() for ln in lines).strip("\n")


def digests(text: str, wanted: Iterable[str] | None = None) -> dict[str, str]:
    """Each section's id (of ``wanted`` only, if given) -> a digest of its text. Trailing
    blanks of lines and blank lines at the section's end do not count: appending a section
    after it changes nothing."""
    keep = None if wanted is None else set(wanted)
    return {sid: d for sid, _, d, _ in measured(text) if keep is None or sid in keep}


def measured(text: str) -> list[tuple[str, str, str, int]]:
    """Each section as (id, heading, ``digests``'s digest, its size in bytes, heading
    line included): the card parsed once, each section's text a slice of it."""
    found, out, ascii_only = headings(text), [], text.isascii()
    ends = [offset - 1 for _, _, offset in found[1:]]  # (the newline before the next heading)
    for (sid, heading, offset), end in zip(found, [*ends, len(text)][: len(found)], strict=True):
        piece = text[offset:end]
        body = _TRAILING.sub("", piece).rstrip("\n").encode("utf-8", "surrogateescape")
        size = len(piece) if ascii_only else len(piece.encode("utf-8", "surrogateescape"))
        out.append((sid, heading, hashlib.sha1(body).hexdigest()[:16], size))
    return out


def unwritable(data: bytes, limit: int) -> str | None:
    """Why ``gitmem write`` would never write a card of these bytes (``limit``:
    limits.max_card_bytes), or None: what a sync must not bring in either."""
    if b"\0" in data:
        return "a NUL byte"
    if len(data) > limit:
        return f"{len(data):,} bytes, over limits.max_card_bytes ({limit:,})"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "text that is not valid UTF-8"
    return None
