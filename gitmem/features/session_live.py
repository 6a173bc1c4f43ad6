"""Whether a session is still running: its process holds an advisory lock on
``gitmem/live/<id>.lock`` in the git dir every worktree shares, from ``start`` to the
end of ``finish``. The kernel lets go of it when the process dies (kill -9 too), so a
session that crashed is never taken for a running one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from gitmem.errors import InvalidInput
from gitmem.memory import names
from gitmem.memory.repo import MemoryRepo


def transcript_file(repo: MemoryRepo, session_id: str) -> Path:
    """Where a session writes its transcript while it runs (committed when it ends)."""
    return repo.private_dir("sessions") / f"{names.session(session_id)}.jsonl"


def _path(repo: MemoryRepo, session_id: str) -> Path:
    return repo.store.common_dir / "gitmem" / "live" / f"{names.session(session_id)}.lock"


def hold(repo: MemoryRepo, session_id: str) -> int | None:
    """Take the session's lock for this process: its descriptor, or None when another
    process runs the session."""
    path = _path(repo, session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())  # for the message naming who runs it
    return fd


def release(repo: MemoryRepo, session_id: str, fd: int) -> None:
    """Let go of a lock ``hold`` took; the file goes first, so it is never left behind."""
    with contextlib.suppress(FileNotFoundError):
        _path(repo, session_id).unlink()
    os.close(fd)


def running(repo: MemoryRepo, session_id: str) -> str | None:
    """The process id running the session ("?" when unreadable); None when none does."""
    try:
        fd = os.open(_path(repo, session_id), os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = os.read(fd, 32).decode("ascii", "replace").strip()
        return pid if pid.isdigit() else "?"
    finally:
        os.close(fd)  # closing lets go of a shared lock taken here
    return None


def listed(repo: MemoryRepo) -> list[str]:
    """The sessions with a lock file: running, or killed before they finished (one
    directory listing: a search reads their live transcripts)."""
    folder = repo.store.common_dir / "gitmem" / "live"
    try:
        stems = sorted(p.name.removesuffix(".lock") for p in folder.iterdir())
    except OSError:
        return []
    out = []
    for stem in stems:
        with contextlib.suppress(InvalidInput):
            out.append(names.session(stem))
    return out
