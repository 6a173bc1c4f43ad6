"""Injectable time source for the prompt-cache simulator."""

from __future__ import annotations

import threading
from collections.abc import Callable

Clock = Callable[[], float]
"""A function returning the current time in seconds (like ``time.monotonic``)."""


class ManualClock:
    """A clock that only moves when told to: ``clock.advance(301)``."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> float:
        """Move time forward by ``seconds`` and return the new time."""
        if seconds < 0:
            raise ValueError("a ManualClock cannot go back in time")
        with self._lock:
            self._now += seconds
            return self._now
