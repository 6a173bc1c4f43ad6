"""Real signals and closed pipes against the installed ``gitmem`` (issue 22, case 14):
Ctrl-C at any moment is one line and exit 130; a reader that goes away ends the command
quietly; a shallow clone says so.

A SIGINT lands at a chosen moment, not after a guessed delay: a ``sitecustomize`` on the
child's path sends the process a real SIGINT when a given module starts to be imported
(or from an exit handler), so each case is the same on a busy machine as on an idle one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.setup.init import init_repo

from helpers import git, gm

GITMEM = str(Path(sys.executable).with_name("gitmem"))

_TRIP = """
import os, signal, sys

AT = os.environ["GITMEM_TEST_SIGINT_AT"]


class _Trip:
    def find_spec(self, name, path=None, target=None):
        if name == AT:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None


if AT == "exit":  # registered first, so it runs after every other exit handler
    import atexit

    atexit.register(os.kill, os.getpid(), signal.SIGINT)
else:
    sys.meta_path.insert(0, _Trip())
"""


def _env(tmp_path: Path, at: str) -> dict[str, str]:
    folder = tmp_path / "trip"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(_TRIP)
    env = dict(os.environ, GITMEM_TEST_SIGINT_AT=at, XDG_CACHE_HOME=str(tmp_path / "cache"))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), env.get("PYTHONPATH")]))
    return env


@pytest.mark.parametrize(
    "at",
    [
        "click",  # the console script's own imports, before any command
        "gitmem.cli.app",
        "gitmem.cli.index",  # the command's module
        "gitmem.index.build",  # an import inside the running command
        "exit",  # the interpreter's exit, after the command's output
    ],
)
def test_ctrl_c_at_any_moment_is_one_line_and_exit_130(tmp_path: Path, at: str) -> None:
    init_repo(tmp_path / "c")
    proc = subprocess.run(
        [GITMEM, "-C", str(tmp_path / "c"), "index"],
        env=_env(tmp_path, at),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert (proc.returncode, proc.stderr) == (130, "gitmem: interrupted\n")
    assert not (tmp_path / "cache" / "gitmem" / "crash.log").exists()


def test_ctrl_c_during_python_m_gitmem_is_one_line_too(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gitmem", "--version"],
        env=_env(tmp_path, "click"),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert (proc.returncode, proc.stderr) == (130, "gitmem: interrupted\n")


def test_a_command_started_with_ctrl_c_ignored_keeps_ignoring_it(tmp_path: Path) -> None:
    # `cmd &` in a script and nohup start a process with SIGINT ignored: Ctrl-C is not for it.
    init_repo(tmp_path / "c")
    proc = subprocess.run(
        [GITMEM, "-C", str(tmp_path / "c"), "index"],
        env=_env(tmp_path, "gitmem.cli.index"),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert proc.returncode == 0, proc.stderr
    assert "<memory-index>" in proc.stdout


@pytest.mark.parametrize("args", [["log"], ["index"], ["cards"], ["--help"]])
def test_a_reader_that_has_gone_ends_the_command_quietly(tmp_path: Path, args: list[str]) -> None:
    init_repo(tmp_path / "c")
    proc = subprocess.Popen(
        [GITMEM, "-C", str(tmp_path / "c"), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache")),
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the command writes a byte: every write finds no reader
    err = proc.stderr.read()
    assert proc.wait(timeout=60) in (0, 141)  # as git: 141 is what a shell shows for SIGPIPE
    assert err == b""
    assert not (tmp_path / "cache" / "gitmem" / "crash.log").exists()


def test_the_demo_piped_to_head_ends_quietly(tmp_path: Path) -> None:
    proc = subprocess.run(
        ["bash", "-c", 'gitmem demo | head -3; echo "exit ${PIPESTATUS[0]}" >&2'],
        env=dict(
            os.environ,
            PATH=os.pathsep.join([str(Path(GITMEM).parent), os.environ["PATH"]]),
            XDG_CACHE_HOME=str(tmp_path / "cache"),
        ),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.stdout.count("\n") == 3
    assert proc.stderr in ("exit 0\n", "exit 141\n")
    assert not (tmp_path / "cache" / "gitmem" / "crash.log").exists()


def _shallow_clone(tmp_path: Path) -> Path:
    origin = tmp_path / "origin"
    init_repo(origin)
    for n in range(3):
        res = gm(
            "-C", str(origin), "write", "acme", "--old", "", "--new", f"## S{n}\n\nt{n}\n",
            "--section", f"s{n}", "--keywords", f"k{n}", "--summary", f"summary {n}",
        )  # fmt: skip
        assert res.code == 0, res.err
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(clone))
    return clone


def _gitmem(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([GITMEM, *args], capture_output=True, text=True, check=False, timeout=60)


def test_a_shallow_clone_is_named_with_the_command_that_deepens_it(tmp_path: Path) -> None:
    clone = _shallow_clone(tmp_path)
    for command in ("index", "reindex", "status"):
        proc = _gitmem("-C", str(clone), command)
        assert proc.returncode == 0, proc.stderr
        said = proc.stdout + proc.stderr
        assert "shallow clone" in said and "`git fetch --unshallow`" in said, command
    status = _gitmem("-C", str(clone), "status", "--json")
    assert "git fetch --unshallow" in status.stdout
    git(clone, "fetch", "-q", "--unshallow")
    for command in ("index", "reindex", "status"):
        assert "shallow" not in _gitmem("-C", str(clone), command).stderr
