"""Cache diagnostics (``diagnostics.previous_message_id``) parsed by the real SDK."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from anthropic.types import (
    CacheMissMessagesChanged,
    CacheMissModelChanged,
    CacheMissPreviousMessageNotFound,
    CacheMissSystemChanged,
    CacheMissToolsChanged,
    CacheMissUnavailable,
)

from fakeapi.fakeapi_support import MODEL, block
from gitmem.fakeapi import FakeAnthropicServer, QueueModel
from gitmem.fakeapi.tokens import tool_tokens

TOOL_A: dict[str, Any] = {"name": "a", "input_schema": {"type": "object"}}
TOOL_B: dict[str, Any] = {"name": "b", "input_schema": {"type": "object"}}
SYSTEM: list[Any] = [block(1100, "s", cache="5m"), block(300, "t", cache="5m")]
FIRST: list[Any] = [{"role": "user", "content": "hello"}]


@pytest.fixture(autouse=True)
def _plenty_of_replies(model: QueueModel) -> None:
    model.push(*["ok"] * 10)


def send(sdk: anthropic.Anthropic, previous: str | None, **request: Any) -> anthropic.types.Message:
    request.setdefault("model", MODEL)
    request.setdefault("max_tokens", 16)
    request.setdefault("system", SYSTEM)
    request.setdefault("messages", FIRST)
    reply: anthropic.types.Message = sdk.messages.create(
        diagnostics={"previous_message_id": previous}, **request
    )
    return reply


def test_first_turn_opts_in_without_a_reason(sdk: anthropic.Anthropic) -> None:
    assert send(sdk, None).diagnostics is None


def test_appending_messages_is_no_divergence(sdk: anthropic.Anthropic) -> None:
    first = send(sdk, None)
    grown = [*FIRST, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "more"}]
    second = send(sdk, first.id, messages=grown)
    assert second.diagnostics is None
    assert second.usage.cache_read_input_tokens == 1406


def test_system_change(sdk: anthropic.Anthropic, server: FakeAnthropicServer) -> None:
    first = send(sdk, None)
    changed = [SYSTEM[0], block(300, "u", cache="5m")]
    second = send(sdk, first.id, system=changed)
    assert second.diagnostics is not None
    reason = second.diagnostics.cache_miss_reason
    assert isinstance(reason, CacheMissSystemChanged)
    assert reason.cache_missed_input_tokens == 303  # block 2; block 1 is still shared
    raw = server.requests[-1].response
    assert raw is not None
    assert raw["diagnostics"] == {
        "cache_miss_reason": {"type": "system_changed", "cache_missed_input_tokens": 303}
    }


def test_tools_change(sdk: anthropic.Anthropic) -> None:
    first = send(sdk, None, tools=[TOOL_A])
    second = send(sdk, first.id, tools=[TOOL_B])
    assert second.diagnostics is not None
    reason = second.diagnostics.cache_miss_reason
    assert isinstance(reason, CacheMissToolsChanged)
    assert reason.cache_missed_input_tokens == tool_tokens(TOOL_A) + 1406


def test_model_change(sdk: anthropic.Anthropic) -> None:
    first = send(sdk, None)
    second = send(sdk, first.id, model="claude-opus-4-8")
    assert second.diagnostics is not None
    reason = second.diagnostics.cache_miss_reason
    assert isinstance(reason, CacheMissModelChanged)
    assert reason.cache_missed_input_tokens == 1406


def test_edited_earlier_message(sdk: anthropic.Anthropic) -> None:
    history: list[Any] = [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "next"},
    ]
    first = send(sdk, None, messages=history)
    edited = [{"role": "user", "content": "HELLO"}, *history[1:]]
    second = send(sdk, first.id, messages=edited)
    assert second.diagnostics is not None
    assert isinstance(second.diagnostics.cache_miss_reason, CacheMissMessagesChanged)


def test_other_prompt_settings_are_unavailable(sdk: anthropic.Anthropic) -> None:
    first = send(sdk, None, tools=[TOOL_A])
    second = send(sdk, first.id, tools=[TOOL_A], tool_choice={"type": "any"})
    assert second.diagnostics is not None
    assert isinstance(second.diagnostics.cache_miss_reason, CacheMissUnavailable)


def test_unknown_previous_message(sdk: anthropic.Anthropic) -> None:
    reply = send(sdk, "msg_does_not_exist")
    assert reply.diagnostics is not None
    assert isinstance(reply.diagnostics.cache_miss_reason, CacheMissPreviousMessageNotFound)


def test_requests_without_diagnostics_are_not_fingerprinted(sdk: anthropic.Anthropic) -> None:
    plain = sdk.messages.create(model=MODEL, max_tokens=16, system=SYSTEM, messages=FIRST)
    assert plain.diagnostics is None
    later = send(sdk, plain.id)
    assert later.diagnostics is not None
    assert isinstance(later.diagnostics.cache_miss_reason, CacheMissPreviousMessageNotFound)


def test_moving_cache_control_is_not_a_change(sdk: anthropic.Anthropic) -> None:
    first = send(sdk, None)
    unmarked = [{"type": "text", "text": SYSTEM[0]["text"]}, SYSTEM[1]]
    assert send(sdk, first.id, system=unmarked).diagnostics is None
