"""``gitmem usage``: per-session tokens, cache share and cost, with flags for waste."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from itertools import pairwise
from typing import Any

from gitmem.errors import NotFound
from gitmem.memory import names
from gitmem.wording import count

REWRITE_SHARE = 0.2  # a layer changing on more than 1 request in 5 keeps missing the cache
COLD_SHARE = 0.1
FULL_READS = 3


@dataclass(frozen=True)
class SessionReport:
    """One session's token use from logs/usage.jsonl: requests, input, cache read and
    write, output tokens, cost with and without the cache, per layer, and flags for cache waste."""

    session: str
    requests: int
    input_tokens: int  # everything sent: uncached + written + read
    cache_read_tokens: int
    cache_write_tokens: int
    output_tokens: int
    cache_read_share: float
    cost_usd: float
    uncached_cost_usd: float
    layers: dict[str, int]
    estimated: bool
    flags: list[str] = field(default_factory=list)
    simulated: bool = False  # answered by gitmem's scripted model, not Anthropic's API

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


TTL_SECONDS = {"5m": 300, "1h": 3600}


def miss_cause(prev: dict[str, Any] | None, cur: dict[str, Any]) -> str | None:
    """Why ``cur`` did not read its stable prefix (A+B) from the cache, or None if it did:
    "first write" (the session's first request), "below minimum" (nothing was cached at
    all: no breakpoint's prefix reached the model's minimum), "layer changed" (A+B's text
    differs from the previous request's), "expired" (sent more than the TTL after the
    previous request) or "other" (evicted early, or a record without the times)."""
    stable = sum(int(cur.get("layers", {}).get(k, 0)) for k in ("A", "B"))
    if int(cur.get("cache_read_input_tokens", 0)) >= stable:
        return None
    if int(cur.get("cache_creation_input_tokens", 0)) == 0:
        return "below minimum"
    if prev is None:
        return "first write"
    if prev.get("layer_hashes", {}).get("AB") != cur.get("layer_hashes", {}).get("AB"):
        return "layer changed"
    a, b = prev.get("extra", {}).get("sent"), cur.get("extra", {}).get("sent")
    ttl = TTL_SECONDS.get(str(cur.get("ttl", "5m")), 300)
    if isinstance(a, int | float) and isinstance(b, int | float):
        return "expired" if b - a > ttl else "other"
    return "expired"  # lines written before the times were recorded: the old reading


def _flags(recs: list[dict[str, Any]]) -> list[str]:
    from gitmem.models import minimum_cacheable_tokens

    flags: list[str] = []
    turns = [r for r in recs if r.get("purpose", "turn") == "turn"]
    causes: dict[str, int] = {}
    for prev, cur in zip([None, *turns[:-1]], turns, strict=True):
        cause = miss_cause(prev, cur)
        if cause:
            causes[cause] = causes.get(cause, 0) + 1
    below = causes.get("below minimum", 0)
    if below:
        model = str(turns[-1].get("model", ""))
        flags.append(
            f"nothing was cached in {count(below, 'request')}: the prompt's prefix is below "
            f"{model}'s minimum cacheable length ({minimum_cacheable_tokens(model):,} tokens); "
            f"a longer TTL would not help"
        )
    cold = causes.get("expired", 0)
    if turns and cold and cold >= max(1, COLD_SHARE * len(turns)):
        flags.append(
            f"cache expired between turns {count(cold, 'time')}: requests further apart than the "
            f'cache TTL re-write the whole prefix (consider cache_ttl = "1h")'
        )
    other = causes.get("other", 0)
    if other and other >= max(1, COLD_SHARE * len(turns)):
        flags.append(
            f"the cache missed {count(other, 'time')} within its TTL with the same layers "
            f"(evicted early, or another prompt changed first)"
        )
    for layer in ("AB", "I", "S"):
        changes = sum(
            1
            for a, b in pairwise(turns)
            if a.get("layer_hashes", {}).get(layer) != b.get("layer_hashes", {}).get(layer)
        )
        if turns and changes > max(2, REWRITE_SHARE * len(turns)):
            flags.append(
                f"layer {layer} was rewritten {count(changes, 'time')} in "
                f"{count(len(turns), 'request')}"
            )
    full = sum(int(r.get("full_card_reads", 0)) for r in recs)
    if full >= FULL_READS:
        flags.append(
            f"{count(full, 'full-card read')} where the index would have done: read one section "
            f"(section_id) instead"
        )
    return flags


def usage_by_session(
    records: list[dict[str, Any]], session: str | None = None
) -> list[SessionReport]:
    """One report per session, or only ``session``'s (NotFound when it has no usage)."""
    if session is not None:
        names.session(session)
    by: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if session is None or r.get("session") == session:
            by.setdefault(str(r.get("session")), []).append(r)
    if session is not None and not by:
        raise NotFound(f"no usage recorded for session {session!r}; `gitmem usage` lists them all")
    out = []
    for sid, recs in sorted(by.items()):
        inp = sum(r.get("input_tokens", 0) for r in recs)
        cw = sum(r.get("cache_creation_input_tokens", 0) for r in recs)
        cr = sum(r.get("cache_read_input_tokens", 0) for r in recs)
        layers = {k: sum(int(r.get("layers", {}).get(k, 0)) for r in recs) for k in "ABISCE"}
        total = inp + cw + cr
        out.append(
            SessionReport(
                session=sid,
                requests=len(recs),
                input_tokens=total,
                cache_read_tokens=cr,
                cache_write_tokens=cw,
                output_tokens=sum(r.get("output_tokens", 0) for r in recs),
                cache_read_share=round(cr / total, 4) if total else 0.0,
                cost_usd=round(sum(r.get("cost_usd", 0.0) for r in recs), 6),
                uncached_cost_usd=round(sum(r.get("uncached_cost_usd", 0.0) for r in recs), 6),
                layers=layers,
                estimated=any(r.get("estimated") for r in recs),
                flags=_flags(recs),
                simulated=all(_simulated(r) for r in recs),
            )
        )
    return out


@dataclass(frozen=True)
class UsageTotals:
    """Usage summed over a group of responses: every session, or one model's."""

    name: str  # "all", or the model
    sessions: int
    requests: int
    input_tokens: int  # everything sent: uncached + written + read
    cache_read_tokens: int
    cache_write_tokens: int
    output_tokens: int
    cost_usd: float
    uncached_cost_usd: float

    @property
    def cache_read_share(self) -> float:
        return round(self.cache_read_tokens / self.input_tokens, 4) if self.input_tokens else 0.0

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "cache_read_share": self.cache_read_share}

    def line(self) -> str:
        return (
            f"{count(self.requests, 'request')}, input {self.input_tokens:,} tokens "
            f"({self.cache_read_share:.0%} read from cache), output {self.output_tokens:,}, "
            f"cost {_versus(self.cost_usd, self.uncached_cost_usd)}"
        )


def _versus(cost: float, uncached: float) -> str:
    """ "$0.0015 vs $0.0064 uncached (76% saved)"; writing the cache costs more at first."""
    saved = 1 - cost / uncached if uncached else 0.0
    what = f"{saved:.0%} saved" if saved >= 0 else f"{-saved:.0%} more: the cache was written"
    return f"${cost:.4f} vs ${uncached:.4f} uncached ({what})"


def _sum(name: str, recs: list[dict[str, Any]]) -> UsageTotals:
    inp, cw, cr = (
        sum(int(r.get(k, 0)) for r in recs)
        for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    return UsageTotals(
        name=name,
        sessions=len({str(r.get("session")) for r in recs}),
        requests=len(recs),
        input_tokens=inp + cw + cr,
        cache_read_tokens=cr,
        cache_write_tokens=cw,
        output_tokens=sum(int(r.get("output_tokens", 0)) for r in recs),
        cost_usd=round(sum(float(r.get("cost_usd", 0.0)) for r in recs), 6),
        uncached_cost_usd=round(sum(float(r.get("uncached_cost_usd", 0.0)) for r in recs), 6),
    )


def _simulated(record: dict[str, Any]) -> bool:
    return bool((record.get("extra") or {}).get("simulated"))


def usage_totals(
    records: list[dict[str, Any]], session: str | None = None
) -> tuple[UsageTotals, list[UsageTotals]]:
    """Usage over every session (or only ``session``'s), and per model, models sorted."""
    recs = [r for r in records if session is None or r.get("session") == session]
    by: dict[str, list[dict[str, Any]]] = {}
    for r in recs:
        model = str(r.get("model") or "unknown")
        by.setdefault(f"{model} (simulated)" if _simulated(r) else model, []).append(r)
    return _sum("all", recs), [_sum(m, rs) for m, rs in sorted(by.items())]


def render(
    reports: list[SessionReport], total: tuple[UsageTotals, list[UsageTotals]] | None = None
) -> str:
    if not reports:
        return "No model usage recorded yet.\n"
    lines = []
    for r in reports:
        by = " (simulated model)" if r.simulated else ""
        lines.append(f"session {r.session}{by}: {count(r.requests, 'request')}")
        lines.append(
            f"  input {r.input_tokens:,} tokens ({r.cache_read_share:.0%} read from cache, "
            f"{r.cache_write_tokens:,} written), output {r.output_tokens:,}"
        )
        lines.append(f"  cost {_versus(r.cost_usd, r.uncached_cost_usd)}")
        est = " (estimated)" if r.estimated else ""
        lines.append("  layers" + est + ": " + ", ".join(f"{k} {v:,}" for k, v in r.layers.items()))
        lines += [f"  ! {f}" for f in r.flags]
    if total is not None:
        every, models = total
        lines.append(f"total over {count(every.sessions, 'session')}: {every.line()}")
        lines += [f"  {m.name}: {m.line()}" for m in models]
    return "\n".join(lines) + "\n"
