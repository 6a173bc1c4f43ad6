"""The one place gitmem runs git.

``Git.run`` spawns a git process with a sanitised environment: inherited
repository-location variables (``GIT_DIR``, ``GIT_INDEX_FILE``...) are dropped so a
gitmem call made from inside a git hook addresses the repo it names, not the one
the hook runs for, and ``GIT_TERMINAL_PROMPT=0`` keeps a remote from blocking on a
password prompt. Failures raise ``GitError`` carrying the command and git's stderr.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NewType

from .errors import GitError

Sha = NewType("Sha", str)

# Variables that point git at a repository, an index or an object store. A hook
# inherits them from the git command that runs it (pre-commit's ``no_git_env``).
_LOCATION_VARS = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_PREFIX",
        "GIT_NAMESPACE",
        "GIT_QUARANTINE_PATH",
        "GIT_EDITOR",
    }
)


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _LOCATION_VARS}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.setdefault("LC_ALL", "C")
    if extra:
        env.update(extra)
    return env


class Git:
    """Runs git against one repository (``cwd`` is its top level, or the git dir if bare)."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._env = clean_env()

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        check: bool = True,
        env: Mapping[str, str] | None = None,
        ok_codes: Sequence[int] = (0,),
    ) -> subprocess.CompletedProcess[bytes]:
        cmd = ["git", *args]
        proc = subprocess.run(
            cmd,
            cwd=self.cwd,
            input=input,
            capture_output=True,
            env={**self._env, **env} if env else self._env,
            check=False,
        )
        if check and proc.returncode not in ok_codes:
            raise GitError(
                cmd,
                proc.returncode,
                proc.stderr.decode("utf-8", "replace"),
                proc.stdout.decode("utf-8", "replace"),
            )
        return proc

    def output(self, *args: str) -> bytes:
        """stdout of a command with a large output, read from a temporary file.

        A pipe would wake the reader for every small write git makes (thousands for a
        long log); a file is read once, when git is done.
        """
        cmd = ["git", *args]
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            code = subprocess.run(cmd, cwd=self.cwd, stdout=out, stderr=err, env=self._env).returncode
            out.seek(0)
            err.seek(0)
            if code:
                raise GitError(cmd, code, err.read().decode("utf-8", "replace"))
            return out.read()

    def out(self, *args: str, input: bytes | None = None) -> str:
        """Run and return stdout as text with the trailing newline removed."""
        return self.run(*args, input=input).stdout.decode("utf-8", "surrogateescape").rstrip("\n")

    def popen(self, *args: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            ["git", *args],
            cwd=self.cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self._env,
        )
