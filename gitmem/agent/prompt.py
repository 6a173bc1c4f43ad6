"""The request laid out for the cache (DESIGN §6): tools, system A+B | I | S, messages C.

Four breakpoints, never more: the A+B system block (which also covers the tools
before it), the I block, the S block, and the last content block of the newest
message. Every block is a pure function of its content, so an unchanged layer
hashes the same on every call and the API reads it from the cache.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from typing import Any

from gitmem.agent.tools import TOOLS
from gitmem.index.framing import SYNTHESIS_TAG, framed, neutral


def rules_text() -> str:
    """Layer B's text, shipped with the package (the same for every client)."""
    return resources.files("gitmem").joinpath("rules.md").read_text("utf-8")


@dataclass(frozen=True)
class Layers:
    """The texts of the cached layers for one request."""

    persona: str  # A
    rules: str  # B
    index: str  # I
    synthesis: str  # S


def layer_hash(text: str) -> str:
    """A layer's id in the usage log: two requests with the same id sent the same text."""
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _cached(block: dict[str, Any], ttl: str) -> dict[str, Any]:
    control: dict[str, Any] = {"type": "ephemeral"}
    if ttl == "1h":
        control["ttl"] = "1h"
    return {**block, "cache_control": control}


def system_blocks(layers: Layers, ttl: str = "5m") -> list[dict[str, Any]]:
    # The persona and the synthesis are memory content: no layer tag of theirs survives.
    ab = f"{layers.rules.rstrip()}\n\n# Persona\n\n{neutral(layers.persona.strip())}\n"
    synthesis = framed(SYNTHESIS_TAG, layers.synthesis)
    return [
        _cached({"type": "text", "text": ab}, ttl),
        _cached({"type": "text", "text": layers.index}, ttl),
        _cached({"type": "text", "text": synthesis}, ttl),
    ]


def with_breakpoint(messages: list[dict[str, Any]], ttl: str = "5m") -> list[dict[str, Any]]:
    """``messages`` with breakpoint 4 on the newest content block (only that block is
    copied: the conversation grows every turn, a deep copy would too)."""
    if not messages:
        return []
    content = messages[-1]["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    blocks[-1] = _cached(blocks[-1], ttl)
    return [*messages[:-1], {**messages[-1], "content": blocks}]


def request(
    model: str, max_tokens: int, layers: Layers, messages: list[dict[str, Any]], ttl: str = "5m"
) -> dict[str, Any]:
    """Keyword arguments for ``client.messages.create``/``stream``."""
    return {
        "model": model,
        "max_tokens": max_tokens,
        "tools": TOOLS,
        "system": system_blocks(layers, ttl),
        "messages": with_breakpoint(messages, ttl),
    }


def as_sent(block: Any) -> dict[str, Any]:
    """A response's content block as the next request sends it back: its API fields only."""
    data = block.model_dump(exclude_none=True) if hasattr(block, "model_dump") else dict(block)
    keep = {"text": ("type", "text"), "tool_use": ("type", "id", "name", "input")}
    fields = keep.get(data.get("type", ""))
    return {k: data[k] for k in fields if k in data} if fields else data
