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
    lines = text.split("\n")
    code = code_lines(lines)
    found, at, line = [], 0, 0
    for m in _HEADING.finditer(text):  # the headings found by re, not line by line
        line += text.count("\n", at, m.start())
        at = m.start()
        if not code[line]:
            found.append((line, m.group(1).strip().rstrip("#").strip()))
    seen: dict[str, int] = {}
    out: list[Section] = []
    for n, (i, heading) in enumerate(found):
        base = base_id(heading)
        seen[base] = seen.get(base, 0) + 1
        sid = base if seen[base] == 1 else f"{base}-{seen[base]}"
        end = found[n + 1][0] if n + 1 < len(found) else len(lines)
        out.append(Section(sid, heading, i, end))
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
    lines = text.removeprefix("\ufeff").split("\n")
    return next((ln[2:].strip() for ln in lines if ln.startswith("# ")), "")


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
    return {s.id: d for s, d, _ in measured(text) if keep is None or s.id in keep}


def measured(text: str) -> list[tuple[Section, str, int]]:
    """Each section with its digest (``digests``) and its size in bytes, heading line
    included: the card parsed once."""
    lines, bare = text.split("\n"), _TRAILING.sub("", text).split("\n")  # same lines
    out = []
    for s in sections(text):
        body = "\n".join(bare[s.start : s.end]).rstrip("\n")
        digest = hashlib.sha1(body.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        size = len("\n".join(lines[s.start : s.end]).encode("utf-8", "surrogateescape"))
        out.append((s, digest, size))
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
