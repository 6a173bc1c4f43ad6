"""/v1/messages and count_tokens through the real SDK: JSON, SSE, tools, validation."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Any

import anthropic
import pytest

from fakeapi.fakeapi_support import MODEL
from gitmem.fakeapi import FakeAnthropicServer, QueueModel, Reply

LONG_TEXT = "The quick brown fox jumps over the lazy dog. " * 3

TOOL: Any = {
    "name": "lookup",
    "description": "Look a word up.",
    "input_schema": {"type": "object", "properties": {"word": {"type": "string"}}},
}


def test_create_returns_text_usage_and_request_id(
    sdk: anthropic.Anthropic, model: QueueModel
) -> None:
    model.push("Hello, world!")
    raw = sdk.messages.with_raw_response.create(
        model=MODEL, max_tokens=100, messages=[{"role": "user", "content": "Say hello"}]
    )
    message = raw.parse()
    assert raw.headers["request-id"].startswith("req_fake_")
    assert message.id.startswith("msg_")
    assert message.model == MODEL
    assert [block.type for block in message.content] == ["text"]
    assert message.content[0].type == "text" and message.content[0].text == "Hello, world!"
    assert message.stop_reason == "end_turn"
    # "Say hello" is 9 bytes -> 3 tokens, plus 3 per block.
    assert message.usage.input_tokens == 6
    # "Hello, world!" is 13 bytes -> 4 tokens, plus 3.
    assert message.usage.output_tokens == 7
    assert message.usage.cache_creation_input_tokens == 0
    assert message.usage.cache_read_input_tokens == 0
    assert message.usage.cache_creation is not None
    assert message.usage.cache_creation.ephemeral_5m_input_tokens == 0


def test_stream_yields_deltas_and_final_message_matches(
    sdk: anthropic.Anthropic, model: QueueModel, server: FakeAnthropicServer
) -> None:
    model.push(LONG_TEXT, LONG_TEXT)
    request: dict[str, Any] = {
        "model": MODEL,
        "max_tokens": 500,
        "messages": [{"role": "user", "content": "Tell me about the fox"}],
    }
    with sdk.messages.stream(**request) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    plain = sdk.messages.create(**request)
    assert len(pieces) > 3
    assert "".join(pieces) == LONG_TEXT
    assert final.content[0].type == "text" and final.content[0].text == LONG_TEXT
    assert final.stop_reason == "end_turn"
    assert final.usage.input_tokens == plain.usage.input_tokens
    assert final.usage.output_tokens == plain.usage.output_tokens
    events = server.requests[0].events
    assert events[:3] == ["message_start", "ping", "content_block_start"]
    assert events[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert events.count("content_block_delta") == len(pieces)


def test_tool_use_round_trip_with_streamed_input_json(
    sdk: anthropic.Anthropic, model: QueueModel
) -> None:
    tool_input = {"word": "ephemeral", "options": {"lang": "en", "senses": [1, 2, 3]}}
    model.push(Reply.tool_use("lookup", tool_input, id="toolu_custom_1"), "It means short-lived.")
    messages: list[Any] = [{"role": "user", "content": "What does ephemeral mean?"}]
    raw_events: list[Any] = list(
        sdk.messages.create(
            model=MODEL, max_tokens=300, messages=messages, tools=[TOOL], stream=True
        )
    )
    json_parts = [
        event.delta.partial_json
        for event in raw_events
        if event.type == "content_block_delta" and event.delta.type == "input_json_delta"
    ]
    assert len(json_parts) > 1
    assert json.loads("".join(json_parts)) == tool_input
    stop = [event for event in raw_events if event.type == "message_delta"]
    assert stop[0].delta.stop_reason == "tool_use"

    assistant: Any = {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_custom_1", "name": "lookup", "input": tool_input}
        ],
    }
    result: Any = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_custom_1", "content": "short"}],
    }
    answer = sdk.messages.create(
        model=MODEL, max_tokens=300, messages=[*messages, assistant, result], tools=[TOOL]
    )
    assert answer.content[0].type == "text" and answer.content[0].text == "It means short-lived."
    assert model.seen[1]["messages"][-1]["content"][0]["tool_use_id"] == "toolu_custom_1"


def test_streamed_tool_use_parses_in_final_message(
    sdk: anthropic.Anthropic, model: QueueModel
) -> None:
    model.push(Reply.tool_use("lookup", {"word": "fox"}, preamble="Let me check."))
    with sdk.messages.stream(
        model=MODEL,
        max_tokens=300,
        tools=[TOOL],
        messages=[{"role": "user", "content": "look up fox"}],
    ) as stream:
        final = stream.get_final_message()
    assert [block.type for block in final.content] == ["text", "tool_use"]
    tool_use = final.content[1]
    assert tool_use.type == "tool_use"
    assert tool_use.input == {"word": "fox"}
    assert tool_use.id == "toolu_fake_000001"
    assert final.stop_reason == "tool_use"


def test_count_tokens_agrees_with_billed_total(sdk: anthropic.Anthropic, model: QueueModel) -> None:
    model.push("one", "two")
    request: dict[str, Any] = {
        "model": MODEL,
        "tools": [TOOL],
        "system": [
            {"type": "text", "text": "S" * 4400, "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "Be brief."},
        ],
        "messages": [
            {"role": "user", "content": "Question one"},
            {"role": "assistant", "content": "Answer one"},
            {"role": "user", "content": [{"type": "text", "text": "Question two"}]},
        ],
    }
    counted = sdk.messages.count_tokens(**request).input_tokens
    for _ in range(2):  # first call writes the cache, second reads it
        usage = sdk.messages.create(max_tokens=50, **request).usage
        total = (
            usage.input_tokens
            + (usage.cache_creation_input_tokens or 0)
            + (usage.cache_read_input_tokens or 0)
        )
        assert total == counted
    assert usage.cache_read_input_tokens and usage.cache_read_input_tokens > 1100


def test_count_tokens_follows_the_documented_rule(sdk: anthropic.Anthropic) -> None:
    counted = sdk.messages.count_tokens(
        model=MODEL,
        system="y" * 8,  # 2 + 3
        messages=[{"role": "user", "content": "x" * 41}],  # ceil(41/4) = 11, + 3
    )
    assert counted.input_tokens == 19


def test_beta_messages_with_and_without_beta_query(
    sdk: anthropic.Anthropic, model: QueueModel, server: FakeAnthropicServer
) -> None:
    model.push("beta hello", "beta again")
    message = sdk.beta.messages.create(
        model=MODEL, max_tokens=20, messages=[{"role": "user", "content": "hi"}]
    )
    assert isinstance(message, anthropic.types.beta.BetaMessage)
    assert message.content[0].type == "text" and message.content[0].text == "beta hello"
    again = sdk.beta.messages.create(
        model=MODEL,
        max_tokens=20,
        messages=[{"role": "user", "content": "hi"}],
        extra_query={"beta": "true"},
    )
    assert again.content[0].type == "text" and again.content[0].text == "beta again"
    assert [record.query for record in server.requests] == ["", "beta=true"]
    assert [record.status for record in server.requests] == [200, 200]


def test_more_than_four_breakpoints_is_rejected(
    sdk: anthropic.Anthropic, model: QueueModel
) -> None:
    model.push("never sent")
    marked = {"type": "ephemeral"}
    system: Any = [
        {"type": "text", "text": f"block {i}", "cache_control": marked} for i in range(5)
    ]
    with pytest.raises(anthropic.BadRequestError) as caught:
        sdk.messages.create(
            model=MODEL, max_tokens=20, system=system, messages=[{"role": "user", "content": "hi"}]
        )
    error = caught.value
    assert error.status_code == 400
    assert isinstance(error.body, dict)
    assert error.body["type"] == "error"
    assert error.body["error"]["type"] == "invalid_request_error"
    assert "maximum of 4 blocks with cache_control" in error.body["error"]["message"]
    assert "Found 5" in error.body["error"]["message"]
    assert error.response.headers["request-id"].startswith("req_fake_")
    assert model.remaining == 1  # the model was never asked


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"max_tokens": 5, "messages": []}, "model: Field required"),
        ({"model": MODEL, "messages": []}, "max_tokens: Field required"),
        ({"model": MODEL, "max_tokens": 5}, "messages: Field required"),
    ],
)
def test_missing_required_fields(
    sdk: anthropic.Anthropic, body: dict[str, Any], message: str
) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        sdk.post("/v1/messages", body=body, cast_to=object)
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["error"] == {"type": "invalid_request_error", "message": message}


def test_unanswered_tool_use_is_rejected(sdk: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.BadRequestError, match="without `tool_result` blocks"):
        sdk.messages.create(
            model=MODEL,
            max_tokens=20,
            messages=[
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t1", "name": "lookup", "input": {}}],
                },
                {"role": "user", "content": "never mind"},
            ],
        )


USE = {"type": "tool_use", "id": "t1", "name": "lookup", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "t1", "content": "found"}
TEXT = {"type": "text", "text": "hi"}


def _user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def _assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        ([], "messages: at least one message is required"),
        ([_assistant(TEXT), _user(TEXT)], 'first message must use the "user" role'),
        ([_user(TEXT), _user(TEXT)], 'but found multiple "user" roles in a row'),
        (
            [_user(TEXT), _assistant(TEXT), _assistant(TEXT), _user(TEXT)],
            'roles must alternate between "user" and "assistant"',
        ),
        ([_user(TEXT), _assistant(USE), _user(TEXT)], "without `tool_result` blocks"),
        ([_user(TEXT), _assistant(USE)], "messages.1: `tool_use` ids were found without"),
        ([_user(TEXT), _assistant(USE, {**USE, "id": "t2"}), _user(RESULT)], ": t2. Each"),
        (
            [_user(TEXT), _assistant(USE), _user(TEXT, RESULT)],
            "messages.2: Did not find 1 tool_result block(s) at the beginning of this message",
        ),
        ([_user(TEXT), _assistant(TEXT), _user(RESULT)], "unexpected `tool_use_id`"),
        (
            [_user(TEXT), _assistant(USE), _user(RESULT), _assistant(TEXT), _user(RESULT)],
            "messages.4.content: unexpected `tool_use_id` found in `tool_result` blocks: t1",
        ),
        ([_user(USE)], "messages.0.content.0: `tool_use` blocks can only be in assistant messages"),
        (
            [_user(TEXT), _assistant(RESULT), _user(TEXT)],
            "`tool_result` blocks can only be in user",
        ),
        (
            [_user(TEXT), _assistant(), _user(TEXT)],
            "messages.1: all messages must have non-empty content except for the optional final",
        ),
        (
            [_user({"type": "text", "text": " \n"})],
            "text content blocks must contain non-whitespace",
        ),
    ],
)
def test_conversations_the_real_api_refuses_are_400s(
    sdk: anthropic.Anthropic, model: QueueModel, messages: list[Any], message: str
) -> None:
    model.push("never sent")
    for call in (sdk.messages.create, sdk.messages.count_tokens):
        kwargs: dict[str, Any] = {"model": MODEL, "messages": messages, "tools": [TOOL]}
        if call == sdk.messages.create:
            kwargs["max_tokens"] = 20
        with pytest.raises(anthropic.BadRequestError) as caught:
            call(**kwargs)
        assert caught.value.status_code == 400
        assert isinstance(caught.value.body, dict)
        assert caught.value.body["type"] == "error"
        assert caught.value.body["error"]["type"] == "invalid_request_error"
        assert message in caught.value.body["error"]["message"]
    assert model.remaining == 1  # the model was never asked


def test_a_well_formed_tool_conversation_is_answered(
    sdk: anthropic.Anthropic, model: QueueModel
) -> None:
    model.push("done")
    two = {**USE, "id": "t2"}
    messages = [
        _user(TEXT),
        _assistant(TEXT, USE, two),
        _user(RESULT, {**RESULT, "tool_use_id": "t2", "is_error": True}, TEXT),
    ]
    kwargs: dict[str, Any] = {
        "model": MODEL,
        "max_tokens": 20,
        "messages": messages,
        "tools": [TOOL],
    }
    reply = sdk.messages.create(**kwargs)
    assert reply.content[0].type == "text" and reply.content[0].text == "done"


def test_max_tokens_cuts_the_reply(sdk: anthropic.Anthropic, model: QueueModel) -> None:
    model.push("z" * 400)
    message = sdk.messages.create(
        model=MODEL, max_tokens=20, messages=[{"role": "user", "content": "long please"}]
    )
    assert message.stop_reason == "max_tokens"
    assert message.content[0].type == "text" and message.content[0].text == "z" * 68
    assert message.usage.output_tokens == 20


def test_exhausted_queue_model_is_a_500(sdk: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.InternalServerError, match="no reply left"):
        sdk.messages.create(
            model=MODEL, max_tokens=20, messages=[{"role": "user", "content": "hi"}]
        )


def test_unknown_path_and_missing_key_have_error_shape(server: FakeAnthropicServer) -> None:
    request = urllib.request.Request(f"{server.base_url}/v1/nothing", data=b"{}", method="POST")
    request.add_header("x-api-key", "test")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=5)
    assert caught.value.code == 404
    assert json.loads(caught.value.read())["error"]["type"] == "not_found_error"
    assert caught.value.headers["request-id"].startswith("req_fake_")

    anonymous = urllib.request.Request(f"{server.base_url}/v1/messages", data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(anonymous, timeout=5)
    assert caught.value.code == 401
    assert json.loads(caught.value.read())["error"]["type"] == "authentication_error"


def test_concurrent_requests_are_all_served(
    sdk: anthropic.Anthropic, model: QueueModel, server: FakeAnthropicServer
) -> None:
    model.push(*[f"reply {i}" for i in range(12)])
    texts: list[str] = []
    lock = threading.Lock()

    def ask() -> None:
        message = sdk.messages.create(
            model=MODEL, max_tokens=20, messages=[{"role": "user", "content": "hi"}]
        )
        block = message.content[0]
        assert block.type == "text"
        with lock:
            texts.append(block.text)

    workers = [threading.Thread(target=ask) for _ in range(12)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=10)
    assert sorted(texts) == sorted(f"reply {i}" for i in range(12))
    ids = [record.response["id"] for record in server.requests if record.response]
    assert len(set(ids)) == 12
