"""Injected faults and the real SDK's retry behaviour."""

from __future__ import annotations

import time
from collections.abc import Callable

import anthropic
import httpx2
import pytest

from fakeapi.fakeapi_support import MODEL
from gitmem.fakeapi import FakeAnthropicServer, Fault, QueueModel

QUICK = 0.001  # retry-after (seconds) for faults that should be retried at once
MakeSdk = Callable[..., anthropic.Anthropic]


@pytest.fixture(autouse=True)
def _plenty_of_replies(model: QueueModel) -> None:
    model.push(*[f"reply {i}" for i in range(10)])


def ask(sdk: anthropic.Anthropic) -> str:
    message = sdk.messages.create(
        model=MODEL, max_tokens=50, messages=[{"role": "user", "content": "hi"}]
    )
    block = message.content[0]
    assert block.type == "text"
    return block.text


def statuses(server: FakeAnthropicServer) -> list[int | None]:
    return [record.status for record in server.requests]


@pytest.mark.parametrize(
    "fault",
    [
        Fault.status(429, retry_after=QUICK),
        Fault.status(529, retry_after=QUICK),
        Fault.status(500, retry_after=QUICK),
    ],
    ids=["429", "529", "500"],
)
def test_one_error_is_recovered_by_a_retry(
    make_sdk: MakeSdk, server: FakeAnthropicServer, fault: Fault
) -> None:
    server.faults.push(fault)
    assert ask(make_sdk(max_retries=2)) == "reply 0"
    assert statuses(server) == [fault.status_code, 200]
    failed, retried = server.requests
    assert failed.response is not None
    assert failed.response["error"]["type"] == fault.error_type
    assert retried.headers["x-stainless-retry-count"] == "1"


def test_retry_after_header_is_honoured(make_sdk: MakeSdk, server: FakeAnthropicServer) -> None:
    sdk = make_sdk(max_retries=1)
    server.faults.push(Fault.status(429, retry_after=0.05))
    started = time.monotonic()
    assert ask(sdk) == "reply 0"
    quick = time.monotonic() - started
    # Without the header the SDK would back off at least 0.375 s.
    assert 0.05 <= quick < 0.3
    server.faults.push(Fault.status(429, retry_after=0.6))
    started = time.monotonic()
    assert ask(sdk) == "reply 1"
    assert time.monotonic() - started >= 0.6


def test_dropped_connection_is_recovered_by_a_retry(
    make_sdk: MakeSdk, server: FakeAnthropicServer
) -> None:
    server.faults.push(Fault.drop())
    assert ask(make_sdk(max_retries=2)) == "reply 0"
    assert statuses(server) == [None, 200]


def test_response_cut_halfway_is_retried(make_sdk: MakeSdk, server: FakeAnthropicServer) -> None:
    server.faults.push(Fault.drop_mid_stream())
    assert ask(make_sdk(max_retries=2)) == "reply 1"  # reply 0 was lost with the connection
    assert [record.fault is None for record in server.requests] == [False, True]


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (Fault.status(429, retry_after=QUICK), anthropic.RateLimitError),
        (Fault.status(529, retry_after=QUICK), anthropic.OverloadedError),
        (Fault.status(500, retry_after=QUICK), anthropic.InternalServerError),
        (Fault.drop(), anthropic.APIConnectionError),
    ],
    ids=["429", "529", "500", "drop"],
)
def test_exhausted_retries_raise(
    make_sdk: MakeSdk, server: FakeAnthropicServer, fault: Fault, error: type[Exception]
) -> None:
    server.faults.push(fault, times=3)
    with pytest.raises(error):
        ask(make_sdk(max_retries=2))
    assert len(server.requests) == 3
    assert len(server.faults) == 0
    assert ask(make_sdk(max_retries=0)) == "reply 0"  # the model was never reached before


def test_should_retry_false_stops_the_sdk(make_sdk: MakeSdk, server: FakeAnthropicServer) -> None:
    server.faults.push(Fault.status(529, retry_after=QUICK, should_retry=False))
    with pytest.raises(anthropic.OverloadedError):
        ask(make_sdk(max_retries=2))
    assert statuses(server) == [529]


def test_drop_in_the_middle_of_a_stream(
    sdk: anthropic.Anthropic, server: FakeAnthropicServer
) -> None:
    server.model = QueueModel(["A fairly long streamed answer that arrives in several pieces."])
    server.faults.push(Fault.drop_mid_stream(after_events=4))
    received: list[str] = []
    with (
        pytest.raises((anthropic.APIConnectionError, httpx2.TransportError)),
        sdk.messages.stream(
            model=MODEL, max_tokens=100, messages=[{"role": "user", "content": "hi"}]
        ) as stream,
    ):
        received.extend(stream.text_stream)
    assert received == ["A fairly long streamed a"]  # one text delta, then the cut
    assert server.requests[0].events == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
    ]


def test_error_event_in_the_middle_of_a_stream(
    sdk: anthropic.Anthropic, server: FakeAnthropicServer
) -> None:
    server.faults.push(Fault.stream_error("overloaded_error", after_events=3))
    with (
        pytest.raises(anthropic.APIStatusError) as caught,
        sdk.messages.stream(
            model=MODEL, max_tokens=100, messages=[{"role": "user", "content": "hi"}]
        ) as stream,
    ):
        stream.get_final_message()
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["error"]["type"] == "overloaded_error"
    assert server.requests[0].events[-1] == "error"


def test_delay_triggers_client_timeout(make_sdk: MakeSdk, server: FakeAnthropicServer) -> None:
    server.faults.push(Fault.delay(0.5))
    with pytest.raises(anthropic.APITimeoutError):
        ask(make_sdk(max_retries=0, timeout=0.1))


def test_count_tokens_does_not_consume_faults(
    sdk: anthropic.Anthropic, server: FakeAnthropicServer
) -> None:
    server.faults.push(Fault.status(529))
    counted = sdk.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "hi"}])
    assert counted.input_tokens == 4
    assert len(server.faults) == 1
