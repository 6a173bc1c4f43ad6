"""What a turn of an agent session lets a UI show, as it happens: the tool calls, each
response's usage, the streamed text."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """A memory tool the model called in this turn, with what it returned."""

    name: str
    input: dict[str, Any]
    is_error: bool
    result: str


@dataclass(frozen=True)
class ResponseUsage:
    """One model response's tokens and cost (the usage line it appended)."""

    input_tokens: int  # everything sent: uncached + written to the cache + read from it
    cache_read_tokens: int
    output_tokens: int
    cost_usd: float
    uncached_cost_usd: float


class AgentEvents:
    """What a turn lets a UI show, as it happens. Every method does nothing here: a UI
    overrides the ones it shows. The agent never prints."""

    def waiting(self, model: str) -> None:
        """A request is on its way to ``model``; nothing of the answer has arrived."""

    def text(self, chunk: str) -> None:
        """More of the current text block."""

    def text_end(self) -> None:
        """The current text block is complete."""

    def tool(self, call: ToolCall) -> None:
        """A tool call the model made has run."""

    def response(self, usage: ResponseUsage) -> None:
        """A response is complete (a turn makes one per tool round)."""

    def turn_end(self) -> None:
        """The model ended its turn."""


class TextOnly(AgentEvents):
    """Plain text for a pipe: each text block's chunks as they come, a new block on a new
    line ("Saving that." then "Done.", not "Saving that.Done.")."""

    def __init__(self, on_text: Callable[[str], None]) -> None:
        self.on_text = on_text
        self.ended = False  # a block ended and nothing followed it yet
        self.last = ""  # the last character written

    def text(self, chunk: str) -> None:
        if not chunk:
            return
        if self.ended and self.last != "\n":
            self.on_text("\n")
        self.ended = False
        self.last = chunk[-1]
        self.on_text(chunk)

    def text_end(self) -> None:
        self.ended = True
