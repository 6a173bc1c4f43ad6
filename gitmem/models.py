"""Facts about Claude models that gitmem needs: the minimum cacheable prompt length."""

from __future__ import annotations

import re

# Prompt caching silently skips a prefix shorter than this (tokens). From Anthropic's
# prompt-caching documentation; unknown models get the common 1024.
DEFAULT_MIN_CACHEABLE_TOKENS = 1024
MIN_CACHEABLE_TOKENS: dict[str, int] = {
    "claude-opus-5": 512,
    "claude-fable-5": 512,
    "claude-mythos-5": 512,
    "claude-opus-4-8": 1024,
    "claude-sonnet-5": 1024,
    "claude-sonnet-4-6": 1024,
    "claude-sonnet-4-5": 1024,
    "claude-opus-4-1": 1024,
    "claude-opus-4": 1024,
    "claude-sonnet-4": 1024,
    "claude-3-7-sonnet": 1024,
    "claude-opus-4-7": 2048,
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-haiku-4-5": 4096,
    "claude-3-5-haiku": 2048,
    "claude-3-haiku": 2048,
}
_DATE_SUFFIX = re.compile(r"-\d{8}$")


def minimum_cacheable_tokens(model: str) -> int:
    """The shortest prefix (in tokens) that ``model`` will cache."""
    base = _DATE_SUFFIX.sub("", model)
    base = base.removesuffix("-latest")
    return MIN_CACHEABLE_TOKENS.get(base, DEFAULT_MIN_CACHEABLE_TOKENS)
