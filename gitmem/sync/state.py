"""A sync stopped at a conflict: what it keeps, how the person's resolution is read, how to undo it.

While stopped, ``main`` has not moved. Both tips are kept under
``refs/gitmem/conflict/local`` and ``refs/gitmem/conflict/remote``, the state is
in ``.git/gitmem/sync-state.json``, and when main is checked out each conflicted
file in the working tree (never the index) shows both versions between conflict
markers. Undoing puts back exactly those files and drops the refs and the state.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from gitmem.errors import Conflict, InvalidInput
from gitmem.git import safe_files
from gitmem.git.runner import Sha
from gitmem.memory import refs
from gitmem.memory.cards import card_of, unwritable
from gitmem.memory.repo import MemoryRepo
from gitmem.ops.merge import Merged, has_markers

STATE_FILE = "sync-state.json"


def _path(repo: MemoryRepo) -> Path:
    return repo.gitmem_dir / STATE_FILE


def load(repo: MemoryRepo) -> dict[str, Any] | None:
    """The state of a sync stopped at a conflict, None when none is; ``Conflict`` when
    the file cannot be read as one (what a stopped sync kept is then for a person)."""
    path = _path(repo)
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise _damaged(path, exc) from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise _damaged(path, exc) from None
    if not isinstance(data, dict) or not {"remote", "theirs", "conflicts"} <= data.keys():
        raise _damaged(path, ValueError("not the state of a stopped sync"))
    return data


def _damaged(path: Path, exc: Exception) -> Conflict:
    return Conflict(
        f"{path} cannot be read ({type(exc).__name__}: {exc}); it holds a sync stopped at a "
        f"conflict. Both versions stay in {refs.CONFLICT_LOCAL} and {refs.CONFLICT_REMOTE}: remove the file "
        "and run `gitmem sync` again",
    )


def worktree_file(repo: MemoryRepo, path: str) -> bytes | None:
    return safe_files.read(repo.root, path)


def put_file(repo: MemoryRepo, path: str, data: bytes | None) -> None:
    """Write one working-tree file, not the index (git status shows it as modified)."""
    if data is None:
        safe_files.remove(repo.root, path)
    else:
        safe_files.write(repo.root, path, data)


def keep(
    repo: MemoryRepo, remote: str, ours: Sha, theirs: Sha, merged: Merged, live: bool
) -> list[str]:
    """Record the stop; returns the working-tree files now showing both versions."""

    both = f"update {refs.CONFLICT_LOCAL} {ours}\nupdate {refs.CONFLICT_REMOTE} {theirs}\n"
    repo.git.run("update-ref", "-m", "gitmem sync: conflict", "--stdin", input=both.encode())
    written = {p: hashlib.sha1(d).hexdigest() for p, d in merged.marked.items()} if live else {}
    state = {
        "remote": remote,
        "local": ours,
        "theirs": theirs,
        "conflicts": [c.to_json() for c in merged.conflicts],
        "written": written,
    }
    tmp = _path(repo).with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1, sort_keys=True), "utf-8")
    os.replace(tmp, _path(repo))
    for path in written:
        put_file(repo, path, merged.marked[path])
    return sorted(written)


def resolutions(
    repo: MemoryRepo, state: dict[str, Any], ours: Sha, live: bool
) -> dict[str, bytes | None]:
    """Each conflicted path as the person settled it: in the working tree, or committed on main."""

    out: dict[str, bytes | None] = {}
    limit = repo.config.max_card_bytes
    for c in state["conflicts"]:
        path = c["path"]
        data = worktree_file(repo, path) if live else repo.store.read_blob(f"{ours}:{path}")
        if has_markers(data):
            raise InvalidInput(
                f"{path} still has conflict markers; keep what you want of both versions, "
                "then run `gitmem sync --continue` again"
            )
        problem = None if data is None or not card_of(path) else unwritable(data, limit)
        if problem is not None:
            raise InvalidInput(
                f"{path} now holds {problem}, which gitmem never writes; fix it, then run "
                "`gitmem sync --continue` again"
            )
        out[path] = data
    return out


def clear(repo: MemoryRepo) -> None:
    for ref in (refs.CONFLICT_LOCAL, refs.CONFLICT_REMOTE):
        repo.git.run("update-ref", "-d", ref, check=False)
    _path(repo).unlink(missing_ok=True)


def undo(repo: MemoryRepo, state: dict[str, Any], tip: Sha | None, live: bool) -> str:
    """Put back the working-tree files the stop wrote; a note when the person had edited one."""

    note = ""
    for path, digest in state["written"].items() if live else ():
        now = worktree_file(repo, path)
        before = repo.store.read_blob(f"{tip}:{path}") if tip else None
        if now == before:
            continue
        if now is not None and hashlib.sha1(now).hexdigest() != digest:
            saved = repo.gitmem_dir / "sync-aborted" / path
            saved.parent.mkdir(parents=True, exist_ok=True)
            saved.write_bytes(now)  # they had started to settle it: keep their text
            note += f" Your edits to {path} are saved in {saved}."
        put_file(repo, path, before)
    clear(repo)
    return note
