"""The Messages API semantics, independent of HTTP: validate, bill, ask the model."""

from __future__ import annotations

import copy
import secrets
import threading
from typing import Any

from .cache import PromptCache
from .clock import Clock
from .diagnostics import DiagnosticsStore
from .errors import ApiError
from .model import Model, ModelExhausted
from .prompt import prompt_blocks, settings_payload, total_tokens
from .reply import fit_to_max_tokens
from .threads import ThreadStore
from .tokens import output_tokens
from .validate import require_object, validate_cache_control, validate_messages_request


class MessagesAPI:
    """Handles ``/v1/messages`` and ``/v1/messages/count_tokens`` bodies.

    Requests are processed one at a time (under a lock), so billing, cache
    state and the model see a well-defined order.
    """

    def __init__(self, model: Model, clock: Clock) -> None:
        self.model = model
        self.cache = PromptCache(clock)
        self.diagnostics = DiagnosticsStore()
        self.threads = ThreadStore()
        self._lock = threading.RLock()
        self._requests = 0
        self._messages = 0
        # unique across processes, as the real API's ids are: usage lines are told apart by id
        self._run = secrets.token_hex(8)
        self._tool_uses = 0

    def next_request_id(self) -> str:
        """A fresh ``request-id`` header value."""
        with self._lock:
            self._requests += 1
            return f"req_fake_{self._requests:06d}"

    def count_tokens(self, body: object) -> dict[str, Any]:
        """The ``count_tokens`` response: the same total ``create`` bills."""
        request = require_object(body)
        request = {key: value for key, value in request.items() if key != "thread"}
        validate_messages_request(request, count_tokens=True)
        blocks = prompt_blocks(request)
        validate_cache_control(request, blocks)
        return {"input_tokens": total_tokens(blocks)}

    def create_message(self, body: object) -> dict[str, Any]:
        """The complete (non-streaming) response message for a ``create`` body."""
        request = require_object(body)
        with self._lock:
            full = self.threads.resolve(request)
            validate_messages_request(full)
            blocks = prompt_blocks(full)
            validate_cache_control(full, blocks)
            content, stop_reason = self._ask_model(full)
            model = str(full["model"])
            usage = self.cache.account(model, blocks, settings_payload(full))
            self._messages += 1
            message: dict[str, Any] = {
                "id": f"msg_fake_{self._run}_{self._messages:06d}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": stop_reason,
                "stop_sequence": None,
                "usage": usage.usage(output_tokens(content)),
            }
            if "diagnostics" in full:
                message["diagnostics"] = self.diagnostics.diagnose(full, blocks, message["id"])
            self.threads.record(request, full, message)
            return message

    def _ask_model(self, request: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        try:
            reply = self.model(copy.deepcopy(request))
        except ModelExhausted as error:
            raise ApiError(500, str(error)) from error
        except ApiError:
            raise
        except Exception as error:
            raise ApiError(500, f"fake model failed: {type(error).__name__}: {error}") from error
        content = copy.deepcopy(reply.content_dicts())
        for block in content:
            if block["type"] == "tool_use" and not block["id"]:
                self._tool_uses += 1
                block["id"] = f"toolu_fake_{self._tool_uses:06d}"
        content, cut = fit_to_max_tokens(content, int(request["max_tokens"]))
        return content, "max_tokens" if cut else reply.stop_reason
