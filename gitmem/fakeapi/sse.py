"""Server-sent events for a streamed message, in the real API's event order.

``message_start`` (usage with input counts, ``output_tokens`` 1), ``ping``,
then per content block ``content_block_start`` / ``content_block_delta``
(``text_delta`` or ``input_json_delta``) / ``content_block_stop``, then
``message_delta`` (stop reason and cumulative usage) and ``message_stop``.
"""

from __future__ import annotations

import json
from typing import Any

TEXT_CHUNK_CHARS = 24
JSON_CHUNK_CHARS = 16

Event = tuple[str, dict[str, Any]]


def _chunks(text: str, size: int) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)]


def message_events(message: dict[str, Any]) -> list[Event]:
    """The events that stream ``message`` (a complete non-streaming response body)."""
    usage = dict(message["usage"])
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    start["usage"] = {**usage, "output_tokens": 1}
    events: list[Event] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(message["content"]):
        events.extend(_block_events(index, block))
    delta_usage = {
        key: usage[key]
        for key in (
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
            "output_tokens",
        )
    }
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": message["stop_reason"],
                    "stop_sequence": message["stop_sequence"],
                },
                "usage": delta_usage,
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _block_events(index: int, block: dict[str, Any]) -> list[Event]:
    kind = block.get("type")
    deltas: list[dict[str, Any]]
    if kind == "text":
        opening = {**block, "text": ""}
        deltas = [
            {"type": "text_delta", "text": piece}
            for piece in _chunks(str(block["text"]), TEXT_CHUNK_CHARS)
        ]
    elif kind == "tool_use":
        opening = {**block, "input": {}}
        arguments = json.dumps(block["input"], ensure_ascii=False)
        deltas = [
            {"type": "input_json_delta", "partial_json": piece}
            for piece in _chunks(arguments, JSON_CHUNK_CHARS)
        ]
    else:
        opening, deltas = block, []
    events: list[Event] = [
        (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": opening},
        )
    ]
    events.extend(
        ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
        for d in deltas
    )
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def encode(event: str, data: dict[str, Any]) -> bytes:
    """One event in SSE wire format."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def chunk(payload: bytes) -> bytes:
    """One chunk of an HTTP/1.1 chunked body (an empty payload ends the body)."""
    return f"{len(payload):x}\r\n".encode() + payload + b"\r\n"
