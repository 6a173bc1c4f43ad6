"""A decision on a session a remote has, written down before it starts: the journal.

Such a decision first claims the session on the remote (``team.claim``), then lands
here. Before the claim it writes ``.git/gitmem/decisions/<id>.json`` (what was decided,
on which tip, the commits or hunks chosen); the last step removes it. A file left
behind means the process stopped in between. The next ``gitmem sync`` (after its
fetch, before it takes in decisions) looks at the remote: if it holds this machine's
claim, ``interrupted.finish_interrupted`` finishes it here (landed unless ``main`` has it
already, then recorded); if not, the claim never reached it and the file goes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from gitmem.memory import names
from gitmem.memory.repo import MemoryRepo
from gitmem.review.pending import SessionView


def _path(repo: MemoryRepo, sid: str) -> Path:
    return repo.private_dir("decisions") / f"{names.session(sid)}.json"


def save(
    repo: MemoryRepo,
    view: SessionView,
    action: str,
    commits: Sequence[str],
    hunks: Sequence[int] | None,
    remote: str,
) -> None:
    data = {
        "session": view.ref.id,
        "action": action,
        "tip": view.ref.tip,
        "base": view.base,
        "remote": remote,
        "state": view.ref.state,
        "ref": view.ref.ref,
        "commits": list(commits),
        "hunks": None if hunks is None else list(hunks),
    }
    path = _path(repo, view.ref.id)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def clear(repo: MemoryRepo, sid: str) -> None:
    _path(repo, sid).unlink(missing_ok=True)


def find(repo: MemoryRepo, sid: str) -> dict[str, object] | None:
    """The decision on session ``sid`` a stopped process left half-done, if any."""
    path = _path(repo, sid)
    return json.loads(path.read_text()) if path.is_file() else None


def left(repo: MemoryRepo, remote: str | None = None) -> list[dict[str, object]]:
    """The intents a stopped process left for ``remote`` (None: all), by file name."""
    folder = repo.git_dir / "gitmem" / "decisions"
    found = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    return [data for data in found if remote is None or data.get("remote") == remote]
