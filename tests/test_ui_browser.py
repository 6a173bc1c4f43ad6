"""`gitmem ui` in a real browser (Chromium driven by Playwright), clicked as a person would:
review a session hunk by hunk, and memory's hostile text inert on every page."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser import Tab, chromium, shot, tab
from test_review import SID, agent_session, person_writes
from test_team import machines, sync
from test_ui import ui

from gitmem.memory.repo import MemoryRepo

from helpers import git, gm

__all__ = ["chromium", "tab"]  # fixtures
pytestmark = pytest.mark.slow


def test_accept_one_hunk_of_a_session_and_the_decision_syncs(tmp_path: Path, tab: Tab) -> None:
    _, (laptop, desktop) = machines(tmp_path, ("laptop", "desktop"))
    with MemoryRepo(laptop) as repo:
        agent_session(repo)
    page = tab.page
    with ui(laptop) as (_, url):
        page.goto(url)
        shot(page, "overview")
        page.get_by_role("link", name=SID).first.click()
        page.locator("table.diff").get_by_text("Budget: 40k").first.wait_for()
        shot(page, "review")
        page.get_by_label("hunk 1", exact=True).check()
        page.get_by_role("button", name="Accept", exact=True).click()
        assert "accepted in part" in page.content(), page.content()
    card = git(laptop, "show", "main:cards/acme-website.md")
    assert "Budget: 40k" in card and "Owner: Ann" in card and "Call Bob on Monday" not in card
    assert "beta" not in git(laptop, "ls-tree", "--name-only", "main", "cards/")
    assert SID not in gm("-C", str(laptop), "review").out
    sync(laptop)
    sync(desktop)
    assert git(desktop, "show", "main:cards/acme-website.md") == card
    assert SID not in gm("-C", str(desktop), "review").out


def test_without_the_token_or_from_another_origin_nothing_is_served(client: Path, tab: Tab) -> None:
    with MemoryRepo(client) as repo:
        person_writes(repo)
        agent_session(repo)
    page = tab.page
    with ui(client) as (_, url):
        bare = url.split("?")[0]
        refused = page.goto(bare)
        assert refused is not None and refused.status == 401
        assert SID not in page.content()
        page.goto(url)  # the printed URL: the token becomes a cookie
        assert SID in page.content()
        # A post from the page's own origin, with the cookie but not the form's CSRF token.
        before = git(client, "rev-parse", "main")
        status = page.evaluate(
            """async ([where, sid]) => (await fetch(where + "review/" + sid, {method: "POST",
                 body: new URLSearchParams({action: "reject"})})).status""",
            [bare, SID],
        )
        assert status == 403
        foreign = page.request.get(bare, headers={"Origin": "http://evil.example"})
        assert foreign.status == 403 and SID not in foreign.text()
        assert git(client, "rev-parse", "main") == before
