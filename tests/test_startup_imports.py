"""What the installed ``gitmem`` loads (issue 24, point 1): commands that never call the
model load neither its SDK nor MCP nor rich, and ``gitmem chat`` shows its prompt while
the SDK is still loading.

A ``sitecustomize`` on the child's path writes, at exit, which of those modules were
loaded; for the chat, it holds ``import anthropic`` until the test lets it go, so the
prompt shown before that is proof, on any machine load, that the prompt does not wait.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitmem.fakeapi import FakeAnthropicServer, QueueModel

from helpers import gm

GITMEM = str(Path(sys.executable).with_name("gitmem"))
HEAVY = ("anthropic", "mcp", "rich")

_WATCH = f"""
import atexit, os, sys, time

HEAVY = {HEAVY!r}
WATCH = os.environ.get("GITMEM_TEST_WATCH", " ".join(HEAVY)).split()

def _loaded():
    with open(os.environ["GITMEM_TEST_LOADED"], "w") as f:
        got = {{w for w in WATCH for m in sys.modules if m == w or m.startswith(w + ".")}}
        f.write(" ".join(sorted(got)))

atexit.register(_loaded)
HOLD = os.environ.get("GITMEM_TEST_HOLD")


class _Held:
    # Runs the module's code once the test allows; not in find_spec, which holds the
    # interpreter's import lock and would stop every thread's imports.

    def __init__(self, real):
        self.real = real

    def create_module(self, spec):
        return self.real.create_module(spec)

    def exec_module(self, module):
        while not os.path.exists(HOLD):
            time.sleep(0.02)
        self.real.exec_module(module)


class _Hold:
    def find_spec(self, name, path=None, target=None):
        if name != "anthropic":
            return None
        sys.meta_path.remove(self)
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        spec.loader = _Held(spec.loader)
        return spec


if HOLD:
    sys.meta_path.insert(0, _Hold())
"""


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    folder = tmp_path / "watch"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(_WATCH)
    env = dict(os.environ, GITMEM_TEST_LOADED=str(tmp_path / "loaded"), **extra)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), env.get("PYTHONPATH")]))
    return env


def _loaded(tmp_path: Path) -> list[str]:
    return (tmp_path / "loaded").read_text().split()


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "globex.md").write_text("# Globex\n\n## Budget\n\nQ3 budget: 30k\n")
    return folder


WRITE = ["acme", "--old", "", "--new", "## Budget\n\n30k\n", "--section", "budget"]
WRITE += ["--keywords", "budget", "--summary", "Q3 budget"]


@pytest.mark.parametrize(
    "args",
    [
        ["import", "{notes}", "--dry-run"],
        ["import", "{notes}"],
        ["write", *WRITE],
        ["index"],
        ["status"],
        ["log"],
        ["search", "budget"],
        ["review"],
    ],
)
def test_a_command_that_never_calls_the_model_loads_no_sdk_mcp_or_rich(
    tmp_path: Path, client: Path, notes: Path, args: list[str]
) -> None:
    gm("-C", str(client), "write", *WRITE[:1], "--old", "", "--new", "## Risks\n\nnone\n",
       "--section", "risks", "--keywords", "risks", "--summary", "no risks")  # fmt: skip
    words = [a.replace("{notes}", str(notes)) for a in args]
    proc = subprocess.run(
        [GITMEM, "-C", str(client), *words],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert _loaded(tmp_path) == []


def _read_until(fd: int, want: bytes, timeout: float = 60) -> bytes:
    got = b""
    deadline = time.monotonic() + timeout
    while want not in got:
        left = deadline - time.monotonic()
        assert left > 0, f"no {want!r}; the terminal shows {got!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            got += os.read(fd, 65536)
    return got


def test_chat_shows_its_prompt_while_the_sdk_is_still_loading(tmp_path: Path, client: Path) -> None:
    hold = tmp_path / "sdk-may-load"
    with FakeAnthropicServer(QueueModel(["Hello from the model."])) as api:
        env = _env(
            tmp_path,
            GITMEM_TEST_HOLD=str(hold),
            ANTHROPIC_API_KEY="test",
            ANTHROPIC_BASE_URL=api.base_url,
            TERM="xterm",
        )
        master, slave = pty.openpty()
        proc = subprocess.Popen(
            [GITMEM, "-C", str(client), "chat"], stdin=slave, stdout=slave, stderr=slave, env=env
        )
        os.close(slave)
        try:
            _read_until(master, b"you>")  # `import anthropic` is held: the prompt came first
            os.write(master, b"hi\r")
            hold.touch()
            _read_until(master, b"Hello from the model.")
            _read_until(master, b"you>")
            os.write(master, b"\x04")  # Ctrl-D ends the session
            assert proc.wait(timeout=60) == 0
        finally:
            proc.kill()
            os.close(master)
    assert "anthropic" in _loaded(tmp_path)


@pytest.mark.parametrize("args", [["index"], ["show", "acme"], ["log"], ["commit"]])
def test_index_show_log_and_the_hooks_load_no_search_review_sync_or_rich(
    tmp_path: Path, client: Path, args: list[str]
) -> None:
    """Issue 32, point 4: the commands an agent's harness runs most, and a person's
    ``git commit`` through gitmem's hooks, import none of the heavy parts."""
    gm("-C", str(client), "write", *WRITE)
    env = _env(tmp_path, GITMEM_TEST_WATCH="gitmem.search gitmem.review gitmem.sync rich")
    if args == ["commit"]:
        card = client / "cards" / "acme.md"
        card.write_text(card.read_text() + "- typed by hand\n")
        # a trailer of gitmem's: the hook runs gitmem's checks in Python
        message = "acme: a note by hand\n\nGitmem-Card: acme\n"
        cmd = ["git", "-C", str(client), "commit", "-qam", message]
    else:
        cmd = [GITMEM, "-C", str(client), *args]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "loaded").exists()  # the watcher ran (a hook's Python, for a commit)
    assert _loaded(tmp_path) == []


def test_search_loads_no_landing_review_sync_or_rich(tmp_path: Path, client: Path) -> None:
    """Issue 32, point 4: ``gitmem search`` reads; it loads none of what ends a session
    or lands commits (``review.session_branches``, ``ops.land``), review, sync or rich."""
    gm("-C", str(client), "write", *WRITE)
    watch = "gitmem.ops.land gitmem.review gitmem.sync rich"
    env = _env(tmp_path, GITMEM_TEST_WATCH=watch)
    cmd = [GITMEM, "-C", str(client), "search", "budget"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "acme" in proc.stdout
    assert _loaded(tmp_path) == []
