"""FakeAnthropicServer: a local HTTP server speaking the Messages API.

    with FakeAnthropicServer(QueueModel(["Hello!"])) as server:
        client = anthropic.Anthropic(api_key="test", base_url=server.base_url)
        client.messages.create(model="claude-sonnet-4-5", max_tokens=100, messages=[...])

Serves ``POST /v1/messages`` (JSON or SSE with ``"stream": true``; also with
``?beta=true``) and ``POST /v1/messages/count_tokens`` on 127.0.0.1, one
thread per connection.  Every request is logged in ``server.requests``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from . import sse
from .api import MessagesAPI
from .cache import PromptCache
from .clock import Clock
from .errors import ApiError
from .faults import Fault, FaultQueue
from .model import Model
from .rules import RuleModel
from .transport import Handler, LoopbackServer, abort, send_head, write

MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"


@dataclass
class RequestRecord:
    """One request the server received and what it did with it."""

    path: str
    query: str
    """The query string (``"beta=true"`` for ``client.beta.messages``)."""
    body: Any
    headers: dict[str, str]
    status: int | None = None
    """HTTP status sent; ``None`` when the connection was dropped before any."""
    response: dict[str, Any] | None = None
    """The JSON body (for a stream: the complete message it streamed)."""
    events: list[str] = field(default_factory=list)
    """Names of the SSE events actually sent."""
    fault: Fault | None = None


class FakeAnthropicServer:
    """A fake Anthropic API on ``127.0.0.1``; use as a context manager or ``start()``/``stop()``."""

    def __init__(
        self,
        model: Model | None = None,
        *,
        clock: Clock = time.monotonic,
        port: int = 0,
        require_api_key: bool = True,
    ) -> None:
        self.faults = FaultQueue()
        self.api = MessagesAPI(model or RuleModel(), clock)
        self.require_api_key = require_api_key
        self._port = port
        self._log: list[RequestRecord] = []
        self._log_lock = threading.Lock()
        self._httpd: LoopbackServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def model(self) -> Model:
        return self.api.model

    @model.setter
    def model(self, model: Model) -> None:
        self.api.model = model

    @property
    def cache(self) -> PromptCache:
        """The simulated prompt cache of this server's organization."""
        return self.api.cache

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def requests(self) -> list[RequestRecord]:
        """A copy of the request log, oldest first."""
        with self._log_lock:
            return list(self._log)

    def start(self) -> FakeAnthropicServer:
        if self._httpd is not None:
            return self
        httpd = LoopbackServer(self._port, self)
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, args=(0.02,), name="fake-anthropic", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropicServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- request handling -------------------------------------------------------------------

    def handle_request(self, handler: Handler) -> None:
        """Serve one HTTP request (called on the connection's thread)."""
        url = urlsplit(handler.path)
        path = url.path.rstrip("/")
        raw = handler.rfile.read(int(handler.headers.get("content-length") or 0))
        headers = {key.lower(): value for key, value in handler.headers.items()}
        record = RequestRecord(path=path, query=url.query, body=None, headers=headers)
        with self._log_lock:
            self._log.append(record)
        request_id = self.api.next_request_id()
        try:
            record.body = json.loads(raw) if raw else None
        except ValueError:
            self._send_error(
                handler, record, request_id, ApiError(400, "Request body is not valid JSON")
            )
            return
        if handler.command != "POST" or path not in (MESSAGES_PATH, COUNT_TOKENS_PATH):
            error = ApiError(404, f"Not found: {handler.command} {path}")
            self._send_error(handler, record, request_id, error)
            return
        if self.require_api_key and not (headers.get("x-api-key") or headers.get("authorization")):
            self._send_error(
                handler, record, request_id, ApiError(401, "x-api-key header is required")
            )
            return
        if path == COUNT_TOKENS_PATH:
            self._respond(handler, record, request_id, lambda: self.api.count_tokens(record.body))
            return
        fault = self.faults.pop()
        record.fault = fault
        if fault is not None and fault.kind == "drop":
            abort(handler)
            return
        if fault is not None and fault.kind == "status":
            error = ApiError(fault.status_code, fault.message, error_type=fault.error_type)
            self._send_error(handler, record, request_id, error, fault.headers())
            return
        if fault is not None and fault.kind == "delay":
            time.sleep(fault.seconds)
        streaming = isinstance(record.body, dict) and record.body.get("stream") is True
        if not streaming:
            self._respond(
                handler, record, request_id, lambda: self.api.create_message(record.body), fault
            )
            return
        try:
            message = self.api.create_message(record.body)
        except ApiError as error:
            self._send_error(handler, record, request_id, error)
            return
        self._stream(handler, record, request_id, message, fault)

    def _respond(
        self,
        handler: Handler,
        record: RequestRecord,
        request_id: str,
        produce: Callable[[], dict[str, Any]],
        fault: Fault | None = None,
    ) -> None:
        try:
            body = produce()
        except ApiError as error:
            self._send_error(handler, record, request_id, error)
            return
        data = json.dumps(body, ensure_ascii=False).encode()
        record.response = body
        if fault is not None and fault.kind == "drop_mid_stream":
            send_head(
                handler, 200, request_id, "application/json", {"content-length": str(len(data))}
            )
            write(handler, data[: len(data) // 2])
            abort(handler)
            return
        record.status = 200
        send_head(handler, 200, request_id, "application/json", {"content-length": str(len(data))})
        write(handler, data)

    def _send_error(
        self,
        handler: Handler,
        record: RequestRecord,
        request_id: str,
        error: ApiError,
        extra: dict[str, str] | None = None,
    ) -> None:
        body = error.body(request_id)
        data = json.dumps(body).encode()
        record.status, record.response = error.status, body
        headers = {"content-length": str(len(data)), **(extra or {})}
        send_head(handler, error.status, request_id, "application/json", headers)
        write(handler, data)

    def _stream(
        self,
        handler: Handler,
        record: RequestRecord,
        request_id: str,
        message: dict[str, Any],
        fault: Fault | None,
    ) -> None:
        record.status, record.response = 200, message
        events = sse.message_events(message)
        cut = (
            fault.after_events
            if fault is not None and fault.kind in ("drop_mid_stream", "stream_error")
            else None
        )
        headers = {"transfer-encoding": "chunked", "cache-control": "no-cache"}
        send_head(handler, 200, request_id, "text/event-stream; charset=utf-8", headers)
        for index, (name, data) in enumerate(events):
            if cut is not None and index >= cut:
                break
            record.events.append(name)  # before writing: the client may finish reading first
            if not write(handler, sse.chunk(sse.encode(name, data))):
                record.events.pop()
                return
        if fault is not None and fault.kind == "drop_mid_stream":
            abort(handler)
            return
        if fault is not None and fault.kind == "stream_error":
            error = {"type": "error", "error": {"type": fault.error_type, "message": fault.message}}
            record.events.append("error")
            write(handler, sse.chunk(sse.encode("error", error)))
        write(handler, sse.chunk(b""))
