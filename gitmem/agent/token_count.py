"""Token counts of each prompt layer, from the API's count_tokens, memoised by content.

A text's count is ``count_tokens`` of a one-message request holding it, less the
same request holding a single character (the request's fixed overhead). When
counting fails the count is estimated (4 bytes a token) and flagged as such.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from gitmem.memory.transcript import estimate_tokens


class LayerCounter:
    def __init__(self, client: Any, model: str) -> None:
        self.client = client
        self.model = model
        self.memo: dict[str, int] = {}
        self.estimated = False
        self._baseline: int | None = None

    def _count(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            kwargs["tools"] = tools
        return int(self.client.messages.count_tokens(**kwargs).input_tokens)

    def _base(self) -> int:
        if self._baseline is None:
            self._baseline = self._count([{"role": "user", "content": "."}], None) - 1
        return self._baseline

    def text(self, text: str, tools: list[dict[str, Any]] | None = None) -> int:
        if not text and not tools:
            return 0
        key = hashlib.sha256(
            (text + "\0" + json.dumps(tools, sort_keys=True) if tools else text).encode()
        ).hexdigest()
        if key in self.memo:
            return self.memo[key]
        try:
            n = self._count([{"role": "user", "content": text or "."}], tools) - self._base()
            n = max(0, n - (1 if not text else 0))
        except Exception:  # counting is best effort: no endpoint, no network, a fake API
            self.estimated = True
            n = estimate_tokens(text) + (estimate_tokens(json.dumps(tools)) if tools else 0)
        self.memo[key] = n
        return n
