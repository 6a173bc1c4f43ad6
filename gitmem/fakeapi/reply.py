"""What a scripted model returns: content blocks and a stop reason."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from . import tokens

StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal"]


@dataclass(frozen=True)
class TextBlock:
    """A ``text`` content block."""

    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True)
class ToolUseBlock:
    """A ``tool_use`` content block; ``id`` is assigned by the server when empty."""

    name: str
    input: dict[str, Any]
    id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": self.input}


ContentBlock = TextBlock | ToolUseBlock


@dataclass(frozen=True)
class Reply:
    """A model turn.  Build with ``Reply.text(...)`` or ``Reply.tool_use(...)``."""

    content: list[ContentBlock] = field(default_factory=list)
    stop_reason: StopReason = "end_turn"

    @classmethod
    def text(cls, text: str, stop_reason: StopReason = "end_turn") -> Reply:
        """A reply with one text block."""
        return cls([TextBlock(text)], stop_reason)

    @classmethod
    def tool_use(
        cls, name: str, input: dict[str, Any], *, id: str = "", preamble: str | None = None
    ) -> Reply:
        """A reply calling one tool (optionally after a short text)."""
        content: list[ContentBlock] = [TextBlock(preamble)] if preamble else []
        content.append(ToolUseBlock(name, input, id))
        return cls(content, "tool_use")

    def content_dicts(self) -> list[dict[str, Any]]:
        """The content as API JSON."""
        return [block.to_dict() for block in self.content]


def fit_to_max_tokens(
    content: list[dict[str, Any]], max_tokens: int
) -> tuple[list[dict[str, Any]], bool]:
    """Cut ``content`` to ``max_tokens`` output tokens.

    Returns the content that fits and whether anything was cut.  A text block
    is shortened; a tool call that does not fit is dropped.
    """
    kept: list[dict[str, Any]] = []
    budget = max_tokens
    for block in content:
        cost = tokens.block_tokens(block)
        if cost <= budget:
            kept.append(block)
            budget -= cost
            continue
        if block.get("type") == "text" and budget > tokens.BLOCK_OVERHEAD:
            room = (budget - tokens.BLOCK_OVERHEAD) * tokens.BYTES_PER_TOKEN
            text = str(block["text"]).encode("utf-8")[:room].decode("utf-8", errors="ignore")
            kept.append({**block, "text": text})
        return kept, True
    return kept, False
