"""Progress of a long fetch, push or clone, on a terminal.

The network commands run quietly (``--quiet``) and their stderr is kept for the one-line
error. Where a person watches (``shown(True)``: the CLI turns it on when stderr is a
terminal and the output is not ``--json``) they also get ``--progress``, which git
honours over ``--quiet``; its progress lines are parsed by GitPython's
``RemoteProgress`` and drawn as one line that rewrites itself, once the command has
run for ``AFTER_S`` (a quick sync stays silent). Progress lines are then left out of
the stderr the caller sees, so errors read exactly as they do without progress.

GitPython is imported here only when progress is shown: it costs some 35 ms to import,
nothing next to a network round trip, and a piped or scripted sync never pays it.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import IO

from gitmem.git.runner import Git, clean_env

AFTER_S = 1.0  # a command that ends sooner shows no progress at all

_shown: ContextVar[bool] = ContextVar("gitmem_progress_shown", default=False)
# pack-objects' closing count, written only when progress is on ("remote: " when remote)
_TOTAL = re.compile(r"(remote: )?Total \d+ \(delta \d+\)")
_OPS = {
    "COUNTING": "counting objects",
    "COMPRESSING": "compressing objects",
    "WRITING": "writing objects",
    "RECEIVING": "receiving objects",
    "RESOLVING": "resolving deltas",
    "FINDING_SOURCES": "finding sources",
    "CHECKING_OUT": "checking out files",
}


@contextlib.contextmanager
def shown(on: bool) -> Iterator[None]:
    """Show progress (``on``) for the network commands run inside the block."""
    token = _shown.set(on)
    try:
        yield
    finally:
        _shown.reset(token)


def watched(as_json: bool) -> bool:
    """Whether a person watches: stderr is a terminal and the output is not JSON."""
    return not as_json and sys.stderr.isatty()


def wanted() -> bool:
    return _shown.get()


def run(git: Git, label: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    """``git.run(*args, check=False)``; with progress drawn on stderr when it is wanted.

    ``args`` is the git command (fetch, push, clone), after any ``-c NAME=VALUE`` pairs;
    ``label`` says what it does ("fetching from origin"). stdout is what git wrote; stderr
    is without progress.
    """
    if not wanted():
        return git.run(*args, check=False)
    at = 0
    while args[at] == "-c":
        at += 2
    cmd = ["git", *args[: at + 1], "--progress", *args[at + 1 :]]
    try:
        proc = subprocess.Popen(
            cmd,
            cwd=git.cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=clean_env(),
        )
    except FileNotFoundError:
        return git.run(*args, check=False)  # raises git's "not installed" error
    assert proc.stdout is not None and proc.stderr is not None
    stdout, out = proc.stdout, []
    reader = threading.Thread(target=lambda: out.append(stdout.read()), daemon=True)
    reader.start()
    drawn = _Drawn(label)
    kept = drawn.feed(proc.stderr.fileno())
    code = proc.wait()
    reader.join()
    drawn.finish()
    return subprocess.CompletedProcess(cmd, code, b"".join(out), kept)


class _Drawn:
    """Feeds git's stderr to a RemoteProgress and draws what it reports."""

    def __init__(self, label: str, stream: IO[str] | None = None) -> None:
        from git.util import RemoteProgress  # GitPython: only when progress is shown

        self.label = label
        self.stream = stream or sys.stderr
        self.began = time.monotonic()
        self.width = 0
        self.last = ""
        drawn = self

        class Progress(RemoteProgress):
            def update(
                self,
                op_code: int,
                cur_count: str | float,
                max_count: str | float | None = None,
                message: str = "",
            ) -> None:
                drawn.draw(self, op_code, cur_count, max_count, message)

        self.progress = Progress()
        self.handle = self.progress.new_message_handler()
        self.ops = {getattr(RemoteProgress, k): v for k, v in _OPS.items()}
        self.op_mask = RemoteProgress.OP_MASK

    def feed(self, fd: int) -> bytes:
        """Read ``fd`` to its end; the lines that were not progress, as git wrote them."""
        kept: list[bytes] = []
        tail = b""
        while chunk := os.read(fd, 65536):
            data = tail + chunk
            parts = re.split(rb"(\r\n|\r|\n)", data)
            tail = parts.pop()  # the unfinished line (b"" after a line break)
            for i in range(0, len(parts), 2):
                self._line(parts[i], parts[i + 1], kept)
        if tail:
            self._line(tail, b"", kept)
        return b"".join(kept)

    def _line(self, raw: bytes, end: bytes, kept: list[bytes]) -> None:
        text = raw.decode("utf-8", "replace")
        before = (len(self.progress.other_lines), len(self.progress.error_lines))
        self.handle(text)
        after = (len(self.progress.other_lines), len(self.progress.error_lines))
        if not text.strip():
            return
        if after != before and not _TOTAL.match(text.strip()):
            kept.append(raw + (b"\n" if end else b""))

    def draw(
        self, progress: object, op_code: int, cur: str | float, top: str | float | None, msg: str
    ) -> None:
        if time.monotonic() - self.began < AFTER_S:
            return
        what = self.ops.get(op_code & self.op_mask, "working")
        if top:
            count = f"{float(cur) / float(top):4.0%} ({int(float(cur))}/{int(float(top))})"
        else:
            count = f"{int(float(cur or 0))}"
        line = f"gitmem: {self.label}: {what} {count}"
        if line == self.last:
            return
        self.last = line
        self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()
        self.width = len(line)

    def finish(self) -> None:
        if self.width:  # wipe the progress line: what the command prints next starts clean
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()


@contextlib.contextmanager
def counted(label: str, total: Callable[[], int]) -> Iterator[Callable[[int], None]]:
    """A ``step(done)`` for a long local count (commits folded), drawn as one line on
    stderr like git's when progress is wanted and the work has run for ``AFTER_S``;
    ``total`` is asked only then."""
    if not wanted():
        yield lambda done: None
        return
    began = time.monotonic()
    shown = {"top": 0, "percent": -1, "width": 0}

    def step(done: int) -> None:
        if time.monotonic() - began < AFTER_S:
            return
        top = shown["top"] = shown["top"] or max(1, total())
        percent = min(done, top) * 100 // top
        if percent == shown["percent"]:
            return
        line = f"gitmem: {label}: {percent:3d}% ({min(done, top)}/{top})"
        sys.stderr.write("\r" + line.ljust(shown["width"]))
        sys.stderr.flush()
        shown.update(percent=percent, width=len(line))

    try:
        yield step
    finally:
        if shown["width"]:  # wipe it: what the command prints next starts clean
            sys.stderr.write("\r" + " " * shown["width"] + "\r")
            sys.stderr.flush()
