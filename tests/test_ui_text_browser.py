"""`gitmem ui` reading memory's text in a real browser: the workspace's clients with
their last edit as `gitmem clients` gives it, a long summary wrapped, and bidi controls
in memory's text kept from reordering the page around them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from browser import Tab, chromium, shot, tab
from test_ui import ui

from gitmem.features.edit import write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry

from helpers import gm

__all__ = ["chromium", "tab"]  # fixtures
pytestmark = pytest.mark.slow
LONG = "w" * 110 + " <b>bold</b> " + "unbroken-" * 8  # 195 characters, markup as text


def test_the_overview_lists_each_client_with_its_last_edit(hermetic: Path, tab: Tab) -> None:
    for name in ("acme", "globex", "initech"):
        assert gm("init", "--client", name).code == 0
    for name, summary in (("acme", LONG), ("globex", "Kickoff moved to March")):
        with MemoryRepo(hermetic / "gitmem" / name) as repo:
            entry = IndexEntry.make("plan", ["plan"], summary)
            write_card(repo, "site", "", "# Site\n\n## Plan\nShip it\n", entry)
    listed = json.loads(gm("clients", "--json").out)
    page = tab.page
    with ui(hermetic / "gitmem" / "acme") as (_, url):
        page.goto(url)
        table = page.locator("table.clients")
        rows = [
            [c.inner_text() for c in r.locator("td").all()] for r in table.locator("tr").all()[1:]
        ]
        cell = table.locator("td", has_text="unbroken").bounding_box()
        box = table.bounding_box()
        wide = page.evaluate("document.documentElement.scrollWidth")
        shot(page, "overview-clients")
    assert rows == [
        [
            c["name"],
            c["last_activity"][:16].replace("T", " ") if c["last_activity"] else "never",
            c["last_subject"] or "-",
        ]
        for c in listed
    ]
    assert rows[0][0] == "acme" and "w <b>bold</b> unbroken-" in rows[0][2]  # text, not markup
    assert cell is not None and box is not None and cell["height"] > 30  # wrapped
    assert cell["x"] + cell["width"] <= box["x"] + box["width"] and wide <= 1280
