"""Shared constants and prompt builders for the fake API tests."""

from __future__ import annotations

from typing import Any

MODEL = "claude-sonnet-4-6"  # minimum cacheable prefix: 1024 tokens
EPHEMERAL: dict[str, Any] = {"type": "ephemeral"}


def text_of(tokens: int, char: str = "x") -> str:
    """Text that the fake tokenizer counts as exactly ``tokens`` tokens."""
    return char * (4 * tokens)


def block(tokens: int, char: str = "x", *, cache: str | None = None) -> dict[str, Any]:
    """A text block of ``tokens`` + 3 tokens, optionally a breakpoint with TTL ``cache``."""
    result: dict[str, Any] = {"type": "text", "text": text_of(tokens, char)}
    if cache is not None:
        result["cache_control"] = (
            dict(EPHEMERAL) if cache == "5m" else {"type": "ephemeral", "ttl": cache}
        )
    return result


def total_input(usage: Any) -> int:
    return int(
        usage.input_tokens
        + (usage.cache_creation_input_tokens or 0)
        + (usage.cache_read_input_tokens or 0)
    )
