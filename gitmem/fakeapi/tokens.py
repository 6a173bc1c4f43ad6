"""Deterministic fake tokenizer.

The rule, used for billing, ``count_tokens`` and output tokens alike:

* a piece of text costs ``ceil(len(text.encode("utf-8")) / 4)`` tokens;
* every content block (a system block, a message content block, a block of a
  reply) costs ``BLOCK_OVERHEAD`` (3) tokens plus the cost of its payload;
  a message whose ``content`` is a plain string is one text block;
* a text block's payload is its ``text``; any other block's payload is its
  canonical JSON (sorted keys, no spaces) without ``cache_control``;
* every tool definition costs ``TOOL_OVERHEAD`` (8) tokens plus the cost of
  its canonical JSON without ``cache_control``.

Nothing else is billed: the total input of a request is the sum over its tool
definitions, system blocks and message blocks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

BYTES_PER_TOKEN = 4
BLOCK_OVERHEAD = 3
TOOL_OVERHEAD = 8


def text_tokens(text: str) -> int:
    """``ceil(utf-8 bytes / 4)``."""
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)


def canonical_json(value: object) -> str:
    """Stable JSON text: sorted keys, compact separators, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def without_cache_control(block: Mapping[str, Any]) -> dict[str, Any]:
    """A shallow copy of ``block`` without its ``cache_control`` key."""
    return {key: value for key, value in block.items() if key != "cache_control"}


def block_payload(block: Mapping[str, Any]) -> str:
    """The text that is billed for a content block."""
    if block.get("type") == "text" and isinstance(block.get("text"), str):
        return str(block["text"])
    return canonical_json(without_cache_control(block))


def block_tokens(block: Mapping[str, Any]) -> int:
    """Tokens of one content block."""
    return BLOCK_OVERHEAD + text_tokens(block_payload(block))


def tool_tokens(tool: Mapping[str, Any]) -> int:
    """Tokens of one tool definition."""
    return TOOL_OVERHEAD + text_tokens(canonical_json(without_cache_control(tool)))


def content_blocks(content: object) -> list[dict[str, Any]]:
    """A message ``content`` (string or list of blocks) as a list of blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [dict(block) for block in content if isinstance(block, Mapping)]
    return []


def system_blocks(system: object) -> list[dict[str, Any]]:
    """The ``system`` parameter (absent, string or list of blocks) as a list of blocks."""
    if system is None:
        return []
    if isinstance(system, str):
        return [{"type": "text", "text": system}] if system else []
    return content_blocks(system)


def output_tokens(content: list[dict[str, Any]]) -> int:
    """Output tokens of a reply's content (at least 1, like the real API)."""
    return max(1, sum(block_tokens(block) for block in content))
