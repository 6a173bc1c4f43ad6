"""Prompt-cache simulator following Anthropic's documented prompt-caching rules.

Source: "Prompt caching", Claude Developer Platform documentation,
https://platform.claude.com/docs/en/build-with-claude/prompt-caching
(breakpoints, 20-block lookback, TTLs, minimum cacheable length per model), and
the per-model minimums as quoted from that page in
https://github.com/anthropics/anthropic-sdk-python/issues/1194 and in the
LiteLLM prompt-caching notes (newer models).

Rules implemented:

* The prompt is the ordered list of blocks tools -> system -> messages
  (see :mod:`gitmem.fakeapi.prompt`).  A block with ``cache_control``
  ``{"type": "ephemeral"}`` (``"ttl": "5m"`` default, or ``"1h"``) is a
  breakpoint; at most 4 per request (checked by the validator).
* The cache key of a position is a hash of the model and the whole prefix up to
  and including that block.  Entries only exist where an earlier request had a
  breakpoint (that is where the API writes).
* For each breakpoint the simulator looks for a stored, unexpired entry at the
  breakpoint and then at each earlier block boundary, at most
  ``LOOKBACK_BLOCKS`` (20) blocks before it.  The longest hit over all
  breakpoints is read: ``cache_read_input_tokens`` is the size of that prefix.
* From there up to the last breakpoint the prefix is written
  (``cache_creation_input_tokens``) and an entry is stored at every breakpoint
  -- but only for breakpoints whose prefix reaches the model's minimum
  cacheable length; shorter prefixes are silently not cached and billed as
  plain input.  ``input_tokens`` is the rest.
* An entry lives 5 minutes (1 hour with ``"ttl": "1h"``) and the lifetime is
  refreshed each time it is read.
* The cache is scoped to one server instance (one organization).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..models import (  # noqa: F401  (re-exported)
    DEFAULT_MIN_CACHEABLE_TOKENS,
    MIN_CACHEABLE_TOKENS,
    minimum_cacheable_tokens,
)
from .clock import Clock
from .prompt import PromptBlock, breakpoints, prefix_keys

LOOKBACK_BLOCKS = 20
MAX_BREAKPOINTS = 4
TTL_SECONDS: dict[str, float] = {"5m": 300.0, "1h": 3600.0}

# The per-model minimums are facts about the models, shared with gitmem itself.


def ttl_of(cache_control: Mapping[str, Any] | None) -> str:
    """The TTL name of a breakpoint (``"5m"`` unless ``"1h"`` is given)."""
    if cache_control is None:
        return "5m"
    ttl = cache_control.get("ttl")
    return ttl if isinstance(ttl, str) and ttl in TTL_SECONDS else "5m"


@dataclass(frozen=True)
class CacheUsage:
    """How a request's input tokens were billed."""

    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    ephemeral_5m_input_tokens: int
    ephemeral_1h_input_tokens: int

    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens

    def usage(self, output_tokens: int) -> dict[str, Any]:
        """The ``usage`` object of a response."""
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.ephemeral_5m_input_tokens,
                "ephemeral_1h_input_tokens": self.ephemeral_1h_input_tokens,
            },
            "output_tokens": output_tokens,
            "service_tier": "standard",
        }


@dataclass
class _Entry:
    expires_at: float
    ttl_seconds: float


class PromptCache:
    """The cache of one organization.  Thread-safe."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            self._expire(self._clock())
            return len(self._entries)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()

    def account(self, model: str, blocks: list[PromptBlock], settings: str) -> CacheUsage:
        """Bill one request: look up, write and refresh entries as the API would."""
        keys = prefix_keys(model, blocks, settings)
        cumulative: list[int] = []
        running = 0
        for block in blocks:
            running += block.tokens
            cumulative.append(running)
        points = breakpoints(blocks)
        with self._lock:
            now = self._clock()
            self._expire(now)
            hit = self._longest_hit(keys, points)
            read = cumulative[hit] if hit >= 0 else 0
            if hit >= 0:
                entry = self._entries[keys[hit]]
                entry.expires_at = now + entry.ttl_seconds
            written = {"5m": 0, "1h": 0}
            end = read
            minimum = minimum_cacheable_tokens(model)
            for point in points:
                if cumulative[point] < minimum:
                    continue
                ttl = ttl_of(blocks[point].cache_control)
                if point > hit:
                    written[ttl] += cumulative[point] - end
                    end = cumulative[point]
                self._store(keys[point], now, TTL_SECONDS[ttl])
        creation = written["5m"] + written["1h"]
        return CacheUsage(
            input_tokens=running - read - creation,
            cache_read_input_tokens=read,
            cache_creation_input_tokens=creation,
            ephemeral_5m_input_tokens=written["5m"],
            ephemeral_1h_input_tokens=written["1h"],
        )

    def _longest_hit(self, keys: list[str], points: list[int]) -> int:
        hit = -1
        for point in points:
            for position in range(point, max(-1, point - LOOKBACK_BLOCKS - 1), -1):
                if keys[position] in self._entries:
                    hit = max(hit, position)
                    break
        return hit

    def _store(self, key: str, now: float, ttl_seconds: float) -> None:
        current = self._entries.get(key)
        if current is not None and current.expires_at >= now + ttl_seconds:
            return
        self._entries[key] = _Entry(expires_at=now + ttl_seconds, ttl_seconds=ttl_seconds)

    def _expire(self, now: float) -> None:
        for key in [key for key, entry in self._entries.items() if entry.expires_at <= now]:
            del self._entries[key]
