"""``gitmem edit``: a card or one section in the person's editor, saved as one edit commit.

The text goes to a temporary file, the editor runs on it the way git runs one
(``sh -c '<editor> "$@"'``, so an editor setting with arguments works), and the
result is saved through ``edit.write_card`` with the old text as ``old_text``:
every check of an agent's edit applies. An unchanged buffer changes nothing.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gitmem.errors import InvalidInput, NotFound
from gitmem.features.edit import EditResult, write_card
from gitmem.git.runner import Sha
from gitmem.memory import names
from gitmem.memory.cards import card_path, sections
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.ops import linked_worktrees
from gitmem.ops.worktree import checked_out, ensure_clean


@dataclass(frozen=True)
class Buffer:
    """What the editor is given: a card, one section of it, or a new card."""

    project: str
    section: str | None
    text: str  # the old_text of the edit ("" for a new card)
    initial: str  # what the editor shows
    new_card: bool


@dataclass(frozen=True)
class EditOutcome:
    """An edit in an editor: the card and section, whether the text changed, and the
    ``EditResult`` of its commit (``None`` when nothing changed)."""

    project: str
    section: str | None
    changed: bool
    result: EditResult | None

    def to_json(self) -> dict[str, object]:
        return {
            "project": self.project,
            "section": self.section,
            "changed": self.changed,
            "edit": self.result.to_json() if self.result else None,
        }


def editor_command(repo: MemoryRepo) -> str:
    """``$EDITOR``, else ``$VISUAL``, else what git would use (``git var GIT_EDITOR``)."""
    for key in ("EDITOR", "VISUAL"):
        value = os.environ.get(key, "").strip()
        if value:
            return value
    env = {"GIT_EDITOR": os.environ["GIT_EDITOR"]} if os.environ.get("GIT_EDITOR") else None
    proc = repo.git.run("var", "GIT_EDITOR", check=False, env=env)
    value = proc.stdout.decode("utf-8", "replace").strip()
    if proc.returncode or not value:
        raise InvalidInput("no editor: set $EDITOR (e.g. export EDITOR=nano)")
    return value


def load(repo: MemoryRepo, project: str, section: str | None, branch: str = MAIN) -> Buffer:
    """What an editor is given for ``project`` (the whole card, or one ``section``) at
    ``branch``'s tip, as an ``EditBuffer``; a new card starts from a template."""
    names.project(project)
    names.branch(branch)
    tip = repo.branch_tip(branch)
    got = repo.store.read(f"{tip}:{card_path(project)}")
    raw = got.data if got and got.kind == "blob" else None
    _check_writable(repo, project, branch, (got.sha if got and raw is not None else None, raw))
    if raw is None:
        if section is not None:
            raise NotFound(f"no card {project!r} ({card_path(project)}) to take a section from")
        return Buffer(project, None, "", f"# {project}\n\n## Notes\n\n", True)
    text = raw.decode("utf-8", "replace")
    if section is None:
        return Buffer(project, None, text, text, False)
    from gitmem.features.audit import read_card

    part = read_card(repo, project, names.section_id(section), branch=branch)
    return Buffer(project, section, part, part, False)


def _check_writable(
    repo: MemoryRepo, project: str, branch: str, head: tuple[Sha | None, bytes | None]
) -> None:
    """What would refuse the save, refused before the editor opens: the card a symlink
    (or not a file) in a working tree that has ``branch`` checked out, or holding a
    person's uncommitted edits (``head``: the card's blob and bytes at the tip)."""
    path = card_path(project)
    if checked_out(repo, branch):
        ensure_clean(repo, [path], {path: head})
    linked_worktrees.ensure_clean(repo, branch, [path])


def run_editor(command: str, text: str, name: str) -> tuple[str, Path]:
    """Edit ``text`` in a temporary file; returns the saved text and the file (kept: the
    caller removes it once the edit is saved, so a refused edit loses nothing)."""
    fd, tmp = tempfile.mkstemp(prefix=f"gitmem-{name}-", suffix=".md")
    path = Path(tmp)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    proc = subprocess.run(["sh", "-c", f'{command} "$@"', command, str(path)], check=False)
    if proc.returncode:
        path.unlink(missing_ok=True)
        raise InvalidInput(f"the editor ({command}) exited with {proc.returncode}; nothing changed")
    try:
        return path.read_text("utf-8"), path
    except FileNotFoundError:
        raise InvalidInput(f"the editor removed {path}; nothing changed") from None
    except IsADirectoryError:
        raise InvalidInput(f"the editor left a folder at {path}; nothing changed") from None
    except UnicodeDecodeError:
        raise InvalidInput(
            f"the edited text in {path} is not valid UTF-8; nothing changed"
        ) from None


def changed_section(before: str, after: str) -> str | None:
    """The first section whose text differs (the one a whole-card edit is about), if any."""
    old_lines, new_lines = before.split("\n"), after.split("\n")
    old = {s.id: "\n".join(old_lines[s.start : s.end]) for s in sections(before)}
    for s in sections(after):
        if old.get(s.id) != "\n".join(new_lines[s.start : s.end]):
            return s.id
    return None


def save(
    repo: MemoryRepo, buf: Buffer, new_text: str, entry: IndexEntry, branch: str = MAIN
) -> EditOutcome:
    """Commit the edited ``new_text`` of ``buf`` with ``entry`` (nothing when it is unchanged)."""
    if new_text == buf.initial:
        return EditOutcome(buf.project, buf.section, False, None)
    if buf.section is not None and not new_text.endswith("\n"):
        new_text += "\n"  # the section's end stays a line end: the next heading keeps its line
    res = write_card(repo, buf.project, buf.text, new_text, entry, actor="cli", branch=branch)
    return EditOutcome(buf.project, buf.section, True, res)
