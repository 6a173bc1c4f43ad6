"""`gitmem ui` in a real browser (Chromium driven by Playwright), clicked as a person would:
review a session hunk by hunk, and memory's hostile text inert on every page."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest
from browser import Tab, chromium, shot, tab
from test_budget import budget, fill, set_limit
from test_review import CARD, OTHER, SID, agent_session, person_writes
from test_team import machines, sync
from test_ui import ui

from gitmem.features.edit import write_card
from gitmem.features.session_live import transcript_file
from gitmem.memory.cards import sections
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.review import session_branches as sessions

from helpers import git, gm

if TYPE_CHECKING:
    from playwright.sync_api import Browser

__all__ = ["chromium", "tab"]  # fixtures
pytestmark = pytest.mark.slow


def test_accept_one_hunk_of_a_session_and_the_decision_syncs(tmp_path: Path, tab: Tab) -> None:
    _, (laptop, desktop) = machines(tmp_path, ("laptop", "desktop"))
    with MemoryRepo(laptop) as repo:
        agent_session(repo)
    page = tab.page
    with ui(laptop) as (_, url):
        page.goto(url)
        assert page.locator("p.cloud").get_by_role("link", name="acme-website").count() == 1
        shot(page, "overview")
        page.get_by_role("link", name="Review", exact=True).click()
        page.wait_for_url("**/review")
        shot(page, "review-list")
        page.get_by_role("link", name=SID).first.click()
        page.locator("table.diff").get_by_text("Budget: 40k").first.wait_for()
        shot(page, "review")
        page.get_by_label("hunk 1", exact=True).check()
        page.get_by_role("button", name="Accept", exact=True).click()
        page.locator("section.done").get_by_text("accepted in part").wait_for()
    card = git(laptop, "show", "main:cards/acme-website.md")
    assert "Budget: 40k" in card and "Owner: Ann" in card and "Call Bob on Monday" not in card
    assert "beta" not in git(laptop, "ls-tree", "--name-only", "main", "cards/")
    assert SID not in gm("-C", str(laptop), "review").out
    sync(laptop)
    sync(desktop)
    assert git(desktop, "show", "main:cards/acme-website.md") == card
    assert SID not in gm("-C", str(desktop), "review").out


def test_a_session_side_by_side_and_back_with_javascript_off(
    client: Path, chromium: Browser
) -> None:
    with MemoryRepo(client) as repo:
        person_writes(repo)
        agent_session(repo)
    ctx = chromium.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    with ui(client) as (_, url):
        page.goto(url)
        page.goto(url.split("?")[0] + f"review/{SID}")
        assert page.locator("table.diff.split").count() == 0
        page.get_by_role("link", name="Side by side").click()
        page.wait_for_url(f"**/review/{SID}?view=split")
        row = page.locator("table.diff.split tr", has_text="Budget: 40k").first
        cells = [c.inner_text() for c in row.locator("td").all()]
        shot(page, "review-split")
        page.get_by_role("link", name="Unified").click()
        page.wait_for_url(f"**/review/{SID}")
        unified = page.locator("table.diff").first.inner_text()
    ctx.close()
    assert cells == ["4", "Budget: 30k", "4", "Budget: 40k"]  # old beside new, same line
    assert "-Budget: 30k" in unified and "+Budget: 40k" in unified


def test_older_edits_of_a_card_and_a_section_back_to_the_first_with_javascript_off(
    client: Path, chromium: Browser
) -> None:
    with MemoryRepo(client) as repo:
        person_writes(repo)  # "Budget set to 30k", the card's first edit
        for n in range(21):  # three pages of edits: 10, 10, then 2
            entry = IndexEntry.make("budget", ["budget"], f"Budget to {31 + n}k")
            write_card(repo, "acme-website", f"Budget: {30 + n}k", f"Budget: {31 + n}k", entry)
    ctx = chromium.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    with ui(client) as (_, url):
        page.goto(url)
        page.goto(url.split("?")[0] + "cards/acme-website")
        newest = page.locator("table.timeline").inner_text()
        for _ in range(2):
            page.get_by_role("link", name="older edits").click()
            page.wait_for_url("**/cards/acme-website?before=*")
        oldest = page.locator("table.timeline").inner_text()
        last = page.get_by_role("link", name="older edits").count()
        shot(page, "card-older")
        page.get_by_role("link", name="newer edits").click()
        page.wait_for_url("**/cards/acme-website?skip=10")
        middle = page.locator("table.timeline").inner_text()
        page.goto(url.split("?")[0] + "cards/acme-website")
        page.get_by_role("link", name="budget", exact=True).click()
        for _ in range(2):
            page.get_by_role("link", name="older edits").click()
            page.wait_for_url("**/cards/acme-website/budget?before=*")
        values = page.locator("table.values").inner_text()
    ctx.close()
    assert "Budget to 51k" in newest and "Budget to 42k" in newest and "41k" not in newest
    assert "Budget to 41k" in middle and "Budget to 32k" in middle and "51k" not in middle
    assert "Budget set to 30k" in oldest and "Budget to 31k" in oldest and "32k" not in oldest
    assert last == 0  # the card's first edit is on the last page
    assert "Budget: 30k" in values and "Budget: 31k" in values and "32k" not in values


def test_the_overview_shows_the_index_budget_and_tiers_as_the_cli_does(
    client: Path, tab: Tab
) -> None:
    with MemoryRepo(client) as repo:
        fill(repo, 30)
    set_limit(client, budget(client)["tokens"] // 2)  # folded to fit
    cli = budget(client)
    page = tab.page
    with ui(client) as (_, url):
        page.goto(url)
        cells = page.locator("table.budget tr").all()
        shown = {r.locator("th").inner_text(): r.locator("td").first.inner_text() for r in cells}
        said = page.locator("table.budget + p").inner_text()
        shot(page, "overview-index")
    split = cli["split"]
    assert split["folded_sections"] > 0 and split["full"]
    assert shown == {
        "Tokens": f"{cli['tokens']:,}",
        "Budget": f"{cli['limit']:,}",
        "Share": f"{cli['share']:.0%}",
        "Cards": f"{split['cards']:,}",
        "Listed in full": f"{len(split['full']):,}",
        "Folded to a line": f"{split['lines']:,}",
        "Named only": f"{split['named']:,}",
        "Sections folded": f"{split['folded_sections']:,}",
    }
    assert gm("-C", str(client), "index", "--budget").out.split("Split: ")[1].strip() in said


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


def test_revert_a_session_from_the_history_page(client: Path, tab: Tab) -> None:
    with MemoryRepo(client) as repo:
        person_writes(repo)
        agent_session(repo, policy="auto")  # landed on main as it ended
    assert "Budget: 40k" in git(client, "show", "main:cards/acme-website.md")
    page = tab.page
    with ui(client) as (_, url):
        page.goto(url)
        page.get_by_role("link", name="History").click()
        page.wait_for_url("**/history")
        shot(page, "history")
        page.get_by_role("link", name="revert session").first.click()
        page.wait_for_url(f"**/revert/{SID}")
        assert page.locator("table.diff").get_by_text("+Budget: 40k").count() == 1
        shot(page, "revert")
        page.get_by_role("button", name="Revert", exact=True).click()
        page.get_by_text(f"reverted session {SID}", exact=False).wait_for()
    assert git(client, "show", "main:cards/acme-website.md") == CARD
    assert "beta" not in git(client, "ls-tree", "--name-only", "main", "cards/")


def test_search_as_of_a_day_and_open_the_value_memory_held(
    client: Path, tab: Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemoryRepo(client) as repo:
        person_writes(repo)  # 2025-11-30: Budget: 30k
        monkeypatch.setenv("GIT_AUTHOR_DATE", "1766000000 +0000")  # 2025-12-17
        monkeypatch.setenv("GIT_COMMITTER_DATE", "1766000000 +0000")
        entry = IndexEntry.make("budget", ["budget"], "Budget raised to 55k")
        write_card(repo, "acme-website", "Budget: 30k", "Budget: 55k", entry)
    page = tab.page
    with ui(client) as (_, url):
        page.goto(url)
        page.get_by_role("link", name="Search").click()
        page.get_by_label("query").fill("budget")
        page.get_by_label("as of").fill("2025-12-01")
        page.get_by_role("button", name="Search").click()
        page.wait_for_url(lambda u: "/search?" in u)
        shot(page, "search")
        assert "as memory held it on 2025-12-01" in page.content()
        page.locator("ol.hits a").first.click()
        page.wait_for_url(lambda u: "/show" in u)
        shown = page.locator("pre.block").inner_text()
        shot(page, "show")
        page.get_by_role("link", name="Cards").click()
        page.get_by_role("link", name="acme-website").click()
        page.locator(".markdown").wait_for()
        assert "Budget: 55k\nOwner: Ann" in page.locator(".markdown").inner_text()
        shot(page, "card")
        page.get_by_role("link", name="budget", exact=True).click()
        page.wait_for_url("**/cards/acme-website/budget")
        values = page.locator("table.values").inner_text()
        shot(page, "section")
        page.goto(url.split("?")[0] + "index")
        shot(page, "index")
    assert "Budget: 30k" in shown and "55k" not in shown
    assert values.index("Budget: 55k") < values.index("Budget: 30k")  # newest first


def test_the_cost_chart_totals_are_gitmem_usage_s(client: Path, tab: Tab) -> None:
    asked = gm("-C", str(client), "ask", "--simulated", "--json", "search hello")
    assert asked.code == 0, asked.err
    sid = json.loads(asked.out)["session"]
    usage = json.loads(gm("-C", str(client), "usage", "--session", sid, "--json").out)
    (layers,) = [s["layers"] for s in usage["sessions"]]
    page = tab.page
    with ui(client) as (_, url):
        page.goto(url)
        page.get_by_role("link", name="Costs").click()
        page.get_by_role("link", name=sid).click()
        page.wait_for_url(lambda u: "/costs?session=" in u)
        shot(page, "costs")
        legend = page.locator("svg.chart").first.locator("text.legend")
        drawn = {
            str(t.get_attribute("data-series")): float(t.get_attribute("data-total") or "nan")
            for t in legend.all()
        }
        cost = page.locator("section.lead h2").inner_text()
    assert drawn == {k: float(v) for k, v in layers.items()} and sum(drawn.values()) > 0
    assert f"${usage['sessions'][0]['cost_usd']:.4f}" in cost


def test_a_server_killed_in_an_accept_is_finished_by_recover(
    client: Path, tmp_path: Path, tab: Tab
) -> None:
    pid, hook = pending_with_a_killer(client, tmp_path)
    page = tab.page
    with ui(client) as (proc, url):
        pid.write_text(str(proc.pid))
        page.goto(url + "&next=1")
        page.goto(url.split("?")[0] + f"review/{SID}")
        page.get_by_role("button", name="Accept", exact=True).click(no_wait_after=True)
        assert proc.wait(timeout=60) == -signal.SIGKILL  # killed with main moved
    hook.unlink()
    assert gm("-C", str(client), "review", SID, "--accept").code == 4  # interrupted
    done = gm("-C", str(client), "recover")
    assert done.code == 0 and f"recorded the acceptance of session {SID}" in done.out
    assert "Call Bob on Monday" in git(client, "show", "main:cards/acme-website.md")
    assert SID not in gm("-C", str(client), "review").out


# Kills the server once git has moved main in its accept (the reference-transaction hook
# runs as the server's child), as tests/test_review_interrupt.py kills the CLI.
KILLER = """#!/bin/sh
[ "$1" = committed ] || exit 0
grep -q ' refs/heads/main$' || exit 0
[ -e {mark} ] && exit 0
touch {mark}
kill -KILL "$(cat {pid})"
"""


def pending_with_a_killer(client: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A person's edit and a pending agent session, and KILLER armed as the repo's
    reference-transaction hook: the file the test writes the server's pid to, and the hook."""
    with MemoryRepo(client) as repo:
        person_writes(repo)
        agent_session(repo)
    mark, pid = tmp_path / "fired", tmp_path / "pid"
    hook = client / ".git" / "hooks" / "reference-transaction"
    hook.write_text(KILLER.format(mark=mark, pid=pid))
    hook.chmod(0o755)
    return pid, hook


SCRIPT = "script:not([src='/static/copy.js'])"  # any but the page's own Copy button's
# Each would run script, load an image that runs script, navigate, or close a tag the
# page opened, if memory's text reached the page unescaped.
PLANT = (
    '<script>window.pwned=1</script><img src=x onerror="window.pwned=2;alert(2)">'
    "</textarea><script>window.pwned=3</script></pre><svg onload=window.pwned=4>"
    " [run](javascript:window.pwned=5) [data](data:text/html,<script>alert(6)</script>)"
    ' <a href="javascript:window.pwned=7">a</a> <https://x/"onmouseover="window.pwned=8>'
)
SHORT = (
    "<img src=x onerror=window.pwned=9></textarea><script>window.pwned=9</script>"  # fits a summary
)


def _plant_everywhere(client: Path) -> str:
    """Plants in a card's text and section headings, index entries, a pending session's
    transcript and commit summary, a hostile commit's message, trailers and file name
    (written with git plumbing), and a remote's URL. Returns the hostile commit."""
    with MemoryRepo(client) as repo:
        person_writes(repo)
        text = f"# Acme\n\n## Plan\n{PLANT}\n\n## Notes {SHORT}\n```\n{SHORT}\n```\n"
        write_card(repo, "hostile", "", text, IndexEntry.make("plan", ["plan"], f"sum {SHORT}"))
        s = sessions.start_session(repo, OTHER)
        entry = IndexEntry.make("plan", ["plan"], f"agent {SHORT}")
        write_card(
            repo,
            "hostile",
            PLANT,
            f"{PLANT} again",
            entry,
            session=OTHER,
            actor="agent",
            branch=s.branch,
        )
        said = {"at": "2025-11-30T10:20:00Z", "role": "user", "text": PLANT, "content": []}
        transcript_file(repo, OTHER).write_text(json.dumps(said) + "\n")
        sessions.finish_session(repo, s, "review")
    blob = git(client, "hash-object", "-w", "--stdin", input=PLANT.encode()).strip()
    listing = git(client, "ls-tree", "main^{tree}")
    listing += f"100644 blob {blob}\t{PLANT[:60].replace('/', '')}.md\n"
    tree = git(client, "mktree", input=listing.encode()).strip()
    trailers = "".join(
        f"Gitmem-{k}: {PLANT}\n" for k in ("Card", "Section", "Summary", "Session", "Actor")
    )
    message = f"{PLANT}\n\n{PLANT}\n\n{trailers}"
    commit = git(client, "commit-tree", tree, "-p", "main", "-m", message).strip()
    git(client, "update-ref", "refs/heads/main", commit)
    git(client, "reset", "-q", "--hard", "main")
    git(client, "remote", "add", "origin", f"file:///tmp/{PLANT}")
    return commit


def test_hostile_memory_text_is_inert_on_every_page(client: Path, tab: Tab) -> None:
    commit = _plant_everywhere(client)
    page = tab.page
    with ui(client) as (_, url):
        home = url.split("?")[0]
        page.goto(url)
        notes = f"cards/hostile/{sections((client / 'cards/hostile.md').read_text())[-1].id}"
        paths = [
            "", "review", f"review/{OTHER}", "history", "cards", "cards/hostile", "index",
            "search?q=pwned+plan", "costs", f"revert/{commit}", f"show?ref=hostile/plan@{commit}",
            "cards/hostile/plan", notes,
            f"review/{quote(PLANT)}", f"cards/{quote(PLANT)}", f"show?ref={quote(PLANT)}",
            f"cards/hostile/{quote(SHORT.replace('/', ''))}",
        ]  # fmt: skip
        seen = ""
        for n, path in enumerate(paths):
            answer = page.goto(home + path)
            assert answer is not None and (answer.status == 200 or n >= 13), path
            seen += page.content()
            assert page.evaluate("typeof window.pwned") == "undefined", path
            assert page.url.startswith(home), path  # nothing navigated away
            bad = f"{SCRIPT}, [onerror], [onload], [onmouseover], a[href^='javascript' i], a[href^='data' i]"
            assert page.locator(bad).count() == 0, path
            if path == f"review/{OTHER}":
                shot(page, "review-hostile")
                assert PLANT in page.locator("textarea").input_value()  # text, not markup
                assert PLANT in page.locator("dl.meta").inner_text()
            if path == "cards/hostile/plan":  # its text, the edit's summary, the blame: text
                assert PLANT in page.locator("pre.block").first.inner_text()
                assert f"sum {SHORT}" in page.locator("table.values").inner_text()
                assert PLANT in page.locator("table.blame").inner_text()
                shot(page, "section-hostile")
            if path == notes:  # a heading that holds markup
                assert f"## Notes {SHORT}" in page.locator("pre.block").first.inner_text()
        page.goto(home + "cards/hostile")
        for n in range(page.locator(".markdown a").count()):  # what is left a link, clicked
            page.goto(home + "cards/hostile")
            page.locator(".markdown a").nth(n).click()
            assert page.evaluate("typeof window.pwned") == "undefined"
    assert tab.dialogs == []
    assert "window.pwned=1" in seen  # the plants were on the pages, as text


def test_a_remote_session_s_hostile_metadata_is_inert(tmp_path: Path, tab: Tab) -> None:
    _, (laptop, desktop) = machines(tmp_path, ("laptop", "desktop"))
    with MemoryRepo(desktop) as repo:
        s = sessions.start_session(repo, OTHER)
        entry = IndexEntry.make("budget", ["budget"], "Budget raised to 40k")
        write_card(
            repo, "acme-website", "Budget: 30k", "Budget: 40k", entry,
            session=OTHER, actor="agent", branch=s.branch,
        )  # fmt: skip
        said = {"at": "2025-11-30T10:20:00Z", "role": "user", "text": PLANT, "content": []}
        transcript_file(repo, OTHER).write_text(json.dumps(said) + "\n")
        sessions.finish_session(repo, s, "review")
    tip = git(desktop, "rev-parse", f"refs/heads/gitmem/session/{OTHER}").strip()
    sync(desktop)
    bad = "<svg/onload=window.pwned=1>"  # a ref name may hold it: no space, no control
    for ref in (f"refs/gitmem/from/{bad}/{OTHER}", f"refs/heads/gitmem/session/{bad}"):
        git(desktop, "push", "-q", "origin", f"{tip}:{ref}")
    git(laptop, "config", "gitmem.machine", "laptop")
    gm("-C", str(laptop), "sync")  # whatever it makes of the planted refs
    page = tab.page
    with ui(laptop) as (_, url):
        home = url.split("?")[0]
        page.goto(url)
        for path in ("", "review", f"review/{OTHER}", f"review/{quote(bad)}", "history"):
            page.goto(home + path)
            assert page.evaluate("typeof window.pwned") == "undefined", path
            assert page.locator(f"{SCRIPT}, svg[onload], [onerror]").count() == 0, path
        page.goto(home + f"review/{OTHER}")
        shot(page, "review-remote-hostile")
        meta = page.locator("dl.meta").inner_text()
    assert tab.dialogs == []
    assert PLANT in meta and "desktop" in meta, meta
