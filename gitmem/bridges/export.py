"""``gitmem export DIR``: the cards of ``main`` written out as plain files.

Layouts: ``plain`` writes ``DIR/<card>.md``; ``memory-tool`` writes
``DIR/memories/<card>.md``, the tree ``BetaLocalFilesystemMemoryTool(base_path=DIR)``
serves as ``/memories``. The text is the card's, byte for byte, so ``gitmem import``
of the export gives the same cards. An existing file is never overwritten without
``force``; every target is checked before the first write, and no symlink on the way
is followed (``safe_files``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from gitmem.errors import Conflict, InvalidInput
from gitmem.git import safe_files
from gitmem.memory.names import is_slug
from gitmem.memory.repo import MAIN, MemoryRepo

LAYOUTS = ("plain", "memory-tool")
_BLOB_MODES = (b"100644", b"100755")


@dataclass
class ExportResult:
    """An export: the folder, the layout, the files written and those overwritten."""

    dir: str
    layout: str
    files: list[str] = field(default_factory=list)
    overwritten: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def describe(self) -> str:
        n = len(self.files)
        out = f"Exported {n} card{'s' if n != 1 else ''} to {self.dir} ({self.layout} layout)"
        if self.overwritten:
            out += f"; overwrote {len(self.overwritten)} (--force)"
        return out


def cards_of(repo: MemoryRepo, branch: str = MAIN) -> dict[str, bytes]:
    """Every card of ``branch``'s tip: name -> bytes (symlinks and folders are not cards)."""
    tip = repo.branch_tip(branch)
    out: dict[str, bytes] = {}
    for entry in repo.store.read_tree(f"{tip}:cards"):
        name = entry.name.decode("utf-8", "replace")
        if entry.mode in _BLOB_MODES and name.endswith(".md") and is_slug(name[:-3]):
            out[name[:-3]] = repo.store.read_blob(entry.sha) or b""
    return out


def export_cards(
    repo: MemoryRepo,
    dest: Path,
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
    dest = dest.expanduser().absolute()
    if dest.is_symlink():
        raise InvalidInput(f"{dest} is a symlink; gitmem export never follows one")
    if dest.exists() and not dest.is_dir():
        raise InvalidInput(f"{dest} exists and is not a folder")
    prefix = "memories/" if layout == "memory-tool" else ""
    cards = cards_of(repo, branch)
    res = ExportResult(str(dest), layout)
    if cards:
        dest.mkdir(parents=True, exist_ok=True)
    targets = {f"{prefix}{name}.md": data for name, data in sorted(cards.items())}
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
