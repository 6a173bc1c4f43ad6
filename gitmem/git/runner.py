"""The one place gitmem runs git.

``Git.run`` spawns a git process with a sanitised environment: inherited
repository-location variables (``GIT_DIR``, ``GIT_INDEX_FILE``...) are dropped so a
gitmem call made from inside a git hook addresses the repo it names, not the one
the hook runs for, and ``GIT_TERMINAL_PROMPT=0`` keeps a remote from blocking on a
password prompt. Failures raise ``GitError`` carrying the command and git's stderr.

git runs in a process group of its own (but for commands that may ask a person at
the terminal: fetch, push...), so a signal sent to gitmem's group -- a client or a
terminal closing -- reaches gitmem alone, which then ends its git children in order
instead of finding them killed halfway (``held_stop_signals``).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NewType

from gitmem.errors import CorruptObject, GitError, GitmemError, GitMissing

Sha = NewType("Sha", str)

_OBJECT_ID = re.compile(r"\b[0-9a-f]{40}(?:[0-9a-f]{24})?\b")


def failure(cmd: list[str], code: int, err: str, out: str = "") -> GitmemError:
    """The error for a failed git command: a ``git log`` whose stderr names an object id
    the command did not (in git's words, in any language) could not read that object:
    ``CorruptObject``; else ``GitError``."""
    if "log" in cmd:
        named = _OBJECT_ID.search(err)
        if named and not any(named.group() in arg for arg in cmd):
            return CorruptObject(named.group(), detail="git log cannot read it")
    return GitError(cmd, code, err, out)


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


# Commands that may ask a person through the terminal (ssh, a credential helper): they stay
# in the terminal's foreground group, where reading it does not stop them (SIGTTIN).
_ASKS_TERMINAL = frozenset({"fetch", "push", "pull", "clone", "ls-remote", "remote", "checkout"})
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _group(args: Sequence[str]) -> int | None:
    """``process_group`` for a git command: 0 (a group of its own) unless it may prompt."""
    words = iter(args)
    for word in words:
        if word in ("-c", "-C"):
            next(words, None)
        elif not word.startswith("-"):
            return None if word in _ASKS_TERMINAL else 0
    return 0


class StopSignals:
    """SIGTERM and SIGHUP noted, not obeyed, while held (``held_stop_signals``)."""

    def __init__(self) -> None:
        self.got: list[int] = []

    def hold(self) -> None:
        """Note them (again: an event loop that handled them meanwhile leaves the default
        behind), and let through one ``signal.pthread_sigmask`` held since the stop began."""
        if threading.current_thread() is threading.main_thread():  # (where handlers are set)
            for sig in STOP_SIGNALS:
                signal.signal(sig, self._note)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)

    def _note(self, signum: int, _frame: object) -> None:
        self.got.append(signum)


@contextlib.contextmanager
def held_stop_signals() -> Iterator[StopSignals]:
    """Run a step that must end whole (a session's end) with SIGTERM and SIGHUP noted,
    not obeyed; the handlers before are put back after it. Inside a step that holds
    them already, the same notes are kept (a stop noted outside is seen inside)."""
    if threading.current_thread() is not threading.main_thread():
        yield StopSignals()
        return
    old = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    outer = getattr(old[signal.SIGTERM], "__self__", None)
    stops = outer if isinstance(outer, StopSignals) else StopSignals()
    stops.hold()
    try:
        yield stops
    finally:
        for sig, handler in old.items():
            if handler is not None:  # (None: set outside Python, nothing to put back)
                signal.signal(sig, handler)


def restrict_umask() -> None:
    """Make what this process (and every child: git, ssh-keygen) creates from now on never
    group- or world-writable, whatever umask it inherited: memory another user could
    write is memory anyone could plant. Only ever tightens (a 077 umask stays 077)."""
    old = os.umask(0o077)  # (the strictest value while the old one is read)
    os.umask(old | 0o022)


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _LOCATION_VARS}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_NO_REPLACE_OBJECTS"] = "1"  # memory is what was committed, not a `git replace`
    env["GIT_GRAFT_FILE"] = os.path.join(os.devnull, "grafts")  # no file: nor a graft's parents
    env.setdefault("LC_ALL", "C")
    if extra:
        env.update(extra)
    return env


class Git:
    """Runs git against one repository (``cwd`` is its top level, or the git dir if bare)."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._env = clean_env()
        restrict_umask()  # every gitmem command, API call and tool runs git first

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        check: bool = True,
        env: Mapping[str, str] | None = None,
        ok_codes: Sequence[int] = (0,),
    ) -> subprocess.CompletedProcess[bytes]:
        cmd = ["git", *args]
        try:
            child = _start(
                cmd,
                _group(args),
                cwd=self.cwd,
                stdin=subprocess.PIPE if input is not None else None,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**self._env, **env} if env else self._env,
            )
        except FileNotFoundError as exc:
            raise _missing(self.cwd) from exc
        with child:
            try:
                out, err = child.communicate(input)
            except BaseException:  # (as subprocess.run: a Ctrl-C ends git too)
                child.kill()
                raise
        proc = subprocess.CompletedProcess(cmd, child.returncode, out, err)
        if check and proc.returncode not in ok_codes:
            raise failure(
                cmd,
                proc.returncode,
                proc.stderr.decode("utf-8", "replace"),
                proc.stdout.decode("utf-8", "replace"),
            )
        return proc

    def stream(self, *args: str) -> Stream:
        """Start a command with a long NUL-separated output (``git log -z``); see ``Stream``."""
        return Stream(["git", *args], self.cwd, self._env)

    def out(self, *args: str, input: bytes | None = None) -> str:
        """Run and return stdout as text with the trailing newline removed."""
        return self.run(*args, input=input).stdout.decode("utf-8", "surrogateescape").rstrip("\n")

    def popen(self, *args: str) -> subprocess.Popen[bytes]:
        try:  # long-running: never a prompt, ended by closing its input
            pipe = subprocess.PIPE
            return _start(
                ["git", *args], 0, cwd=self.cwd, stdin=pipe, stdout=pipe, stderr=pipe, env=self._env
            )
        except FileNotFoundError as exc:
            raise _missing(self.cwd) from exc


def _start(cmd: list[str], group: int | None, **options: Any) -> subprocess.Popen[bytes]:
    """Start ``cmd``; with ``group`` 0 in a process group of its own.

    Python's child leaves our group only just before exec, after it unblocked signals:
    a group's signal in between would kill it. So it starts, and runs, with SIGTERM and
    SIGHUP blocked (gitmem ends it by closing its input, or SIGKILL). git keeps Python's
    ignored SIGPIPE and SIGXFSZ (``restore_signals=False``): past a file-size limit it
    then fails and removes its lock files, where SIGXFSZ would kill it holding them.
    """
    if group is None:
        return subprocess.Popen(cmd, restore_signals=False, **options)
    old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        return subprocess.Popen(cmd, process_group=group, restore_signals=False, **options)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _missing(cwd: Path) -> Exception:
    if not cwd.is_dir():
        return FileNotFoundError(f"no such directory: {cwd}")
    return GitMissing(
        "git is not installed or not on PATH", hint="install git (https://git-scm.com) and retry"
    )


class Stream:
    """A git command writing a long output, read in pieces while it still runs (parsing
    overlaps git's own walk). Every piece ends on a NUL (a whole ``-z`` record); a failed
    command raises ``GitError`` with its stderr once its output is read (stderr goes to a
    temporary file: a full pipe of it would stop git)."""

    def __init__(self, cmd: list[str], cwd: Path, env: Mapping[str, str]) -> None:
        self._cmd = cmd
        import tempfile  # only here: the streaming reader's stderr

        with contextlib.ExitStack() as files:
            self._err = files.enter_context(tempfile.TemporaryFile())
            try:
                self._proc = _start(
                    cmd, 0, cwd=cwd, stdout=subprocess.PIPE, stderr=self._err, env=env
                )
            except FileNotFoundError as exc:
                raise _missing(cwd) from exc
            self._files = files.pop_all()  # the stream owns them now; close() closes them

    def pieces(self, size: int = 1 << 26) -> Iterator[bytes]:
        """The output in pieces of at most about ``size`` bytes, each as soon as git has
        written a whole record (a smaller size holds less at once)."""
        assert self._proc.stdout is not None
        fd, held = self._proc.stdout.fileno(), list[bytes]()
        while chunk := os.read(fd, size):
            cut = chunk.rfind(b"\0") + 1
            if cut:
                yield b"".join([*held, chunk[:cut]])
                held = []
            held.append(chunk[cut:])
        code = self._proc.wait()
        if code:
            self._err.seek(0)
            raise failure(self._cmd, code, self._err.read().decode("utf-8", "replace"))
        if any(held):
            yield b"".join(held)

    def close(self) -> None:
        if self._proc.poll() is None:  # the reader gave up early: git is not needed any more
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._files.close()

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
