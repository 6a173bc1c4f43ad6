"""The index's budget (``limits.index_tokens``): the I block's size, counted on every refresh.

The count is the API's ``count_tokens`` when a key is set (kept by content under
``.git/gitmem/index-tokens.json``, so an unchanged block is never counted twice), else an
estimate of 4 bytes a token, and says which. Over budget the block is folded to fit
(index/tiers.py); above 80 % of the budget gitmem warns; when even the folded block is
over (every card's name does not fit), nothing is cut: it ends with a line that tells
the agent it is over budget (rules.md says what to do), and ``gitmem consolidate`` is
suggested.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass, replace
from typing import Any

from gitmem.index import build as index_mod
from gitmem.index import provenance
from gitmem.index.framing import INDEX_TAG
from gitmem.index.tiers import Split
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.memory.transcript import estimate_tokens

WARN_SHARE = 0.8
_KEEP = 16  # counts kept in the file: a few branches' recent blocks


@dataclass(frozen=True)
class Budget:
    """The index block's size in tokens against ``limits.index_tokens`` (``estimated``
    when not counted by the API); ``state`` is ok, warn or over."""

    tokens: int
    limit: int
    estimated: bool
    split: Split | None = None  # cards listed in full and folded, when known

    @property
    def share(self) -> float:
        return self.tokens / self.limit if self.limit else 0.0

    @property
    def state(self) -> str:
        return "over" if self.share > 1 else "warn" if self.share > WARN_SHARE else "ok"

    def to_json(self) -> dict[str, object]:
        return {
            "tokens": self.tokens,
            "limit": self.limit,
            "estimated": self.estimated,
            "share": round(self.share, 4),
            "state": self.state,
            **({"split": self.split.to_json()} if self.split else {}),
        }

    def line(self) -> str:
        how = "estimated" if self.estimated else "count_tokens"
        return (
            f"about {self.tokens:,} tokens ({how}), {self.share:.0%} of the "
            f"{self.limit:,}-token budget (limits.index_tokens)"
        )

    def warning(self) -> str | None:
        if self.state == "ok":
            return None
        if self.split is not None and self.split.folded and self.state != "over":
            return (
                f"the memory index is folded to fit its budget: {self.split.line()}; "
                "`gitmem consolidate` proposes a compaction for review"
            )
        what = "over" if self.state == "over" else "near"
        return (
            f"the memory index is {what} its budget: {self.line()}; "
            "`gitmem consolidate` proposes a compaction for review"
        )


def _file(repo: MemoryRepo) -> str:
    return str(repo.gitmem_dir / "index-tokens.json")


def _counted(repo: MemoryRepo) -> dict[str, int]:
    try:
        with open(_file(repo), encoding="utf-8") as fh:
            data = json.load(fh)
        return {str(k): int(v) for k, v in data.items()} if isinstance(data, dict) else {}
    except (OSError, ValueError, TypeError):
        return {}


def _keep(repo: MemoryRepo, key: str, tokens: int) -> None:
    counted = _counted(repo)
    counted.pop(key, None)
    counted[key] = tokens
    keep = dict(list(counted.items())[-_KEEP:])
    tmp = f"{_file(repo)}.{os.getpid()}.tmp"
    with contextlib.suppress(OSError):
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(keep, fh)
        os.replace(tmp, _file(repo))


def measure(repo: MemoryRepo, text: str, counter: Any = None, split: Split | None = None) -> Budget:
    """The block's size against the budget (with its ``split``); ``counter``: a
    ``LayerCounter`` to count with (an agent session's), else one made when a key is set."""
    return replace(_measure(repo, text, counter), split=split)


def _measure(repo: MemoryRepo, text: str, counter: Any) -> Budget:
    limit = repo.config.index_tokens
    key = f"{repo.config.model}:{hashlib.sha256(text.encode()).hexdigest()}"
    have = _counted(repo).get(key)
    if have is not None:
        return Budget(have, limit, False)
    if counter is None and (
        os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")
    ):
        import anthropic

        from gitmem.agent.token_count import LayerCounter

        counter = LayerCounter(anthropic.Anthropic(max_retries=0), repo.config.model)
    if counter is not None:
        was = counter.estimated
        counter.estimated = False
        tokens = counter.text(text)
        estimated = counter.estimated
        counter.estimated = was or estimated
        if not estimated:
            _keep(repo, key, tokens)
            return Budget(tokens, limit, False)
    return Budget(estimate_tokens(text), limit, True)


def over_line(b: Budget) -> str:
    return (
        f"Over budget: this index is {b.line()}. Nothing is left out; "
        "suggest `gitmem consolidate` to the person."
    )


def with_note(text: str, b: Budget) -> str:
    """The I block, with the over-budget line before its closing tag when it is over."""
    return text if b.state != "over" else with_marks(text, over_line(b))


def with_marks(text: str, line: str) -> str:
    """The I block with ``line`` (if any) before its closing tag, after a blank line."""
    if not line:
        return text
    close = f"</{INDEX_TAG}>\n"
    body = text[: -len(close)] if text.endswith(close) else text
    return f"{body}\n{line}\n{close}"


def block(
    repo: MemoryRepo, branch: str = MAIN, counter: Any = None, text: str | None = None
) -> tuple[str, Budget]:
    """The I block the agent sees at ``branch`` and its budget."""
    limit = repo.config.index_tokens  # a bad gitmem.toml is refused before anything is cached
    raw, split = (text, None) if text is not None else index_mod.shown(repo, branch)
    found, lost = provenance.unverified(repo, branch), provenance.rolled_back(repo)
    shapes = provenance.reshaped(repo, branch)
    raw = with_marks(raw, provenance.index_note(found, lost, shapes))
    b = measure(repo, raw, counter, split)
    assert b.limit == limit
    return with_note(raw, b), b
