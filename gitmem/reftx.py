"""Compare-and-swap ref updates through one long-running ``git update-ref --stdin``.

Each update is its own transaction (start, update REF NEW OLD, prepare, commit),
so it is exactly as safe as ``git update-ref REF NEW OLD`` but costs no process.
When ``prepare`` fails -- someone moved the ref, or holds its lock -- git exits;
the next update starts a new process.
"""

from __future__ import annotations

import contextlib
import subprocess

from .errors import GitError
from .git import Git

LOST_RACE = ("but expected", "cannot lock ref", "unable to create", "is at", "reference already exists")


def lost_race(stderr: str) -> bool:
    low = stderr.lower()
    return any(s in low for s in LOST_RACE)


class RefTransactions:
    def __init__(self, git: Git, message: str) -> None:
        self.git = git
        self.message = message
        self._proc: subprocess.Popen[bytes] | None = None

    def cas(self, ref: str, new: str, old: str) -> bool:
        """Point ``ref`` at ``new`` if it is at ``old`` (all zeros: must not exist)."""
        if self._proc is None or self._proc.poll() is not None:
            self._proc = self.git.popen("update-ref", "--stdin", "-m", self.message)
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        try:
            proc.stdin.write(f"start\nupdate {ref} {new} {old}\nprepare\ncommit\n".encode())
            proc.stdin.flush()
            replies = [proc.stdout.readline() for _ in range(3)]
        except BrokenPipeError:
            replies = []
        if replies == [b"start: ok\n", b"prepare: ok\n", b"commit: ok\n"]:
            return True
        err = self._reap()
        if lost_race(err):
            return False
        raise GitError(["git", "update-ref", "--stdin", ref], -1, err)

    def _reap(self) -> str:
        proc, self._proc = self._proc, None
        if proc is None:
            return ""
        if proc.stdin:
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.close()
        err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
        proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
        return err

    def close(self) -> None:
        self._reap()
