"""Message threads (beta): server-held conversation state.

The SDK's ``client.beta.messages.tool_runner`` sends ``thread: {"type":
"create"}`` on its first turn and ``thread: {"type": "continue",
"previous_message_id": ...}`` with only the new messages afterwards; the server
takes ``system`` and ``tools`` from the thread.  This module rebuilds the full
request so the rest of the server (billing, cache, model) sees the whole
conversation, with the SDK's error codes:

* ``thread_not_found`` (404) for an unknown ``previous_message_id``;
* ``thread_already_continued`` (400) when a response is continued twice;
* ``thread_unsupported_request`` (400) when a threaded request uses a field
  threads do not support (``cache_control``, ``thinking``,
  ``context_management``, ``fallbacks``) -- the SDK then resends the
  conversation without ``thread``.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ApiError, invalid_request
from .tokens import content_blocks, system_blocks

UNSUPPORTED_FIELDS = ("thinking", "context_management", "fallbacks")


@dataclass
class _Held:
    system: Any
    tools: Any
    messages: list[Any]
    continued: bool = False


def _uses_cache_control(request: Mapping[str, Any]) -> bool:
    if request.get("cache_control") is not None:
        return True
    blocks: list[Any] = list(request.get("tools") or []) + system_blocks(request.get("system"))
    for message in request.get("messages") or []:
        if isinstance(message, Mapping):
            blocks.extend(content_blocks(message.get("content")))
    return any(isinstance(b, Mapping) and b.get("cache_control") is not None for b in blocks)


class ThreadStore:
    """Threads by the id of their latest response.  Thread-safe."""

    def __init__(self) -> None:
        self._held: dict[str, _Held] = {}
        self._lock = threading.Lock()

    def resolve(self, request: dict[str, Any]) -> dict[str, Any]:
        """The full request a (possibly threaded) request stands for, without ``thread``."""
        thread = request.get("thread")
        if thread is None:
            return request
        if not isinstance(thread, Mapping) or thread.get("type") not in ("create", "continue"):
            raise invalid_request("thread.type: Input should be 'create' or 'continue'")
        unsupported = [field for field in UNSUPPORTED_FIELDS if request.get(field) is not None]
        if _uses_cache_control(request):
            unsupported.insert(0, "cache_control")
        if unsupported:
            raise invalid_request(
                f"thread cannot be combined with: {', '.join(unsupported)}",
                details={"error_code": "thread_unsupported_request", "unsupported": unsupported},
            )
        full = {key: value for key, value in request.items() if key != "thread"}
        if thread["type"] == "create":
            return full
        for field in ("system", "tools"):
            if field in request:
                raise invalid_request(
                    f"{field}: cannot be sent when continuing a thread; it is taken from the thread",
                    details={"error_code": "thread_fingerprint_mismatch"},
                )
        previous_id = str(thread.get("previous_message_id"))
        with self._lock:
            held = self._held.get(previous_id)
            if held is None:
                raise ApiError(
                    404,
                    f"No thread found for previous_message_id {previous_id}",
                    details={"error_code": "thread_not_found"},
                )
            if held.continued:
                raise invalid_request(
                    f"{previous_id} has already been continued",
                    details={"error_code": "thread_already_continued"},
                )
            if held.system is not None:
                full["system"] = copy.deepcopy(held.system)
            if held.tools is not None:
                full["tools"] = copy.deepcopy(held.tools)
            full["messages"] = copy.deepcopy(held.messages) + list(request.get("messages") or [])
        return full

    def record(
        self, request: Mapping[str, Any], full: Mapping[str, Any], message: Mapping[str, Any]
    ) -> None:
        """Hold the conversation of a threaded request under its response id."""
        thread = request.get("thread")
        if not isinstance(thread, Mapping):
            return
        reply = {"role": "assistant", "content": copy.deepcopy(message["content"])}
        held = _Held(
            system=copy.deepcopy(full.get("system")),
            tools=copy.deepcopy(full.get("tools")),
            messages=[*copy.deepcopy(list(full.get("messages") or [])), reply],
        )
        with self._lock:
            if thread.get("type") == "continue":
                previous = self._held.get(str(thread.get("previous_message_id")))
                if previous is not None:
                    previous.continued = True
            self._held[str(message["id"])] = held
