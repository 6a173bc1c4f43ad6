"""``--simulated`` (issue 24, point 3): chat, ask and consolidate with the demo's scripted
model and no API key, through the installed ``gitmem`` (a pty for the chat), labelled as
simulated on every screen; what the model understands is in --help and docs/chat.md."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from gitmem.fakeapi.rules import LABEL, USAGE

from helpers import git

GITMEM = str(Path(sys.executable).with_name("gitmem"))
DOCS = Path(__file__).parent.parent / "docs"


def _no_key() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    return env | {"TERM": "dumb", "COLUMNS": "160"}


def _run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [GITMEM, *args], input=stdin, capture_output=True, text=True, check=False,
        timeout=120, env=_no_key(),
    )  # fmt: skip


def _until(fd: int, shown: bytes, prompts: int) -> bytes:
    deadline = time.monotonic() + 60
    while shown.count(b"you>") < prompts:
        assert time.monotonic() < deadline, shown.decode(errors="replace")
        if select.select([fd], [], [], 1)[0]:
            shown += os.read(fd, 65536)
    return shown


def test_a_chat_in_a_terminal_without_a_key_is_simulated_and_says_so(client: Path) -> None:
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [GITMEM, "-C", str(client), "chat", "--simulated"],
        stdin=slave, stdout=slave, stderr=slave, env=_no_key(),
    )  # fmt: skip
    os.close(slave)
    try:
        shown = _until(master, b"", 1)
        os.write(master, b"remember acme-website Budget: Q3 budget is 40k\r")
        shown = _until(master, shown, 2)
        os.write(master, b"\x04")
        assert proc.wait(timeout=60) == 0
        while select.select([master], [], [], 1)[0]:
            try:
                shown += os.read(master, 65536) or b""
            except OSError:
                break
    finally:
        proc.kill()
        os.close(master)
    screen = " ".join(shown.decode().split())  # rich wraps lines at the terminal's width
    assert "model simulated" in screen and LABEL in screen
    for said, _does in USAGE:
        assert said in screen
    assert "Saved." in screen and "simulated model · " in screen  # the turn's footer
    assert "(simulated model) ended: 1 memory edit landed on main" in screen
    assert "Q3 budget is 40k" in git(client, "show", "main:cards/acme-website.md")


def test_a_piped_chat_and_ask_without_a_key_are_simulated_and_say_so(client: Path) -> None:
    chat = _run("-C", str(client), "chat", "--simulated", stdin="remember acme Budget: 40k\n")
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout == "Saved.\n"
    assert chat.stderr.splitlines()[0] == f"gitmem: {LABEL}"
    assert "(simulated model) ended" in chat.stderr
    asked = _run("-C", str(client), "ask", "--simulated", "recall acme budget", "--json")
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["simulated"] is True
    assert asked.stderr.splitlines()[0] == f"gitmem: {LABEL}"


def test_consolidate_without_a_key_is_simulated_and_says_so(client: Path) -> None:
    _run("-C", str(client), "chat", "--simulated", stdin="remember acme Budget: 40k\n")
    proc = _run("-C", str(client), "consolidate", "--simulated")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("(simulated model) ")
    assert proc.stderr.splitlines()[0] == f"gitmem: {LABEL}"


def test_what_the_simulated_model_understands_is_in_help_and_docs() -> None:
    shown = _run("chat", "--help").stdout
    docs = (DOCS / "chat.md").read_text()
    for said, does in USAGE:
        assert said in shown and does in shown
        assert f"`{said}`" in docs and does in docs
    for command in ("chat", "ask", "consolidate"):
        assert "--simulated" in _run(command, "--help").stdout
