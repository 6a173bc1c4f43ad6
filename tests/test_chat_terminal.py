"""`gitmem chat` in a real terminal: tmux runs it against the fake API, and the screens it
draws are compared with tests/expected/chat_*.txt (UPDATE_EXPECTED=1 rewrites them)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gitmem.fakeapi import FakeAnthropicServer, Fault, QueueModel, Reply, RuleModel

from helpers import git

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="needs tmux (.ci/run installs it)"
)

GITMEM = str(Path(sys.executable).with_name("gitmem"))
EXPECTED = Path(__file__).parent / "expected"
WIDTH, HEIGHT = 100, 60


class Terminal:
    """One tmux server of our own (its own socket), one window running a command."""

    def __init__(self, socket: Path) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        proc = subprocess.run(
            ["tmux", "-S", str(self.socket), "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def start(self, command: str) -> None:
        # The pane stays after the command ends, so its last screen can still be read.
        self.tmux(
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            str(WIDTH),
            "-y",
            str(HEIGHT),
            f'{command}; echo "[exit $?]"; sleep 600',
        )

    def screen(self) -> str:
        lines = [ln.rstrip() for ln in self.tmux("capture-pane", "-p", "-t", "t").splitlines()]
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines) + "\n"

    def wait_for(self, ready: Callable[[str], bool], what: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen()
            if ready(shown):
                return shown
            assert time.monotonic() < deadline, f"no {what} within {timeout}s; screen:\n{shown}"
            time.sleep(0.05)

    def type(self, line: str) -> None:
        self.tmux("send-keys", "-t", "t", "-l", line)
        self.tmux("send-keys", "-t", "t", "Enter")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "t", *keys)

    def prompts(self, n: int) -> Callable[[str], bool]:
        """The screen shows ``n`` prompts, the last one empty: the chat waits for input."""

        def ready(shown: str) -> bool:
            lines = shown.splitlines()
            return sum(ln.startswith("you>") for ln in lines) == n and lines[-1] == "you>"

        return ready


@pytest.fixture
def term(tmp_path: Path) -> Iterator[Terminal]:
    t = Terminal(tmp_path / "tmux.sock")
    yield t
    subprocess.run(["tmux", "-S", str(t.socket), "kill-server"], capture_output=True, check=False)


def chat_command(client: Path, api: FakeAnthropicServer, *args: str) -> str:
    env = {
        "ANTHROPIC_API_KEY": "test",
        "ANTHROPIC_BASE_URL": api.base_url,
        "TERM": "xterm-256color",
    }
    assigns = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    # COLUMNS / LINES from the test run would override the pane's own size.
    return f"env -u COLUMNS -u LINES {assigns} {shlex.quote(GITMEM)} -C {shlex.quote(str(client))} chat {' '.join(args)}"


def check_screen(shown: str, name: str) -> None:
    path = EXPECTED / f"chat_{name}.txt"
    if os.environ.get("REGEN_EXPECTED"):
        path.write_text(shown)
    assert shown == path.read_text(), f"screen differs from {path}:\n{shown}"


BUDGET = "\n## Budget\nQ3 budget is 40k, agreed with Dana on the 2026-11-28 call.\n"
WRITE = {
    "project": "acme-website",
    "old_text": "",
    "new_text": BUDGET,
    "index_entry": {
        "section_id": "budget",
        "keywords": ["budget", "q3", "dana"],
        "summary": "Q3 budget 40k, agreed with Dana on the 2026-11-28 call",
    },
}
REPLIES: list[Reply | str] = [
    Reply.tool_use("write_memory_card", WRITE, preamble="Saving that."),
    "Done: the **budget** is on the card.",
    Reply.tool_use("read_memory_card", {"project": "acme-website", "section_id": "budget"}),
    "From memory:\n\n- Q3 budget: **40k**\n- agreed with *Dana* on the 2026-11-28 call",
    "Noted: the budget is no longer in memory.",
]


def test_a_session_in_a_terminal(client: Path, term: Terminal) -> None:
    model = QueueModel(REPLIES)
    with FakeAnthropicServer(model) as api:
        term.start(chat_command(client, api, "--session", "s1"))
        check_screen(term.wait_for(term.prompts(1), "banner"), "banner")

        term.type("Please remember: the Q3 budget is 40k, agreed with Dana on the call.")
        term.wait_for(term.prompts(2), "first reply")
        term.type("What is the budget?")
        check_screen(term.wait_for(term.prompts(3), "second reply"), "replies")

        term.type("/usage")
        term.wait_for(term.prompts(4), "/usage")
        term.type("/index")
        term.wait_for(term.prompts(5), "/index")
        term.type("/undo")
        term.wait_for(term.prompts(6), "/undo")
        term.type("Is the budget saved?")
        term.wait_for(term.prompts(7), "the reply after /undo")
        term.type("/end")
        shown = term.wait_for(lambda s: "[exit 0]" in s, "the end of the session")
        start = shown.index("you> /usage")
        check_screen(shown[start:], "commands")
    # The model hears of the undo with the next turn, in a block of its own.
    told = model.seen[-1]["messages"][-1]["content"]
    assert [b["text"] for b in told] == [
        "Is the budget saved?",
        "<gitmem-note>The person undid your edit of acme-website § budget (commit "
        f"{git(client, 'log', '--format=%h', '--grep=^acme-website:', 'main').strip()}) with /undo; "
        "memory no longer has it. Read the card again before relying on it.</gitmem-note>",
    ]
    assert "Q3 budget" in git(client, "show", "main~3:cards/acme-website.md")
    assert not (client / "cards/acme-website.md").exists()  # /undo reverted the one edit
    # the undo is the session's: the log names it beside the edit it undid
    edit = git(client, "log", "-1", "--format=%B", "--grep=^acme-website:", "main")
    undo = git(client, "log", "-1", "--format=%B", "--grep=^Revert", "main").splitlines()
    made_in = next(ln for ln in edit.splitlines() if ln.startswith("Gitmem-Session: "))
    assert made_in in undo and "Gitmem-Actor: cli" in undo
    history = (client / ".git/gitmem/chat/history").read_text()
    assert "What is the budget?" in history and "/undo" in history


def _showing(text: str) -> Callable[[str], bool]:
    return lambda screen: text in screen


@pytest.mark.slow
def test_status_line_while_waiting_and_retrying_then_history(client: Path, term: Terminal) -> None:
    with FakeAnthropicServer(RuleModel()) as api:
        term.start(chat_command(client, api))
        term.wait_for(term.prompts(1), "banner")
        api.faults.push(Fault.delay(2.0))
        term.type("remember acme Budget: 40k")
        waiting = term.wait_for(lambda s: "waiting for claude-sonnet-5-5…" in s, "waiting line")
        assert "Saved." not in waiting
        after = term.wait_for(term.prompts(2), "reply")
        assert "waiting for" not in after and "Saved." in after

        api.faults.push(Fault.status(529, retry_after=2.0))
        term.type("recall acme budget")
        term.wait_for(
            lambda s: "the API answered 529 overloaded; retrying in 2s (1 of 2)" in s, "retry line"
        )
        after = term.wait_for(term.prompts(3), "reply after the retry")
        assert "retrying" not in after and "▸ read acme § budget" in after

        # Two retries of the turn's first request, one of the request after its tool call:
        # the SDK's count starts again, and the line says it is a later request.
        api.faults.push(Fault.status(529, retry_after=1.5), times=2)
        api.faults.push(Fault.delay(0.0))  # the third attempt is answered
        api.faults.push(Fault.status(529, retry_after=1.5))
        term.type("recall acme budget")
        seen = [
            term.wait_for(_showing(want), want)
            for want in (
                "the API answered 529 overloaded; retrying in 1.5s (1 of 2)",
                "the API answered 529 overloaded; retrying in 1.5s (2 of 2)",
                "after the tool calls, the API answered 529 overloaded; retrying in 1.5s (1 of 2)",
            )
        ]
        assert "after the tool calls" not in seen[0] and "after the tool calls" not in seen[1]
        term.wait_for(term.prompts(4), "reply after three retries")
        term.keys("Up")  # history: the last line comes back, editable
        term.wait_for(lambda s: s.splitlines()[-1] == "you> recall acme budget", "history")
        term.keys("BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "Enter")
        shown = term.wait_for(term.prompts(5), "edited line's reply")
        assert "you> recall acme" in shown.splitlines() and "▸ read acme" in shown
        term.keys("C-d")
        shown = term.wait_for(lambda s: "[exit 0]" in s, "the end after Ctrl-D")
        assert "gitmem: session" in shown and "ended" in shown
