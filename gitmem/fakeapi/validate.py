"""Cheap request validation with the real API's error shapes and wording."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .cache import MAX_BREAKPOINTS, TTL_SECONDS
from .errors import invalid_request
from .prompt import PromptBlock, breakpoints
from .tokens import content_blocks


def require_object(body: object) -> dict[str, Any]:
    """The request body as a JSON object, or a 400."""
    if not isinstance(body, dict):
        raise invalid_request("Request body must be a JSON object")
    return body


def validate_messages_request(body: Mapping[str, Any], *, count_tokens: bool = False) -> None:
    """Required fields and message structure (``count_tokens`` needs no ``max_tokens``)."""
    model = body.get("model")
    if model is None:
        raise invalid_request("model: Field required")
    if not isinstance(model, str) or not model:
        raise invalid_request("model: Input should be a valid string")
    if not count_tokens:
        max_tokens = body.get("max_tokens")
        if max_tokens is None:
            raise invalid_request("max_tokens: Field required")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise invalid_request("max_tokens: Input should be a positive integer")
    messages = body.get("messages")
    if messages is None:
        raise invalid_request("messages: Field required")
    if not isinstance(messages, list):
        raise invalid_request("messages: Input should be a valid list")
    for index, message in enumerate(messages):
        _validate_message(index, message)
    _validate_conversation(messages)


def _validate_message(index: int, message: object) -> None:
    if not isinstance(message, Mapping):
        raise invalid_request(f"messages.{index}: Input should be a valid dictionary")
    if message.get("role") not in ("user", "assistant"):
        raise invalid_request(f"messages.{index}.role: Input should be 'user' or 'assistant'")
    content = message.get("content")
    if not isinstance(content, (str, list)):
        raise invalid_request(f"messages.{index}.content: Field required")
    if isinstance(content, list):
        for block_index, block in enumerate(content):
            if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
                raise invalid_request(
                    f"messages.{index}.content.{block_index}: Input tag not found; expected 'type'"
                )


def _validate_conversation(messages: list[Any]) -> None:
    """The real API's conversation rules: a first user turn, roles alternating, tool
    blocks only in their role, and every ``tool_use`` answered by ``tool_result``
    blocks at the start of the very next message (each answering one of them)."""
    if not messages:
        raise invalid_request("messages: at least one message is required")
    if messages[0].get("role") != "user":
        raise invalid_request('messages: first message must use the "user" role')
    for index in range(1, len(messages)):
        role = messages[index].get("role")
        if role == messages[index - 1].get("role"):
            raise invalid_request(
                f'messages: roles must alternate between "user" and "assistant", '
                f'but found multiple "{role}" roles in a row'
            )
    pending: list[str] = []
    for index, message in enumerate(messages):
        blocks = content_blocks(message.get("content"))
        role = message.get("role")
        _check_blocks(index, role, blocks, final=index == len(messages) - 1)
        if role == "user":
            _check_results(index, blocks, pending)
            pending = []
        else:
            pending = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
    if pending:  # the conversation ends on unanswered calls
        raise _missing_results(len(messages) - 1, pending)


def _check_blocks(index: int, role: object, blocks: list[Any], final: bool) -> None:
    """Content present (but in a final assistant message), text not blank, tool blocks
    only in their role."""
    if not blocks and not (role == "assistant" and final):
        raise invalid_request(
            f"messages.{index}: all messages must have non-empty content except for the "
            "optional final assistant message"
        )
    if any(b.get("type") == "text" and not str(b.get("text", "")).strip() for b in blocks):
        raise invalid_request("messages: text content blocks must contain non-whitespace text")
    wrong = "tool_result" if role == "assistant" else "tool_use"
    for block_index, block in enumerate(blocks):
        if block.get("type") == wrong:
            raise invalid_request(
                f"messages.{index}.content.{block_index}: `{wrong}` blocks can only be in "
                f"{'user' if wrong == 'tool_result' else 'assistant'} messages"
            )


def _check_results(index: int, blocks: list[Any], pending: list[str]) -> None:
    """A user message answers exactly the ``pending`` calls, its results first."""
    results = [str(b.get("tool_use_id")) for b in blocks if b.get("type") == "tool_result"]
    unexpected = [tool_id for tool_id in results if tool_id not in pending]
    if unexpected:
        raise invalid_request(
            f"messages.{index}.content: unexpected `tool_use_id` found in `tool_result` "
            f"blocks: {unexpected[0]}. Each `tool_result` block must have a corresponding "
            "`tool_use` block in the previous message."
        )
    missing = [tool_id for tool_id in pending if tool_id not in results]
    if missing:
        raise _missing_results(index, missing)
    leading = next((i for i, b in enumerate(blocks) if b.get("type") != "tool_result"), len(blocks))
    if leading < len(results):
        raise invalid_request(
            f"messages.{index}: Did not find {len(results)} tool_result block(s) at the "
            "beginning of this message. Messages following tool_use blocks must begin "
            "with a matching number of tool_result blocks."
        )


def _missing_results(index: int, missing: list[str]) -> Exception:
    return invalid_request(
        f"messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately "
        f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding "
        "`tool_result` block in the next message."
    )


def validate_cache_control(body: Mapping[str, Any], blocks: list[PromptBlock]) -> None:
    """At most 4 breakpoints, known types and TTLs, 1h entries before 5m ones."""
    points = breakpoints(blocks)
    if len(points) > MAX_BREAKPOINTS:
        raise invalid_request(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(points)}."
        )
    seen_5m = False
    for point in points:
        control = blocks[point].cache_control or {}
        if control.get("type") != "ephemeral":
            raise invalid_request("cache_control.type: Input should be 'ephemeral'")
        ttl = control.get("ttl", "5m")
        if ttl not in TTL_SECONDS:
            raise invalid_request("cache_control.ttl: Input should be '5m' or '1h'")
        if ttl == "1h" and seen_5m:
            raise invalid_request(
                "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block"
            )
        seen_5m = seen_5m or ttl == "5m"
