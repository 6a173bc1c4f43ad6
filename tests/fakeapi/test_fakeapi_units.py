"""Tokenizer, clock, minimum-length table and SSE framing, without a server."""

from __future__ import annotations

import pytest

from gitmem.fakeapi import ManualClock
from gitmem.fakeapi.sse import chunk, encode
from gitmem.fakeapi.tokens import block_tokens, text_tokens, tool_tokens
from gitmem.models import DEFAULT_MIN_CACHEABLE_TOKENS, minimum_cacheable_tokens


def test_text_tokens_is_ceil_of_utf8_bytes_over_four() -> None:
    assert [text_tokens(t) for t in ("", "a", "abcd", "abcde")] == [0, 1, 1, 2]
    assert text_tokens("日本語") == 3  # 9 bytes
    assert text_tokens("é" * 4) == 2  # 8 bytes


def test_block_and_tool_costs() -> None:
    assert (
        block_tokens({"type": "text", "text": "abcd", "cache_control": {"type": "ephemeral"}}) == 4
    )
    tool = {"name": "t", "input_schema": {"type": "object"}}
    # '{"input_schema":{"type":"object"},"name":"t"}' is 45 bytes -> 12 tokens, + 8
    assert tool_tokens(tool) == 20
    assert tool_tokens({**tool, "cache_control": {"type": "ephemeral"}}) == 20
    use = {"type": "tool_use", "id": "x", "name": "n", "input": {}}
    # '{"id":"x","input":{},"name":"n","type":"tool_use"}' is 50 bytes -> 13 tokens, + 3
    assert block_tokens(use) == 16


def test_minimum_cacheable_tokens_table() -> None:
    assert minimum_cacheable_tokens("claude-sonnet-4-6") == 1024
    assert minimum_cacheable_tokens("claude-haiku-4-5-20251001") == 4096
    assert minimum_cacheable_tokens("claude-opus-4-5-20251101") == 4096
    assert minimum_cacheable_tokens("claude-opus-5") == 512
    assert minimum_cacheable_tokens("claude-3-5-haiku-latest") == 2048
    assert minimum_cacheable_tokens("some-future-model") == DEFAULT_MIN_CACHEABLE_TOKENS == 1024


def test_manual_clock() -> None:
    clock = ManualClock(10.0)
    assert clock() == 10.0
    assert clock.advance(2.5) == 12.5
    assert clock() == 12.5
    with pytest.raises(ValueError):
        clock.advance(-1)


def test_sse_framing() -> None:
    assert encode("ping", {"type": "ping"}) == b'event: ping\ndata: {"type": "ping"}\n\n'
    assert chunk(b"abc") == b"3\r\nabc\r\n"
    assert chunk(b"") == b"0\r\n\r\n"
