"""``gitmem chat`` in a terminal: rich rendering of the agent's events, readline input.

The agent knows nothing of this: it reports a turn through ``AgentEvents`` and this
screen shows it -- a status line while the request is out (and why it is retried), the
reply as Markdown while it streams, one line per tool call, a footer of tokens and cost.
Lines starting with "/" are commands (``chat_commands``), never sent to the model.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown
from rich.status import Status
from rich.text import Text

from gitmem.agent import chat_commands, chat_view
from gitmem.agent.events import AgentEvents, ResponseUsage, ToolCall
from gitmem.agent.session import AgentSession

from ..errors import GitmemError
from ..wording import visible

PROMPT = "\001\033[1;36m\002you>\001\033[0m\002 "  # \001 \002: readline's "no width" marks
HISTORY_LINES = 1000


class Screen(AgentEvents):
    """Shows each turn as it happens; at most one rich live display at a time."""

    def __init__(self, console: Console, *, footer: bool = True, simulated: bool = False) -> None:
        self.console, self.footer, self.simulated = console, footer, simulated
        self.status: Status | None = None
        self.live: Live | None = None
        self.buf = ""
        self.totals = chat_view.TurnTotals()
        self.requests = 0  # the model requests of this turn so far

    # -- the live parts -----------------------------------------------------------------
    def _say(self, what: str) -> None:
        self._end_text()
        if self.status is None:
            self.status = self.console.status(Text(what, style="dim"), spinner="dots")
            self.status.start()
        else:
            self.status.update(Text(what, style="dim"))

    def _quiet(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def _end_text(self) -> None:
        if self.live is not None:
            self.live.update(Markdown(visible(self.buf)), refresh=True)
            self.live.stop()
            self.live = None
        self.buf = ""

    def close(self) -> None:
        self._quiet()
        self._end_text()

    # -- AgentEvents ----------------------------------------------------------------------
    def waiting(self, model: str) -> None:
        self.requests += 1
        self._say("waiting for the simulated model…" if self.simulated else f"waiting for {model}…")

    def retrying(self, why: str) -> None:
        """From the HTTP client, before the SDK retries a request. The SDK counts retries
        per request, so a later request of the turn says it is one: its count starts again."""
        self._say(f"after the tool calls, {why}" if self.requests > 1 else why)

    def text(self, chunk: str) -> None:
        self._quiet()
        if self.live is None:
            self.live = Live(console=self.console, auto_refresh=False, vertical_overflow="visible")
            self.live.start()
        self.buf += chunk
        self.live.update(Markdown(visible(self.buf)), refresh=True)

    def text_end(self) -> None:
        self._end_text()

    def tool(self, call: ToolCall) -> None:
        self.close()
        style = "red" if call.is_error else "cyan"
        self.console.print(Text(visible("  " + chat_view.tool_line(call)), style=style))

    def response(self, usage: ResponseUsage) -> None:
        self.close()
        self.totals.add(usage)

    def turn_end(self) -> None:
        self.close()
        if self.footer and self.totals.requests:
            label = "simulated model · " if self.simulated else ""
            self.console.print(Text("  " + label + self.totals.footer(), style="dim"))
        elif self.simulated:
            self.console.print(Text("  simulated model", style="dim"))
        self.totals = chat_view.TurnTotals()
        self.requests = 0
        self.console.print()

    # -- the rest of the screen ---------------------------------------------------------
    def warn(self, message: str) -> None:
        self.close()
        self.console.print(Text(visible(f"gitmem: warning: {message}"), style="yellow"))

    def banner(self, agent: AgentSession) -> None:
        cfg = agent.cfg
        shown = "simulated (the demo's scripted stand-in)" if self.simulated else cfg.model
        lines = chat_view.banner(cfg.client, shown, agent.session.id, cfg.review)
        self.console.print(Text(lines[0], style="bold"))
        for line in lines[1:]:
            self.console.print(Text(line, style="dim"))
        if self.simulated:
            from gitmem.fakeapi.rules import LABEL, USAGE

            self.console.print(Text(LABEL, style="bold yellow"))
            width = max(len(said) for said, _ in USAGE)
            for said, does in USAGE:
                self.console.print(Text(f"  {said:<{width}}  {does}", style="yellow"))
        self.console.print()

    def _lines(self, text: str) -> None:
        """Text as it is (the terminal wraps it, rich does not re-flow it)."""
        self.console.print(Text(visible(text.rstrip("\n"))), soft_wrap=True)

    def command(self, line: str, agent: AgentSession) -> bool:
        """A slash command; False ends the session."""
        name = line.split()[0].lower()
        repo, session = agent.repo, agent.session
        try:
            if name in ("/end", "/quit", "/exit"):
                return False
            if name == "/help":
                for cmd, what in chat_commands.HELP:
                    self.console.print(Text.assemble((f"  {cmd:8}", "bold"), what))
            elif name == "/usage":
                self._lines(chat_commands.usage_text(repo, session))
            elif name == "/index":
                self._lines(chat_commands.index_text(repo, session))
            elif name == "/review":
                for text, style in chat_commands.review_lines(repo, session):
                    self.console.print(Text(visible(text), style=style or ""), soft_wrap=True)
            elif name == "/undo":
                undone = chat_commands.undo_last(repo, session)
                agent.note(undone.note())
                self.console.print(Text(visible(_undone(undone)), style="cyan"))
            else:
                self.console.print(Text(f"unknown command {name}; /help lists them", style="red"))
        except GitmemError as err:
            self.console.print(Text(visible(f"gitmem: error: {err}"), style="red"))
        self.console.print()
        return True


def read_lines(history: Path | None) -> Iterator[str]:
    """Lines typed at the prompt, with line editing and history; ends on Ctrl-D.

    Ctrl-C at the prompt drops the line being typed, as in a shell.
    """
    try:
        import readline
    except ImportError:  # not every Python has it: input() still works, without history
        readline = None  # type: ignore[assignment]
    if readline is not None and history is not None:
        with contextlib.suppress(OSError):
            history.touch(mode=0o600)  # append_history_file needs the file to exist
            readline.read_history_file(history)
        readline.set_history_length(HISTORY_LINES)
    while True:
        try:
            line = input(PROMPT if readline is not None else "you> ")
        except EOFError:
            print()
            return
        except KeyboardInterrupt:
            print()
            continue
        if readline is not None and history is not None and line.strip():
            with contextlib.suppress(OSError):
                readline.append_history_file(1, history)
                readline.set_history_length(HISTORY_LINES)
        yield line


def history_file(repo: Any) -> Path:
    path: Path = repo.private_dir("chat") / "history"
    return path


def _undone(u: chat_commands.Undone) -> str:
    return f"undid the edit of {u.where} ({u.reverted[:7]} reverted by {u.commit[:7]})"
