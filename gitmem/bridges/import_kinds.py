"""Which kind of source ``gitmem import`` reads, and its notes.

Kinds (detected in this order, or forced with ``--from KIND``):

- ``memory-tool``: an Anthropic memory-tool directory as ``BetaLocalFilesystemMemoryTool``
  writes it: ``SOURCE/memories/...`` (SOURCE is its ``base_path``), or SOURCE is the
  ``memories`` folder itself. Every text file in it, at any depth.
- ``claude-code``: Claude Code's memory. A project folder: ``CLAUDE.md``,
  ``.claude/CLAUDE.md``, ``CLAUDE.local.md``, ``.claude/rules/*.md``, the files they
  import with ``@path`` or link to (up to 5 hops, inside SOURCE), and the project's auto
  memory ``~/.claude/projects/<project>/memory/`` when it exists. Or an auto-memory
  folder itself: ``MEMORY.md``, its topic files and the files it links.
- ``basic-memory``: a basic-memory project: Markdown with YAML frontmatter (title,
  type, tags, permalink), observations ``- [category] text`` and relations
  ``- relation [[Target]]``. The card is named after the note's title.
- ``markdown``: any folder of Markdown notes (``.md``, ``.markdown``), at any depth.
"""

from __future__ import annotations

import re
from pathlib import Path

from gitmem.bridges.import_claude import find_claude
from gitmem.bridges.import_sources import MARKDOWN, Found, Note, Reader, stem
from gitmem.errors import InvalidInput

KINDS = ("markdown", "claude-code", "memory-tool", "basic-memory")
# gitmem's own files: skipped when SOURCE is a memory repo (``gitmem import .`` after init)
_GITMEM_OWN = {"cards", "sessions", "logs", "persona.md", "synthesis.md", "gitmem.toml"}


def detect(root: Path) -> str:
    if (root / "memories").is_dir() or root.name == "memories":
        return "memory-tool"
    claude = ("CLAUDE.md", "CLAUDE.local.md", "MEMORY.md", ".claude/CLAUDE.md")
    if any((root / c).is_file() for c in claude):
        return "claude-code"
    for path in sorted(root.rglob("*.md"))[:200]:
        if path.is_symlink() or not path.is_file():
            continue
        try:
            head = path.read_text("utf-8", errors="replace")[:4000]
        except OSError:
            continue
        if head.startswith("---") and (_OBSERVATION.search(head) or "permalink:" in head):
            return "basic-memory"
    return "markdown"


_OBSERVATION = re.compile(r"(?m)^- \[[^\]\n]+\] \S")


def find(source: Path, kind: str | None, limit: int, repo_root: Path | None = None) -> Found:
    """Every note of ``source`` (a folder, or one Markdown file)."""
    source = source.expanduser().absolute()
    if kind is not None and kind not in KINDS:
        raise InvalidInput(f"unknown source kind {kind!r}: use one of {', '.join(KINDS)}")
    if source.is_symlink():
        raise InvalidInput(f"{source} is a symlink; gitmem import never follows one")
    if source.is_file():
        root, only = source.parent, source.name
    elif source.is_dir():
        root, only = source, None
    else:
        raise InvalidInput(f"no such file or folder: {source}")
    if only is None:
        kind = kind or detect(root)
    else:
        kind = kind or ("claude-code" if only in ("CLAUDE.md", "MEMORY.md") else "markdown")
    found = Found(kind)
    skip = (
        frozenset(_GITMEM_OWN)
        if repo_root and repo_root.resolve() == root.resolve()
        else frozenset()
    )
    if kind == "claude-code":
        find_claude(root, only, limit, found)
        return found
    base = root
    if kind == "memory-tool" and only is None and root.name != "memories":
        base = root / "memories"
    reader = Reader(base, "" if base == root else "memories/", limit, found)
    paths = (
        [only]
        if only
        else list(reader.walk(suffixes=None if kind == "memory-tool" else MARKDOWN, skip_top=skip))
    )
    for rel in paths:
        text = reader.read(rel)
        if text is not None:
            found.notes.append(Note(reader.where(rel), stem(rel), text, kind))
    return found
