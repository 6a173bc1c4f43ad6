"""Claude Code's memory as ``gitmem import`` reads it.

Claude Code keeps two kinds of memory, both plain Markdown:

- instructions a person writes: ``CLAUDE.md`` (or ``.claude/CLAUDE.md``) at the project
  root, ``CLAUDE.local.md``, and ``.claude/rules/*.md``. A file may import others with
  ``@path/to/file`` (relative to the file, ``@~/...`` from the home folder; not inside
  code), recursively up to five hops.
- auto memory Claude writes itself: ``~/.claude/projects/<project>/memory/MEMORY.md``
  (``<project>`` is the project's absolute path with every character other than a
  letter or digit turned into ``-``) and topic files beside it that ``MEMORY.md`` links.

Every Markdown file imported or linked inside SOURCE (or inside the auto-memory folder)
becomes a note; one outside is reported and left out, never read.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from urllib.parse import unquote

from gitmem.bridges.import_sources import MARKDOWN, MAX_HOPS, Found, Note, Problem, Reader, stem

STARTS = ("CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md")
_FENCED = re.compile(r"(?ms)^\s{0,3}(```|~~~).*?^\s{0,3}\1[^\n]*$")
_SPAN = re.compile(r"`[^`\n]*`")
_IMPORT = re.compile(r"(?:(?<=\s)|^)@([^\s`]+)", re.M)
_LINK = re.compile(r"\[[^\]\n]*\]\(\s*(?:<([^>\n]+)>|([^)\s]+))(?:\s+\"[^\"]*\")?\s*\)")


def auto_memory_dir(project: Path, home: Path | None = None) -> Path:
    """Where Claude Code keeps its own notes about ``project``."""
    encoded = re.sub(r"[^A-Za-z0-9]", "-", str(project.resolve()))
    return (home or Path.home()) / ".claude" / "projects" / encoded / "memory"


def references(text: str) -> list[str]:
    """The @imports and Markdown links of ``text``, outside code, in order."""
    prose = _SPAN.sub("", _FENCED.sub("", text))
    out: list[str] = []
    for m in _IMPORT.finditer(prose):
        out.append(m.group(1).rstrip(".,;:!?)"))
    for m in _LINK.finditer(prose):
        target = m.group(1) or m.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue  # a URL, mailto:, or an anchor in the same file
        out.append(unquote(target.split("#", 1)[0]))
    return [t for t in out if t]


def _resolve(reader: Reader, base: str, target: str) -> str | None:
    """``target`` (as written in the file ``base``) relative to the reader's root, or
    None when it points outside it."""
    if target.startswith("~/"):
        full = Path.home() / target[2:]
    elif target.startswith("/"):
        full = Path(target)
    else:
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(base), target))
        return None if joined.startswith("../") or joined == ".." else joined
    try:
        rel = Path(posixpath.normpath(str(full))).relative_to(reader.root.absolute())
    except ValueError:
        return None
    return rel.as_posix()


def _follow(reader: Reader, starts: list[str], found: Found, seen: set[str]) -> None:
    todo = [(rel, 0) for rel in starts]
    while todo:
        rel, hops = todo.pop(0)
        key = f"{reader.label}{rel}"
        if key in seen:
            continue
        seen.add(key)
        text = reader.read(rel)
        if text is None:
            continue
        found.notes.append(Note(reader.where(rel), stem(rel), text, "claude-code"))
        if hops >= MAX_HOPS:
            continue
        for target in references(text):
            inside = _resolve(reader, rel, target)
            if inside is None:
                found.skipped.append(
                    Problem(reader.where(rel), f"{target} is outside the source; not imported")
                )
            elif not inside.lower().endswith(MARKDOWN):
                continue  # @package.json, an image: not a note
            elif not (reader.root / inside).exists() and not (reader.root / inside).is_symlink():
                found.skipped.append(Problem(reader.where(rel), f"{target} does not exist"))
            else:
                todo.append((inside, hops + 1))


def find_claude(root: Path, only: str | None, limit: int, found: Found) -> None:
    seen: set[str] = set()
    reader = Reader(root, "", limit, found)
    if only is not None:
        starts = [only]
    elif (root / "MEMORY.md").is_file():  # an auto-memory folder itself
        starts = ["MEMORY.md", *(r for r in reader.walk() if r != "MEMORY.md")]
    else:
        starts = [s for s in STARTS if (root / s).exists() or (root / s).is_symlink()]
        starts += list(reader.walk(".claude/rules")) if (root / ".claude/rules").is_dir() else []
    _follow(reader, starts, found, seen)
    auto = auto_memory_dir(root)
    if only is None and not (root / "MEMORY.md").is_file() and auto.is_dir():
        label = f"~/.claude/projects/{auto.parent.name}/memory/"
        mem = Reader(auto, label, limit, found)
        topics = [r for r in mem.walk() if r != "MEMORY.md"]
        _follow(
            mem, ["MEMORY.md", *topics] if (auto / "MEMORY.md").exists() else topics, found, seen
        )
