"""Scripted models: any callable ``(request) -> Reply``.

The request is the full Messages API request body as a dict (for a message
thread, the whole conversation the thread holds).  ``QueueModel`` plays back
pre-programmed replies; ``RuleModel`` (in :mod:`gitmem.fakeapi.rules`) is a
deterministic simulated memory agent.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from .reply import Reply

Model = Callable[[dict[str, Any]], Reply]
"""A scripted model."""


class ModelExhausted(RuntimeError):
    """A ``QueueModel`` was asked for more replies than it was given."""


class QueueModel:
    """Returns the given replies in order; a string is shorthand for ``Reply.text``.

    Every request it answered is kept in ``.seen`` (a copy, in order).
    Running out of replies raises :class:`ModelExhausted`, which the server
    turns into a 500 ``api_error`` whose message says so.
    """

    def __init__(self, replies: Iterable[Reply | str] = ()) -> None:
        self._replies: list[Reply] = []
        self._lock = threading.Lock()
        self.seen: list[dict[str, Any]] = []
        self.push(*replies)

    def push(self, *replies: Reply | str) -> None:
        """Queue more replies."""
        with self._lock:
            self._replies.extend(Reply.text(r) if isinstance(r, str) else r for r in replies)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._replies)

    def __call__(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            if not self._replies:
                raise ModelExhausted(f"QueueModel has no reply left (answered {len(self.seen)})")
            self.seen.append(request)
            return self._replies.pop(0)
