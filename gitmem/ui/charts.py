"""The cost charts, drawn on the server as inline SVG from `gitmem usage`'s numbers: no
script, nothing fetched, every label escaped."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from gitmem.agent.usage_report import SessionReport, miss_cause, usage_by_session

LAYERS = {
    "A": "#0969da",
    "B": "#54aeff",
    "I": "#8250df",
    "S": "#bf8700",
    "C": "#1a7f37",
    "E": "#cf222e",
}
CACHE = {"read": "#1a7f37", "written": "#bf8700", "uncached": "#cf222e"}
W, H, PAD = 880, 220, 48
# the waste `gitmem usage` flags, as marked over a request's bar: the code drawn, and what it means
WASTE = {
    "expired": (
        "exp",
        "cache expired between turns: sent more than the TTL after the last request",
    ),
    "below minimum": (
        "min",
        "nothing cached: the prefix is below the model's minimum cacheable length",
    ),
    "layer changed": ("chg", "cache missed: the tools, rules or persona (A+B) changed"),
    "other": ("miss", "cache missed within its TTL with the same layers"),
    "full-card read": ("read", "a full-card read where the index would have done"),
}


@dataclass(frozen=True)
class Bar:
    label: str
    parts: dict[str, float]  # series name -> value, stacked in this order
    marks: tuple[tuple[str, int], ...] = ()  # waste drawn over the bar: (WASTE kind, how many)


def stacked(bars: Sequence[Bar], colours: dict[str, str], unit: str) -> str:
    """A stacked bar chart with a legend giving each series' total."""
    top = max((sum(b.parts.values()) for b in bars), default=0) or 1
    step = (W - PAD - 8) / max(len(bars), 1)
    out = [
        f'<svg class="chart" viewBox="0 0 {W} {H + 60}" role="img" xmlns="http://www.w3.org/2000/svg">'
    ]
    out.append(f'<text x="4" y="14" class="axis">{_num(top)} {escape(unit)}</text>')
    out.append(f'<line x1="{PAD}" y1="{H}" x2="{W}" y2="{H}" class="base"/>')
    for i, b in enumerate(bars):
        x, y = PAD + i * step, float(H)
        for name, value in b.parts.items():
            h = value / top * (H - 24)
            y -= h
            out.append(
                f'<rect x="{x + 1:.1f}" y="{y:.1f}" width="{max(step - 2, 1):.1f}" height="{h:.1f}" '
                f'fill="{colours[name]}"><title>{escape(b.label)} {escape(name)}: {_num(value)}</title></rect>'
            )
        out += _marks(b.marks, x + step / 2, y)
        if len(bars) <= 40 or i % (len(bars) // 20 + 1) == 0:
            out.append(
                f'<text x="{x + step / 2:.1f}" y="{H + 14}" class="tick" text-anchor="middle">{escape(b.label)}</text>'
            )
    for j, name in enumerate(colours):
        total = sum(b.parts.get(name, 0) for b in bars)
        lx = PAD + j * 140
        out.append(f'<rect x="{lx}" y="{H + 30}" width="12" height="12" fill="{colours[name]}"/>')
        out.append(
            f'<text x="{lx + 16}" y="{H + 41}" class="legend" data-series="{escape(name)}" '
            f'data-total="{total:g}">{escape(name)}: {_num(total)}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def _marks(marks: Sequence[tuple[str, int]], x: float, y: float) -> list[str]:
    """A bar's waste marks, stacked above it, each naming its kind and count for a reader."""
    out = []
    for k, (kind, n) in enumerate(marks):
        code, why = WASTE[kind]
        times = f"\u00d7{n}" if n > 1 else ""
        out.append(
            f'<text x="{x:.1f}" y="{y - 4 - 14 * k:.1f}" class="mark" text-anchor="middle" '
            f'data-flag="{escape(kind)}" data-count="{n}">{code}{times}'
            f"<title>{escape(why)}</title></text>"
        )
    return out


def _num(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 or v == int(v) else f"{v:,.4f}"


@dataclass(frozen=True)
class SessionCosts:
    report: SessionReport
    layers_svg: str
    cache_svg: str
    marked: list[tuple[str, str, int]]  # (code, meaning, how many) of each waste kind drawn


def session_costs(records: list[dict[str, Any]], sid: str) -> SessionCosts:
    """One session's charts: tokens per request by layer, and cache read / written /
    uncached per request, the cache misses `gitmem usage` counts marked."""
    (rep,) = usage_by_session(records, sid)
    recs = [r for r in records if r.get("session") == sid]
    turns = [r for r in recs if r.get("purpose", "turn") == "turn"]
    why = {
        id(cur): miss_cause(prev, cur) for prev, cur in zip([None, *turns[:-1]], turns, strict=True)
    }
    layer_bars, cache_bars = [], []
    drawn: dict[str, int] = {}
    for n, r in enumerate(recs, 1):
        mark = _waste(why.get(id(r)), int(r.get("full_card_reads", 0)))
        for kind, times in mark:
            drawn[kind] = drawn.get(kind, 0) + times
        layers = r.get("layers", {})
        layer_bars.append(Bar(str(n), {k: float(layers.get(k, 0)) for k in LAYERS}, mark))
        read = float(r.get("cache_read_input_tokens", 0))
        wrote = float(r.get("cache_creation_input_tokens", 0))
        cache_bars.append(
            Bar(
                str(n),
                {"read": read, "written": wrote, "uncached": float(r.get("input_tokens", 0))},
                mark,
            )
        )
    marked = [(WASTE[k][0], WASTE[k][1], n) for k, n in drawn.items()]
    return SessionCosts(
        rep, stacked(layer_bars, LAYERS, "tokens"), stacked(cache_bars, CACHE, "tokens"), marked
    )


def _waste(miss: str | None, full_reads: int) -> tuple[tuple[str, int], ...]:
    """What one request wasted, as `gitmem usage` counts it: its cache miss (the first
    write is no waste) and its full-card reads."""
    marks = [(miss, 1)] if miss and miss != "first write" else []
    return (*marks, *([("full-card read", full_reads)] if full_reads else []))


def daily_costs(records: list[dict[str, Any]]) -> str:
    """Dollars per day, with the cache and without it (side by side as two series)."""
    days: dict[str, list[float]] = {}
    for r in records:
        day = str(r.get("at") or "")[:10] or "?"
        got = days.setdefault(day, [0.0, 0.0])
        got[0] += float(r.get("cost_usd", 0.0))
        got[1] += float(r.get("uncached_cost_usd", 0.0))
    bars = [
        Bar(day, {"with cache": cost, "saved by the cache": max(uncached - cost, 0.0)})
        for day, (cost, uncached) in sorted(days.items())
    ]
    return stacked(bars, {"with cache": "#0969da", "saved by the cache": "#d0d7de"}, "USD")
