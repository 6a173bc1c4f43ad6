"""``client.beta.messages.tool_runner`` with ``@beta_tool`` functions, and message threads."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from anthropic import beta_tool

from fakeapi.fakeapi_support import MODEL
from gitmem.fakeapi import FakeAnthropicServer, QueueModel, Reply

calls: list[tuple[int, int]] = []


@beta_tool
def add(a: int, b: int) -> str:
    """Add two integers.

    Args:
        a: first number
        b: second number
    """
    calls.append((a, b))
    return str(a + b)


@beta_tool(cache_control={"type": "ephemeral"})
def multiply(a: int, b: int) -> str:
    """Multiply two integers.

    Args:
        a: first number
        b: second number
    """
    calls.append((a, b))
    return str(a * b)


@pytest.fixture(autouse=True)
def _reset_calls() -> None:
    calls.clear()


def body(server: FakeAnthropicServer, index: int) -> dict[str, Any]:
    result = server.requests[index].body
    assert isinstance(result, dict)
    return result


def runner_for(sdk: anthropic.Anthropic, tool: Any, question: str, **options: Any) -> Any:
    """The SDK's tool runner over one tool, starting from one user question."""
    return sdk.beta.messages.tool_runner(
        model=MODEL,
        max_tokens=200,
        tools=[tool],
        messages=[{"role": "user", "content": question}],
        **options,
    )


def test_tool_runner_calls_the_function_and_finishes(
    sdk: anthropic.Anthropic, model: QueueModel, server: FakeAnthropicServer
) -> None:
    model.push(Reply.tool_use("add", {"a": 2, "b": 3}), "The sum is 5.")
    runner = runner_for(sdk, add, "What is 2 + 3?")
    final = runner.until_done()
    assert final.content[0].type == "text" and final.content[0].text == "The sum is 5."
    assert calls == [(2, 3)]
    assert [record.status for record in server.requests] == [200, 200]
    # The model saw the whole conversation, rebuilt from the thread.
    seen = model.seen[1]["messages"]
    assert [message["role"] for message in seen] == ["user", "assistant", "user"]
    assert seen[2]["content"][0]["type"] == "tool_result"
    assert seen[2]["content"][0]["content"] == "5"
    assert model.seen[1]["tools"][0]["name"] == "add"
    # ... while the SDK sent only the new turn on the wire.
    first, second = body(server, 0), body(server, 1)
    assert first["thread"] == {"type": "create"}
    answered = server.requests[0].response
    assert isinstance(answered, dict)
    assert second["thread"] == {"type": "continue", "previous_message_id": answered["id"]}
    assert "tools" not in second and len(second["messages"]) == 1


def test_tool_runner_with_cache_control_falls_back_to_full_history(
    sdk: anthropic.Anthropic, model: QueueModel, server: FakeAnthropicServer
) -> None:
    model.push(Reply.tool_use("multiply", {"a": 6, "b": 7}), "It is 42.")
    runner = runner_for(sdk, multiply, "What is 6 * 7?")
    final = runner.until_done()
    assert final.content[0].type == "text" and final.content[0].text == "It is 42."
    assert calls == [(6, 7)]
    assert [record.status for record in server.requests] == [400, 200, 200]
    rejection = server.requests[0].response
    assert rejection is not None
    assert rejection["error"]["details"] == {
        "error_code": "thread_unsupported_request",
        "unsupported": ["cache_control"],
    }
    assert "thread" not in body(server, 2)
    assert len(body(server, 2)["messages"]) == 3


def test_streaming_tool_runner(
    sdk: anthropic.Anthropic, model: QueueModel, server: FakeAnthropicServer
) -> None:
    model.push(Reply.tool_use("add", {"a": 40, "b": 2}), "The answer is 42.")
    runner = runner_for(sdk, add, "40 + 2?", stream=True)
    text: list[str] = []
    for stream in runner:
        for event in stream:
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                text.append(event.delta.text)
    assert "".join(text) == "The answer is 42."
    assert calls == [(40, 2)]
    assert all(record.body["stream"] is True for record in server.requests)


def test_thread_errors_carry_sdk_error_codes(sdk: anthropic.Anthropic, model: QueueModel) -> None:
    model.push("first", "second")
    with pytest.raises(anthropic.NotFoundError) as missing:
        sdk.beta.messages.create(
            model=MODEL,
            max_tokens=20,
            messages=[{"role": "user", "content": "hi"}],
            thread={"type": "continue", "previous_message_id": "msg_unknown"},
        )
    assert missing.value.error_code == "thread_not_found"

    created = sdk.beta.messages.create(
        model=MODEL,
        max_tokens=20,
        messages=[{"role": "user", "content": "hi"}],
        thread={"type": "create"},
    )
    follow_up: Any = [{"role": "user", "content": "and?"}]
    continue_from: Any = {"type": "continue", "previous_message_id": created.id}
    sdk.beta.messages.create(model=MODEL, max_tokens=20, messages=follow_up, thread=continue_from)
    with pytest.raises(anthropic.BadRequestError) as twice:
        sdk.beta.messages.create(
            model=MODEL, max_tokens=20, messages=follow_up, thread=continue_from
        )
    assert twice.value.error_code == "thread_already_continued"
