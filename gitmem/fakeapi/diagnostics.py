"""Cache diagnostics: why a request could not reuse the previous request's prefix.

Source: "Cache diagnostics", https://platform.claude.com/docs/en/build-with-claude/cache-diagnostics,
and the SDK types ``anthropic.types.Diagnostics`` / ``CacheMiss*``.

* A request that carries a ``diagnostics`` object gets a fingerprint stored
  under its response id (hashes and token counts only).
* With ``diagnostics.previous_message_id`` the new request is compared with
  that fingerprint, in prefix order, and the first divergence is reported:
  ``model_changed``, ``tools_changed``, ``system_changed``,
  ``messages_changed`` (an earlier message differs instead of messages only
  being appended), or ``unavailable`` (model, tools, system and messages match
  but ``tool_choice`` / ``thinking`` differ); ``previous_message_not_found``
  for an unknown id.  ``cache_missed_input_tokens`` is the previous request's
  cacheable prefix (up to its last breakpoint, or its whole prompt without
  one) minus the tokens of the prefix both requests share.
* No divergence: the response's ``diagnostics`` is ``null``, as the API
  documents ("null ... when it did and no prompt-cache divergence was
  detected").  The comparison is structural: ``cache_control`` markers are
  ignored, and whether the cache actually hit does not matter.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .prompt import PromptBlock, breakpoints, settings_payload
from .tokens import canonical_json, content_blocks, without_cache_control


@dataclass(frozen=True)
class Fingerprint:
    """What the server keeps of a request for later comparison."""

    model: str
    tools: tuple[str, ...]
    system: tuple[str, ...]
    messages: tuple[str, ...]
    settings: str
    blocks: tuple[tuple[str, str, int], ...]
    """(section, payload, tokens) of every prompt block, in prefix order."""
    cacheable_tokens: int


def fingerprint(request: Mapping[str, Any], blocks: list[PromptBlock]) -> Fingerprint:
    """The fingerprint of ``request`` whose prompt is ``blocks``."""
    points = breakpoints(blocks)
    end = points[-1] + 1 if points else len(blocks)
    messages = tuple(
        canonical_json(
            [m.get("role"), [without_cache_control(b) for b in content_blocks(m.get("content"))]]
        )
        for m in request.get("messages") or []
        if isinstance(m, Mapping)
    )
    return Fingerprint(
        model=str(request.get("model")),
        tools=tuple(b.payload for b in blocks if b.section == "tools"),
        system=tuple(b.payload for b in blocks if b.section == "system"),
        messages=messages,
        settings=settings_payload(request),
        blocks=tuple((b.section, b.payload, b.tokens) for b in blocks),
        cacheable_tokens=sum(b.tokens for b in blocks[:end]),
    )


def _shared_prefix_tokens(previous: Fingerprint, current: Fingerprint) -> int:
    if previous.model != current.model:
        return 0
    shared = 0
    for before, now in zip(previous.blocks, current.blocks, strict=False):
        if before[:2] != now[:2] or (
            before[0] == "messages" and previous.settings != current.settings
        ):
            break
        shared += now[2]
    return shared


def cache_miss_reason(previous: Fingerprint | None, current: Fingerprint) -> dict[str, Any] | None:
    """The ``cache_miss_reason`` object, or ``None`` when nothing diverged."""
    if previous is None:
        return {"type": "previous_message_not_found"}
    if previous.model != current.model:
        kind = "model_changed"
    elif previous.tools != current.tools:
        kind = "tools_changed"
    elif previous.system != current.system:
        kind = "system_changed"
    elif current.messages[: len(previous.messages)] != previous.messages:
        kind = "messages_changed"
    elif previous.settings != current.settings:
        return {"type": "unavailable"}
    else:
        return None
    missed = max(0, previous.cacheable_tokens - _shared_prefix_tokens(previous, current))
    return {"type": kind, "cache_missed_input_tokens": missed}


class DiagnosticsStore:
    """Fingerprints by response id.  Thread-safe."""

    def __init__(self) -> None:
        self._fingerprints: dict[str, Fingerprint] = {}
        self._lock = threading.Lock()

    def diagnose(
        self, request: Mapping[str, Any], blocks: list[PromptBlock], response_id: str
    ) -> dict[str, Any] | None:
        """Store this request's fingerprint and return the response's ``diagnostics`` value."""
        options = request.get("diagnostics")
        current = fingerprint(request, blocks)
        previous_id = options.get("previous_message_id") if isinstance(options, Mapping) else None
        with self._lock:
            previous = self._fingerprints.get(str(previous_id)) if previous_id else None
            self._fingerprints[response_id] = current
        if not previous_id:
            return None
        reason = cache_miss_reason(previous, current)
        return None if reason is None else {"cache_miss_reason": reason}
