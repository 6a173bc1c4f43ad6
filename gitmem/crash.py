"""Bug reports: where an unexpected error's traceback is kept, and what it may say.

The report is the user's own (``$XDG_CACHE_HOME/gitmem/crash.log``, else
``~/.cache/gitmem/crash.log``; the folder 0700, the file 0600) and holds what a
maintainer needs -- gitmem, Python and git versions, the command and its option
names, the traceback -- and never an argument's value: those carry memory text.
"""

from __future__ import annotations

import os
import platform
import subprocess
import traceback
from datetime import UTC, datetime
from pathlib import Path

FILENAME = "crash.log"


def cache_dir() -> Path:
    """gitmem's folder in the user's cache directory (XDG base directory rules)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    return root / "gitmem"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("vibrating-memory")
    except PackageNotFoundError:
        from gitmem import __version__

        return __version__


def _git_version() -> str:
    try:
        proc = subprocess.run(["git", "--version"], capture_output=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return proc.stdout.decode("utf-8", "replace").strip() or "unknown"


def report_text(command: list[str], exc: BaseException) -> str:
    """One report: a header of versions and the command's words, then the traceback."""
    when = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return (
        f"--- {when}\n"
        f"command: gitmem {' '.join(command)}\n"
        f"gitmem: {_version()}\n"
        f"python: {platform.python_version()} ({platform.python_implementation()}, "
        f"{platform.system()})\n"
        f"git: {_git_version()}\n" + "".join(traceback.format_exception(exc)) + "\n"
    )


def write_report(command: list[str], exc: BaseException) -> Path | None:
    """Append a report to the user's crash log; its path, or None when it cannot be written.

    ``command`` is what may be shown of the command line (the caller strips values).
    """
    folder = cache_dir()
    path = folder / FILENAME
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        try:
            os.fchmod(fd, 0o600)  # a log left by an older gitmem may be world-readable
            os.write(fd, report_text(command, exc).encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        return None
    return path
