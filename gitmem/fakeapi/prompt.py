"""A request's prompt as the ordered list of cacheable blocks.

The prefix order is tools -> system -> messages.  The blocks are each tool
definition, each system block, and each content block of each message (a
message whose content is a string is one block).  A top-level
``cache_control`` (automatic caching) marks the last block as a breakpoint
unless it already is one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from . import tokens

Section = Literal["tools", "system", "messages"]


@dataclass(frozen=True)
class PromptBlock:
    """One block of the prompt prefix."""

    section: Section
    payload: str
    """Canonical content without ``cache_control``; equal payloads mean equal blocks."""
    tokens: int
    cache_control: Mapping[str, Any] | None
    message_index: int = -1
    """Index of the message holding the block (``-1`` for tools and system)."""


def _cache_control(block: Mapping[str, Any]) -> Mapping[str, Any] | None:
    value = block.get("cache_control")
    return value if isinstance(value, Mapping) else None


def prompt_blocks(request: Mapping[str, Any]) -> list[PromptBlock]:
    """The blocks of ``request`` in prefix order, with their token costs."""
    blocks: list[PromptBlock] = []
    for tool in request.get("tools") or []:
        if isinstance(tool, Mapping):
            payload = tokens.canonical_json(tokens.without_cache_control(tool))
            blocks.append(
                PromptBlock("tools", payload, tokens.tool_tokens(tool), _cache_control(tool))
            )
    for block in tokens.system_blocks(request.get("system")):
        blocks.append(_content_block("system", block, None, -1))
    for index, message in enumerate(request.get("messages") or []):
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        for block in tokens.content_blocks(message.get("content")):
            blocks.append(_content_block("messages", block, role, index))
    automatic = request.get("cache_control")
    if isinstance(automatic, Mapping) and blocks and blocks[-1].cache_control is None:
        last = blocks[-1]
        blocks[-1] = PromptBlock(
            last.section, last.payload, last.tokens, automatic, last.message_index
        )
    return blocks


def _content_block(
    section: Section, block: dict[str, Any], role: object, message_index: int
) -> PromptBlock:
    cost = tokens.block_tokens(block)
    payload = tokens.canonical_json([role, tokens.without_cache_control(block)])
    return PromptBlock(section, payload, cost, _cache_control(block), message_index)


def total_tokens(blocks: list[PromptBlock]) -> int:
    """Total input tokens of a prompt."""
    return sum(block.tokens for block in blocks)


def settings_payload(request: Mapping[str, Any]) -> str:
    """Request fields that change how messages are processed (not tools or system).

    Changing them invalidates cached message blocks but keeps the tools and
    system prefix, as documented for ``tool_choice`` and ``thinking``.
    """
    return tokens.canonical_json([request.get("tool_choice"), request.get("thinking")])


def prefix_keys(model: str, blocks: list[PromptBlock], settings: str) -> list[str]:
    """Cache key of the prefix ending at each block: a hash chain over model and blocks."""
    digest = hashlib.sha256(tokens.canonical_json(["model", model]).encode())
    keys: list[str] = []
    settings_mixed = False
    for block in blocks:
        if block.section == "messages" and not settings_mixed:
            digest.update(b"\x00settings\x00" + settings.encode())
            settings_mixed = True
        digest.update(b"\x00" + block.section.encode() + b"\x00" + block.payload.encode())
        keys.append(digest.copy().hexdigest())
    return keys


def breakpoints(blocks: list[PromptBlock]) -> list[int]:
    """Indexes of the blocks that carry ``cache_control``."""
    return [index for index, block in enumerate(blocks) if block.cache_control is not None]
