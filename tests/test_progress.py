"""Progress of sync and clone on a terminal (a real pty, real git daemon), silent otherwise."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_sync import closed_port, git_daemon, make_pair

from gitmem.git import progress
from gitmem.git.runner import Git

from helpers import git, write_sha

# The CLI as the console script runs it, with the "long command" threshold at zero so a
# quick local exchange counts as long.
_CLI = (
    "import sys; import gitmem.git.progress as p; p.AFTER_S = float(sys.argv[1]); "
    "from gitmem.cli import main; main(sys.argv[2:])"
)
_SHOWN = re.compile(r"gitmem: (pushing to|fetching from|cloning) \S+: [a-z ]+ +\d+%")


def _on_pty(args: list[str], cwd: Path, after: float = 0.0) -> tuple[int, str]:
    """Run the CLI with stdout and stderr on a pty; (exit code, what the terminal got)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", _CLI, str(after), *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the last writer closed the pty
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return proc.wait(timeout=60), b"".join(chunks).decode("utf-8", "replace")


def _piped(args: list[str], cwd: Path, after: float = 0.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _CLI, str(after), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def _big_edit(laptop: Path) -> None:
    """A card with many sections: a push of some size."""
    text = "".join(f"\n## Part {i}\n{os.urandom(300).hex()}\n" for i in range(40))
    write_sha(laptop, "beta", "Ship v2", "Ship v2\n" + text, "goals", "Many parts")


def test_a_sync_on_a_terminal_shows_progress_through_git_daemon(tmp_path: Path) -> None:
    with git_daemon(tmp_path) as port:
        _, laptop, _ = make_pair(tmp_path, f"git://127.0.0.1:{port}/remote.git")
        _big_edit(laptop)
        code, screen = _on_pty(["-C", str(laptop), "sync"], laptop)
    assert code == 0, screen
    assert _SHOWN.search(screen), screen
    assert "gitmem: pushing to origin: " in screen
    assert git(tmp_path / "remote.git", "rev-parse", "main") == git(laptop, "rev-parse", "main")
    # the progress line is wiped before the result: the last line is the result alone
    last = screen.replace("\r\n", "\n").rstrip("\n").split("\n")[-1]
    assert "gitmem:" not in last.split("\r")[-1], repr(last)


def test_no_progress_when_piped_or_json(tmp_path: Path) -> None:
    _, laptop, desktop = make_pair(tmp_path)
    _big_edit(laptop)
    piped = _piped(["-C", str(laptop), "sync"], laptop)
    assert piped.returncode == 0, piped.stderr
    assert piped.stderr == ""
    write_sha(desktop, "beta", "Ship v2", "Ship v4", "goals", "v4")
    code, screen = _on_pty(["-C", str(desktop), "sync", "--json"], desktop)
    assert code == 0, screen
    assert "gitmem:" not in screen
    assert screen.lstrip().startswith("{")


def test_a_quick_sync_on_a_terminal_stays_silent(tmp_path: Path) -> None:
    """Progress is for long syncs: one that ends before AFTER_S draws nothing."""
    _, laptop, _ = make_pair(tmp_path)
    _big_edit(laptop)
    code, screen = _on_pty(["-C", str(laptop), "sync"], laptop, after=600.0)
    assert code == 0, screen
    assert "gitmem: pushing" not in screen and "%" not in screen


def test_a_clone_on_a_terminal_shows_progress(tmp_path: Path) -> None:
    _, laptop, _ = make_pair(tmp_path)
    _big_edit(laptop)
    assert _piped(["-C", str(laptop), "sync"], laptop).returncode == 0
    with git_daemon(tmp_path) as port:
        url = f"git://127.0.0.1:{port}/remote.git"
        code, screen = _on_pty(["clone", url, "copy"], tmp_path)
    assert code == 0, screen
    assert "gitmem: cloning " in screen and _SHOWN.search(screen), screen
    assert git(tmp_path / "copy", "rev-parse", "main") == git(laptop, "rev-parse", "main")


def test_errors_read_the_same_with_progress_on(tmp_path: Path) -> None:
    _, laptop, _ = make_pair(tmp_path)
    git(laptop, "remote", "add", "gone", f"git://127.0.0.1:{closed_port()}/remote.git")
    piped = _piped(["-C", str(laptop), "sync", "gone"], laptop)
    code, screen = _on_pty(["-C", str(laptop), "sync", "gone"], laptop)
    assert code == piped.returncode != 0
    error = piped.stderr.strip()
    assert error.startswith("gitmem: error: cannot fetch from gone (git://127.0.0.1:")
    shown = screen.replace("\r\n", "\n").strip().splitlines()
    assert shown[0] == error  # on a terminal, the hint follows on a line of its own
    assert [line.startswith("hint: ") for line in shown[1:]] == [True]


def test_progress_lines_are_left_out_of_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a caller sees of git's stderr: every line but progress, as git wrote it."""
    monkeypatch.setattr(progress, "AFTER_S", 0.0)
    read, write_end = os.pipe()
    os.write(
        write_end,
        b"remote: Enumerating objects: 5, done.\n"
        b"remote: Counting objects:  50% (1/2)\rremote: Counting objects: 100% (2/2), done.\n"
        b"remote: Total 3 (delta 0), reused 0 (delta 0), pack-reused 0\n"
        b"Writing objects: 100% (3/3), 300 bytes | 300.00 KiB/s, done.\n"
        b"error: failed to push some refs to 'x'\n"
        b"hint: Updates were rejected",
    )
    os.close(write_end)
    screen = io.StringIO()
    drawn = progress._Drawn("pushing to origin", screen)
    try:
        kept = drawn.feed(read)
    finally:
        os.close(read)
    assert kept == b"error: failed to push some refs to 'x'\nhint: Updates were rejected"
    assert "gitmem: pushing to origin: writing objects 100% (3/3)" in screen.getvalue()


def test_progress_waits_for_a_long_command(monkeypatch: pytest.MonkeyPatch) -> None:
    read, write_end = os.pipe()
    os.write(write_end, b"Writing objects: 100% (3/3), done.\n")
    os.close(write_end)
    monkeypatch.setattr(progress, "AFTER_S", 600.0)
    screen = io.StringIO()
    drawn = progress._Drawn("pushing to origin", screen)
    try:
        assert drawn.feed(read) == b""
    finally:
        os.close(read)
    drawn.finish()
    assert screen.getvalue() == ""


def test_off_by_default_and_gitpython_not_loaded(tmp_path: Path) -> None:
    """Without ``shown(True)`` a network command is plain ``Git.run``: GitPython stays unloaded."""
    code = (
        "import sys; from pathlib import Path; from gitmem.git import progress; "
        "from gitmem.git.runner import Git; "
        "p = progress.run(Git(Path(sys.argv[1])), 'x', 'fetch', '--quiet', 'nowhere'); "
        "print(p.returncode != 0, 'git' in sys.modules, 'git.util' in sys.modules)"
    )
    git(tmp_path, "init", "-q")
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["True", "False", "False"]
    with progress.shown(True):
        assert progress.wanted()
        proc = progress.run(Git(tmp_path), "fetching", "fetch", "--quiet", "nowhere")
    assert not progress.wanted()
    assert proc.returncode != 0 and b"nowhere" in proc.stderr
