"""The costs page in a real browser: the waste `gitmem usage` flags in sessions recorded
through the real SDK and the fake Messages API are marked on the chart, as many as it counts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anthropic
import pytest
from browser import Tab, chromium, shot, tab
from test_agent import api, chat, clock, configure, sdk
from test_ui import ui

from gitmem.agent.usage import load_usage
from gitmem.fakeapi import ManualClock
from gitmem.memory.repo import MemoryRepo

from helpers import gm

__all__ = ["api", "chromium", "clock", "sdk", "tab"]  # fixtures
pytestmark = pytest.mark.slow
# the number each `gitmem usage` flag gives, by the kind the chart marks it with
COUNTED = {
    "expired": r"cache expired between turns (\d+) time",
    "below minimum": r"nothing was cached in (\d+) request",
    "full-card read": r"(\d+) full-card read",
}


def _flagged(client: Path, sid: str) -> dict[str, int]:
    out = json.loads(gm("-C", str(client), "usage", "--session", sid, "--json").out)
    (flags,) = [s["flags"] for s in out["sessions"]]
    found = {k: re.search(p, " | ".join(flags)) for k, p in COUNTED.items()}
    return {k: int(m.group(1)) for k, m in found.items() if m}


def _marked(tab: Tab, url: str, sid: str) -> tuple[dict[str, int], dict[str, int]]:
    """The marks on the session's first chart summed by kind, and the key's counts by code."""
    page = tab.page
    page.goto(url)
    page.get_by_role("link", name="Costs").click()
    page.get_by_role("link", name=sid).click()
    page.wait_for_url(lambda u: "/costs?session=" in u)
    drawn: dict[str, int] = {}
    for m in page.locator("svg.chart").first.locator("text.mark").all():
        kind = str(m.get_attribute("data-flag"))
        drawn[kind] = drawn.get(kind, 0) + int(m.get_attribute("data-count") or "0")
    key = {
        str(li.get_attribute("data-code")): int(li.get_attribute("data-count") or "0")
        for li in page.locator("ul.waste li").all()
    }
    return drawn, key


def test_the_costs_chart_marks_each_waste_gitmem_usage_flags(
    client: Path, sdk: anthropic.Anthropic, clock: ManualClock, tab: Tab
) -> None:
    recall = ["remember acme Budget: 40k", "recall acme", "recall acme", "recall acme"]
    with MemoryRepo(client) as repo:
        chat(repo, sdk, recall, clock, step=600)  # turns further apart than the 5m TTL
        cold = str(load_usage(repo)[-1]["session"])
    configure(client, ('name = "claude-sonnet-5-5"', 'name = "claude-haiku-4-5"'))
    with MemoryRepo(client) as repo:
        chat(repo, sdk, ["one", "two", "three"], clock)  # a prefix below haiku's minimum
        small = str(load_usage(repo)[-1]["session"])
    want_cold, want_small = _flagged(client, cold), _flagged(client, small)
    assert set(want_cold) == {"expired", "full-card read"} and set(want_small) == {"below minimum"}
    with ui(client) as (_, url):
        got_small = _marked(tab, url, small)
        got_cold = _marked(tab, url, cold)
        shot(tab.page, "costs-waste")
    assert got_cold[0] == want_cold and got_small[0] == want_small
    assert got_cold[1] == {"exp": want_cold["expired"], "read": want_cold["full-card read"]}
    assert got_small[1] == {"min": want_small["below minimum"]}
