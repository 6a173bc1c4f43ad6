"""Compare-and-swap ref updates through one long-running ``git update-ref --stdin``.

Each update is its own transaction (start, update REF NEW OLD, prepare, commit),
so it is exactly as safe as ``git update-ref REF NEW OLD`` but costs no process.
When ``prepare`` fails -- someone moved the ref, or holds its lock -- git exits;
the next update starts a new process.
"""

from __future__ import annotations

import contextlib
import subprocess

from gitmem.git.runner import Git


class RefTransactions:
    def __init__(self, git: Git, message: str) -> None:
        self.git = git
        self.message = message
        self._proc: subprocess.Popen[bytes] | None = None

    def cas(self, ref: str, new: str, old: str) -> tuple[bool, str]:
        """Point ``ref`` at ``new`` if it is at ``old`` (all zeros: must not exist).

        Returns (moved, git's stderr); the caller tells a lost race from a failure
        by looking at the ref (``refs.failed_cas``), not at git's words.
        """
        return self.apply(f"update {ref} {new} {old}\n")

    def apply(self, commands: str) -> tuple[bool, str]:
        """One transaction of ``commands`` (``update``/``delete`` lines as ``update-ref
        --stdin`` reads them): all applied, or none. Returns (applied, git's stderr)."""
        if self._proc is None or self._proc.poll() is not None:
            self._proc = self.git.popen("update-ref", "--stdin", "-m", self.message)
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        try:
            proc.stdin.write(f"start\n{commands}prepare\ncommit\n".encode())
            proc.stdin.flush()
            replies = [proc.stdout.readline() for _ in range(3)]
        except BrokenPipeError:
            replies = []
        if replies == [b"start: ok\n", b"prepare: ok\n", b"commit: ok\n"]:
            return True, ""
        return False, self._reap()

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
