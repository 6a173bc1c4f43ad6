"""Prompt-cache accounting seen through the real SDK's usage numbers."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from fakeapi.fakeapi_support import EPHEMERAL, MODEL, block, text_of, total_input
from gitmem.fakeapi import FakeAnthropicServer, ManualClock, QueueModel
from gitmem.fakeapi.tokens import tool_tokens
from gitmem.models import minimum_cacheable_tokens

TOOL: dict[str, Any] = {
    "name": "read_memory_card",
    "description": "Read a memory card.",
    "input_schema": {"type": "object", "properties": {"project": {"type": "string"}}},
}
HI = 4  # "hi" as a user message: 1 token + 3


@pytest.fixture(autouse=True)
def _plenty_of_replies(model: QueueModel) -> None:
    model.push(*["ok"] * 40)


def ask(sdk: anthropic.Anthropic, **request: Any) -> Any:
    request.setdefault("model", MODEL)
    request.setdefault("max_tokens", 16)
    request.setdefault("messages", [{"role": "user", "content": "hi"}])
    return sdk.messages.create(**request).usage


def test_first_call_writes_second_identical_call_reads(sdk: anthropic.Anthropic) -> None:
    system = [block(1200, "s", cache="5m")]
    prefix = tool_tokens(TOOL) + 1203
    first = ask(sdk, tools=[TOOL], system=system)
    assert (first.cache_creation_input_tokens, first.cache_read_input_tokens) == (prefix, 0)
    assert first.input_tokens == HI
    assert first.cache_creation.ephemeral_5m_input_tokens == prefix
    second = ask(sdk, tools=[TOOL], system=system)
    assert (second.cache_creation_input_tokens, second.cache_read_input_tokens) == (0, prefix)
    assert second.input_tokens == HI


def test_streamed_usage_reports_the_same_cache_numbers(sdk: anthropic.Anthropic) -> None:
    system: Any = [block(1100, "s", cache="5m")]
    ask(sdk, system=system)
    with sdk.messages.stream(
        model=MODEL, max_tokens=16, system=system, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        usage = stream.get_final_message().usage
    assert usage.cache_read_input_tokens == 1103
    assert usage.cache_creation_input_tokens == 0
    assert usage.input_tokens == HI


def test_changing_the_last_system_block_keeps_the_earlier_breakpoint(
    sdk: anthropic.Anthropic,
) -> None:
    head = tool_tokens(TOOL) + 1103
    first = ask(
        sdk, tools=[TOOL], system=[block(1100, "a", cache="5m"), block(300, "b", cache="5m")]
    )
    assert first.cache_creation_input_tokens == head + 303
    changed = ask(
        sdk, tools=[TOOL], system=[block(1100, "a", cache="5m"), block(250, "c", cache="5m")]
    )
    assert changed.cache_read_input_tokens == head  # tools + block 1
    assert changed.cache_creation_input_tokens == 253  # the new block 2
    assert changed.input_tokens == HI


def test_prefix_below_the_minimum_is_not_cached(sdk: anthropic.Anthropic) -> None:
    system = [block(500, "s", cache="5m")]
    for _ in range(2):
        usage = ask(sdk, system=system)
        assert usage.cache_creation_input_tokens == 0
        assert usage.cache_read_input_tokens == 0
        assert usage.input_tokens == 503 + HI


def test_minimum_depends_on_the_model(sdk: anthropic.Anthropic) -> None:
    system = [block(2000, "s", cache="5m")]
    assert minimum_cacheable_tokens("claude-haiku-4-5") == 4096
    haiku = ask(sdk, model="claude-haiku-4-5", system=system)
    sonnet = ask(sdk, model=MODEL, system=system)
    assert haiku.cache_creation_input_tokens == 0
    assert sonnet.cache_creation_input_tokens == 2003
    # a cache entry belongs to one model: haiku still cannot read sonnet's entry
    assert ask(sdk, model="claude-haiku-4-5", system=system).cache_read_input_tokens == 0


def test_ttl_expiry_and_refresh_on_hit(sdk: anthropic.Anthropic, clock: ManualClock) -> None:
    system = [block(1100, "s", cache="5m")]
    assert ask(sdk, system=system).cache_creation_input_tokens == 1103
    clock.advance(299)
    assert ask(sdk, system=system).cache_read_input_tokens == 1103  # refreshes the entry
    clock.advance(299)  # 598 s after the write, 299 s after the refresh
    assert ask(sdk, system=system).cache_read_input_tokens == 1103
    clock.advance(301)
    expired = ask(sdk, system=system)
    assert expired.cache_read_input_tokens == 0
    assert expired.cache_creation_input_tokens == 1103


def test_one_hour_ttl(sdk: anthropic.Anthropic, clock: ManualClock) -> None:
    system = [block(1100, "s", cache="1h")]
    first = ask(sdk, system=system)
    assert first.cache_creation.ephemeral_1h_input_tokens == 1103
    assert first.cache_creation.ephemeral_5m_input_tokens == 0
    clock.advance(3000)
    assert ask(sdk, system=system).cache_read_input_tokens == 1103
    clock.advance(3601)
    assert ask(sdk, system=system).cache_read_input_tokens == 0


def test_creation_is_split_by_ttl(sdk: anthropic.Anthropic) -> None:
    usage = ask(sdk, system=[block(1100, "a", cache="1h"), block(200, "b", cache="5m")])
    assert usage.cache_creation.ephemeral_1h_input_tokens == 1103
    assert usage.cache_creation.ephemeral_5m_input_tokens == 203
    assert usage.cache_creation_input_tokens == 1306


def test_1h_breakpoint_after_5m_is_rejected(sdk: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.BadRequestError, match="ttl='1h'"):
        ask(sdk, system=[block(1100, "a", cache="5m"), block(200, "b", cache="1h")])


def _conversation(extra_blocks: int) -> list[Any]:
    """One user turn: a marked block, then ``extra_blocks`` more, the last one marked."""
    content: list[dict[str, Any]] = [{"type": "text", "text": "turn 0", "cache_control": EPHEMERAL}]
    if extra_blocks:
        content[0] = {"type": "text", "text": "turn 0"}
        content += [{"type": "text", "text": f"turn {i}"} for i in range(1, extra_blocks + 1)]
        content[-1] = {**content[-1], "cache_control": EPHEMERAL}
    return [{"role": "user", "content": content}]


@pytest.mark.parametrize(("extra", "hits"), [(20, True), (21, False)])
def test_lookback_reaches_20_blocks_back(sdk: anthropic.Anthropic, extra: int, hits: bool) -> None:
    system = text_of(1100, "s")  # 1103 tokens, not a breakpoint itself
    written = ask(sdk, system=system, messages=_conversation(0))
    assert written.cache_creation_input_tokens == 1103 + 5  # "turn 0" is 2 tokens + 3
    later = ask(sdk, system=system, messages=_conversation(extra))
    if hits:
        assert later.cache_read_input_tokens == 1108
        assert later.cache_creation_input_tokens == total_input(later) - 1108
    else:
        assert later.cache_read_input_tokens == 0
        assert later.cache_creation_input_tokens == total_input(later)


def test_hits_only_where_an_entry_was_written(sdk: anthropic.Anthropic) -> None:
    """Sharing the first blocks is not enough: the API caches at breakpoints only."""
    shared = [block(600, "a"), block(600, "b")]
    ask(sdk, system=[*shared, block(100, "c", cache="5m")])
    other = ask(sdk, system=[*shared, block(100, "d", cache="5m")])
    assert other.cache_read_input_tokens == 0
    assert other.cache_creation_input_tokens == 1309
    # ... while a breakpoint on the shared part, once written, is found by the lookback
    ask(sdk, system=[shared[0], {**shared[1], "cache_control": EPHEMERAL}, block(100, "e")])
    found = ask(sdk, system=[*shared, block(100, "f", cache="5m")])
    assert found.cache_read_input_tokens == 1206
    assert found.cache_creation_input_tokens == 103


def test_automatic_caching_marks_the_last_block(sdk: anthropic.Anthropic) -> None:
    messages: Any = [{"role": "user", "content": text_of(1100, "m")}]
    first = ask(sdk, messages=messages, cache_control={"type": "ephemeral"})
    assert first.cache_creation_input_tokens == 1103
    second = ask(sdk, messages=messages, cache_control={"type": "ephemeral"})
    assert second.cache_read_input_tokens == 1103


def test_growing_conversation_reads_previous_turn(sdk: anthropic.Anthropic) -> None:
    """The usual agent pattern: a breakpoint on the newest message each turn."""
    system: Any = [block(1100, "s", cache="5m")]
    turn1: list[Any] = [
        {"role": "user", "content": [{"type": "text", "text": "first", "cache_control": EPHEMERAL}]}
    ]
    ask(sdk, system=system, messages=turn1)
    turn2 = [
        {"role": "user", "content": [{"type": "text", "text": "first"}]},
        {"role": "assistant", "content": "ok"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "second", "cache_control": EPHEMERAL}],
        },
    ]
    usage = ask(sdk, system=system, messages=turn2)
    assert usage.cache_read_input_tokens == 1103 + 5  # system + "first"
    assert usage.cache_creation_input_tokens == 4 + 5  # "ok" + "second"
    assert usage.input_tokens == 0


def test_changing_tool_choice_keeps_tools_and_system(sdk: anthropic.Anthropic) -> None:
    system: Any = [block(1100, "s", cache="5m")]
    messages: Any = [
        {"role": "user", "content": [{"type": "text", "text": "q", "cache_control": EPHEMERAL}]}
    ]
    ask(sdk, tools=[TOOL], system=system, messages=messages)
    usage = ask(sdk, tools=[TOOL], system=system, messages=messages, tool_choice={"type": "any"})
    assert usage.cache_read_input_tokens == tool_tokens(TOOL) + 1103
    assert usage.cache_creation_input_tokens == 4  # the message block is written again


def test_each_server_is_its_own_organization(
    sdk: anthropic.Anthropic, model: QueueModel, clock: ManualClock
) -> None:
    system = [block(1100, "s", cache="5m")]
    ask(sdk, system=system)
    with FakeAnthropicServer(QueueModel(["ok"]), clock=clock) as other:
        other_sdk = anthropic.Anthropic(api_key="test", base_url=other.base_url, max_retries=0)
        assert ask(other_sdk, system=system).cache_read_input_tokens == 0
        other_sdk.close()
    assert ask(sdk, system=system).cache_read_input_tokens == 1103
