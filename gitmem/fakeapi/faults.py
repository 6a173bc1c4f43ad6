"""Fault injection: a queue of failures consumed by the next ``/v1/messages`` requests.

``server.faults.push(Fault.status(429, retry_after=0.01))`` makes the next
request fail with a 429; the one after that is served normally.  Kinds:

* ``Fault.status(code, ...)``: an error response in the real shape (429
  ``rate_limit_error``, 500 ``api_error``, 529 ``overloaded_error`` ...), with
  ``retry-after`` / ``retry-after-ms`` headers when ``retry_after`` is given
  and ``x-should-retry`` when ``should_retry`` is given;
* ``Fault.drop()``: the connection is closed with no response at all;
* ``Fault.drop_mid_stream(after_events=n)``: the response starts (for a
  streaming request, ``n`` SSE events are sent; otherwise half the body)
  and then the connection is closed;
* ``Fault.stream_error(...)``: a streaming response sends ``n`` events and
  then an ``error`` event, as the API does when it overloads mid-stream;
* ``Fault.delay(seconds)``: the request is served normally after a pause
  (for client timeouts).

Only ``count_tokens`` requests never consume faults.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal

from .errors import error_type_for

FaultKind = Literal["status", "drop", "drop_mid_stream", "stream_error", "delay"]


@dataclass(frozen=True)
class Fault:
    """One injected failure.  Build with the class methods."""

    kind: FaultKind
    status_code: int = 0
    error_type: str = ""
    message: str = ""
    retry_after: float | None = None
    should_retry: bool | None = None
    after_events: int = 0
    seconds: float = 0.0

    @classmethod
    def status(
        cls,
        code: int,
        *,
        error_type: str | None = None,
        message: str | None = None,
        retry_after: float | None = None,
        should_retry: bool | None = None,
    ) -> Fault:
        """An error response with HTTP status ``code``."""
        kind_of_error = error_type or error_type_for(code)
        return cls(
            "status",
            status_code=code,
            error_type=kind_of_error,
            message=message or f"Injected fault: {kind_of_error}",
            retry_after=retry_after,
            should_retry=should_retry,
        )

    @classmethod
    def drop(cls) -> Fault:
        """Close the connection without answering."""
        return cls("drop")

    @classmethod
    def drop_mid_stream(cls, after_events: int = 3) -> Fault:
        """Start answering, then close the connection."""
        return cls("drop_mid_stream", after_events=after_events)

    @classmethod
    def stream_error(
        cls,
        error_type: str = "overloaded_error",
        *,
        after_events: int = 3,
        message: str | None = None,
    ) -> Fault:
        """Send ``after_events`` events of a stream, then an ``error`` event."""
        return cls(
            "stream_error",
            error_type=error_type,
            message=message or f"Injected fault: {error_type}",
            after_events=after_events,
        )

    @classmethod
    def delay(cls, seconds: float) -> Fault:
        """Answer normally, but only after ``seconds``."""
        return cls("delay", seconds=seconds)

    def headers(self) -> dict[str, str]:
        """Extra response headers of a ``status`` fault."""
        headers: dict[str, str] = {}
        if self.retry_after is not None:
            headers["retry-after"] = f"{self.retry_after:g}"
            headers["retry-after-ms"] = f"{self.retry_after * 1000:g}"
        if self.should_retry is not None:
            headers["x-should-retry"] = "true" if self.should_retry else "false"
        return headers


class FaultQueue:
    """Thread-safe FIFO of faults."""

    def __init__(self) -> None:
        self._faults: list[Fault] = []
        self._lock = threading.Lock()

    def push(self, fault: Fault, times: int = 1) -> None:
        """Queue ``fault`` for the next ``times`` requests."""
        with self._lock:
            self._faults.extend([fault] * times)

    def pop(self) -> Fault | None:
        """The next fault, if any (consumes it)."""
        with self._lock:
            return self._faults.pop(0) if self._faults else None

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._faults)
