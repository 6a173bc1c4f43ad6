"""``gitmem export DIR``: the cards of ``main`` written out as plain files.

Layouts: ``plain`` writes ``DIR/<card>.md``; ``memory-tool`` writes the whole
``cards/`` tree as ``DIR/memories/...``, the tree ``BetaLocalFilesystemMemoryTool
(base_path=DIR)`` serves as ``/memories``: the cards and every other file the memory
tool wrote there (``/memories/notes/todo.md``). The text is the file's, byte for byte,
so ``gitmem import`` of the export gives the same cards. What a layout cannot hold (a
file that is not a card in ``plain``; a symlink or a submodule in either) is left out
and named in the result. An existing file is never overwritten without
``force``; every target is checked before the first write, and no symlink on the way
is followed (``safe_files``).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gitmem.errors import Conflict, InvalidInput
from gitmem.git import safe_files
from gitmem.git.formats import TreeEntry
from gitmem.memory.cards import KEEP
from gitmem.memory.names import is_slug
from gitmem.memory.repo import MAIN, MemoryRepo

LAYOUTS = ("plain", "memory-tool")
_BLOB_MODES = (b"100644", b"100755")


@dataclass
class ExportResult:
    """An export: the folder, the layout, the files written, those overwritten, and the
    paths under ``cards/`` the layout left out (path -> why)."""

    dir: str
    layout: str
    files: list[str] = field(default_factory=list)
    overwritten: list[str] = field(default_factory=list)
    left_out: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def describe(self) -> str:
        n = len(self.files)
        noun = "card" if self.layout == "plain" else "file"  # memory-tool: all of cards/
        out = f"Exported {n} {noun}{'s' if n != 1 else ''} to {self.dir} ({self.layout} layout)"
        if self.overwritten:
            out += f"; overwrote {len(self.overwritten)} (--force)"
        for path, why in self.left_out.items():
            out += f"\nleft out {path}: {why}"
        return out


def cards_of(repo: MemoryRepo, branch: str = MAIN) -> dict[str, bytes]:
    """Every card of ``branch``'s tip: name -> bytes (symlinks and folders are not cards)."""
    files, _ = _cards_tree(repo, branch)
    return {p[:-3]: data for p, data in files.items() if _is_card(p)}


def _is_card(path: str) -> bool:
    return "/" not in path and path.endswith(".md") and is_slug(path[:-3])


def _cards_tree(repo: MemoryRepo, branch: str) -> tuple[dict[str, bytes], dict[str, str]]:
    """Every file under ``cards/`` at ``branch``'s tip (path below cards/ -> bytes), and
    what is not a file there (path -> why it cannot be exported)."""
    files: dict[str, bytes] = {}
    others: dict[str, str] = {}

    def walk(entries: list[TreeEntry], prefix: str) -> None:
        for entry in entries:
            path = prefix + entry.name.decode("utf-8", "replace")
            if entry.is_tree:
                walk(repo.store.read_tree(entry.sha), path + "/")
            elif entry.mode in _BLOB_MODES:
                files[path] = repo.store.read_blob(entry.sha) or b""
            else:
                others[path] = "a symlink or submodule, not a file"

    walk(repo.store.read_tree(f"{repo.branch_tip(branch)}:cards"), "")
    return {p: d for p, d in files.items() if p.rsplit("/", 1)[-1] != KEEP}, others


def export_cards(
    repo: MemoryRepo,
    dest: str | os.PathLike[str],
    layout: str = "plain",
    *,
    force: bool = False,
    branch: str = MAIN,
) -> ExportResult:
    """Write every card of ``branch`` as a Markdown file under ``dest`` (``layout`` plain:
    ``dest/<card>.md``; memory-tool: ``dest/memories/<card>.md``); refuses to overwrite
    a file unless ``force``."""
    if layout not in LAYOUTS:
        raise InvalidInput(f"unknown layout {layout!r}: use {' or '.join(LAYOUTS)}")
    dest = Path(dest).expanduser().absolute()
    if dest.is_symlink():
        raise InvalidInput(f"{dest} is a symlink; gitmem export never follows one")
    if dest.exists() and not dest.is_dir():
        raise InvalidInput(f"{dest} exists and is not a folder")
    files, left_out = _cards_tree(repo, branch)
    if layout == "plain":
        left_out |= {
            p: "not a card; --layout memory-tool exports it" for p in files if not _is_card(p)
        }
        targets = {p: data for p, data in sorted(files.items()) if _is_card(p)}
    else:
        targets = {f"memories/{p}": data for p, data in sorted(files.items())}
    res = ExportResult(str(dest), layout, left_out=dict(sorted(left_out.items())))
    if targets:
        dest.mkdir(parents=True, exist_ok=True)
    existing = [p for p in targets if safe_files.stat(dest, p) is not None]
    if existing and not force:
        n = len(existing)
        raise Conflict(
            f"{dest / existing[0]} exists"
            + (f" (and {n - 1} more)" if n > 1 else "")
            + "; nothing was written: pass --force to overwrite, or export to a new folder"
        )
    for rel, data in targets.items():
        safe_files.write(dest, rel, data)
        res.files.append(rel)
    res.overwritten = existing
    return res
