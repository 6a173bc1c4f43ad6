"""One exception root for everything gitmem refuses, and the exit codes it maps to.

Every error a person can cause (bad input, a missing repo, a conflict) is a
``GitmemError`` subclass whose message is a single line; ``cli.main`` is the one
place that turns them into an exit code and a ``gitmem: error: ...`` line.
"""

from __future__ import annotations

import errno

# Named exit codes (gitlint style): scripts may rely on them.
EXIT_OK = 0
EXIT_FINDINGS = 1  # `gitmem scan` found secrets (for scripts, like grep)
EXIT_USAGE = 2  # bad input: names, texts, flags
EXIT_NOT_FOUND = 3  # no such repo, card, section, commit, session
EXIT_CONFLICT = 4  # a concurrent writer, uncommitted edits, a merge conflict
EXIT_GIT = 5  # git itself failed
EXIT_CONFIG = 6  # gitmem.toml or environment (API key) problems
EXIT_MODEL = 7  # the model API failed after retries
EXIT_INTERRUPTED = 130
EXIT_BUG = 70  # anything unexpected: a bug report is written


class GitmemError(Exception):
    """Root of every error gitmem reports to a person; ``str(err)`` is one line."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        # A message is one line by contract: fold anything else.
        super().__init__(" ".join(message.split("\n")).strip())
        self.hint = hint


class InvalidInput(GitmemError):
    """A value the caller passed is malformed (a name, a text, a trailer value)."""


class NotFound(GitmemError):
    """No such repo, client, branch, card, section, commit or session (exit 3)."""

    exit_code = EXIT_NOT_FOUND


class NotARepo(NotFound):
    """The path is not inside a gitmem client memory repository."""


class EditError(InvalidInput):
    """An edit cannot be applied: old_text missing or ambiguous, section absent, too large."""


class Conflict(GitmemError):
    """A concurrent writer, uncommitted edits, a merge conflict (exit 4): nothing changed."""

    exit_code = EXIT_CONFLICT


class DirtyCard(Conflict):
    """A person has uncommitted edits to a card the operation would touch."""


class ConfigError(GitmemError):
    """gitmem.toml or the environment (an API key) is wrong (exit 6)."""

    exit_code = EXIT_CONFIG


class GitError(GitmemError):
    """git failed; carries the command, exit status and stderr for the report."""

    exit_code = EXIT_GIT

    def __init__(self, cmd: list[str], returncode: int, stderr: str, stdout: str = "") -> None:
        last = next((ln for ln in reversed(stderr.strip().splitlines()) if ln.strip()), "")
        super().__init__(f"git {' '.join(cmd[1:4])} failed ({returncode}): {last or 'no output'}")
        self.cmd = cmd
        self.returncode = returncode
        self.stderr = stderr
        self.stdout = stdout


class ModelError(GitmemError):
    """The model API failed after its retries (exit 7)."""

    exit_code = EXIT_MODEL


class UnsafePath(Conflict):
    """A symlink, submodule or other non-file where gitmem keeps memory (in a tree or on
    disk): refused, never followed."""


class CorruptObject(GitmemError):
    """An object git cannot read: missing or damaged. Never read as "no card"."""

    exit_code = EXIT_GIT

    def __init__(self, obj: str, path: str | None = None, detail: str = "") -> None:
        where = f" ({path})" if path else ""
        more = f": {detail}" if detail else ""
        super().__init__(
            f"git object {obj}{where} is missing or corrupt{more}",
            hint="run `git fsck --full` to see the damage; restore the object from a clone "
            "or backup (git fetch from a remote that has it)",
        )
        self.obj = obj
        self.path = path


class StaleLock(Conflict):
    """A git lock file that stays: another git process is running, or one was killed."""

    def __init__(self, lock: str) -> None:
        super().__init__(
            f"{lock} exists: another git process is running here, or one was killed and left it",
            hint=f"if no git or gitmem process is running in this repo, remove it: rm {lock}",
        )
        self.lock = lock


class StorageError(GitmemError):
    """The disk refused a write: full, read-only, over a quota or a file-size limit."""

    exit_code = EXIT_GIT


class GitMissing(GitmemError):
    """git itself cannot be started."""

    exit_code = EXIT_GIT


_DISK_ERRORS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "over the disk quota",
    errno.EROFS: "the file system is read-only",
    errno.EFBIG: "over the file-size limit",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
}


def from_os_error(exc: BaseException) -> GitmemError | None:
    """The one-line error for an OSError a person's machine can cause (a full or
    read-only disk, no permission); None for anything else (a bug)."""
    if not isinstance(exc, OSError) or exc.errno not in _DISK_ERRORS:
        return None
    where = f": {exc.filename}" if exc.filename else ""
    err = StorageError(
        f"cannot write{where}: {_DISK_ERRORS[exc.errno]}",
        hint="free some space or fix the permissions, then run the command again",
    )
    return err
