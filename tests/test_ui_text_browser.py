"""`gitmem ui` reading memory's text in a real browser: the workspace's clients with
their last edit as `gitmem clients` gives it, a long summary wrapped, and bidi controls
in memory's text kept from reordering the page around them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import Tab, chromium, shot, tab
from test_review import OTHER, person_writes
from test_ui import ui

from gitmem.features.edit import write_card
from gitmem.features.session_live import transcript_file
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.review import session_branches as sessions

from helpers import git, gm

if TYPE_CHECKING:
    from playwright.sync_api import Page

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


RLO, RLI = "\u202e", "\u2067"  # an override and an isolate, left open as an attacker would
# Finds each text node holding a bidi control that is not alone in an element isolating
# it (unicode-bidi: isolate, or a block of its own): what follows it there would reorder.
OPEN_BIDI = """() => {
  const bad = [], walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (!/[\\u202a-\\u202e\\u2066-\\u2069]/.test(n.data)) continue;
    const el = n.parentElement, style = getComputedStyle(el);
    const isolated = /isolate|plaintext/.test(style.unicodeBidi);
    const own = isolated || style.display !== "inline";
    if (!own || el.childNodes.length !== 1) bad.push(el.outerHTML.slice(0, 160));
  }
  return bad;
}"""


def _plant_bidi(client: Path) -> str:
    """Bidi controls in a pending session's commit subject and first message, a section
    heading, and a commit's card and section names (written with git plumbing)."""
    with MemoryRepo(client) as repo:
        person_writes(repo)
        text = f"# Bidi\n\n## Notes {RLO}gnirts\nline {RLI}one\n"
        write_card(repo, "bidi", "", text, IndexEntry.make("notes-gnirts", ["notes"], "notes"))
        s = sessions.start_session(repo, OTHER)
        entry = IndexEntry.make("budget", ["budget"], "Budget raised to 40k")
        write_card(
            repo, "acme-website", "Budget: 30k", "Budget: 40k", entry,
            session=OTHER, actor="agent", branch=s.branch,
        )  # fmt: skip
        said = {"at": "2025-11-30T10:20:00Z", "role": "user", "text": f"ask {RLI}me", "content": []}
        transcript_file(repo, OTHER).write_text(json.dumps(said) + "\n")
        sessions.finish_session(repo, s, "review")
    ref = f"refs/heads/gitmem/session/{OTHER}"
    _resubject(client, ref, "acme-website: Budget raised to 40k", f"acme: {RLO}desiar 40k")
    trailers = f"Gitmem-Card: acme{RLO}evil\nGitmem-Section: sec{RLI}tion\nGitmem-Actor: agent\n"
    message = f"{RLO}tcejbus\n\n{trailers}"
    commit = git(client, "commit-tree", "main^{tree}", "-p", "main", "-m", message).strip()
    git(client, "update-ref", "refs/heads/main", commit)
    return commit


def _resubject(client: Path, ref: str, old: str, subject: str) -> None:
    """The commit on ``ref`` whose subject is ``old`` made again with ``subject``, and the
    commits above it replayed (a summary's rule refuses a bidi control; another program's
    commit need not keep it)."""
    shas = git(client, "rev-list", "--reverse", f"main..{ref}").split()
    at = next(
        i
        for i, sha in enumerate(shas)
        if git(client, "log", "-1", "--format=%s", sha).strip() == old
    )
    parent = git(client, "rev-parse", f"{shas[at]}^").strip()
    for n, sha in enumerate(shas[at:]):
        message = git(client, "log", "-1", "--format=%B", sha)
        if n == 0:
            message = subject + message[len(old) :]
        tree = git(client, "rev-parse", f"{sha}^{{tree}}").strip()
        parent = git(client, "commit-tree", tree, "-p", parent, "-m", message).strip()
    git(client, "update-ref", ref, parent)


# The left edge of each of ``marks`` where it first appears in the element, in turn.
EDGES = """(element, marks) => {
  const xs = [], walk = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(), from = 0; n && xs.length < marks.length; n = walk.nextNode(), from = 0) {
    for (let at; xs.length < marks.length && (at = n.data.indexOf(marks[xs.length], from)) >= 0; ) {
      const r = document.createRange();
      r.setStart(n, at);
      r.setEnd(n, at + marks[xs.length].length);
      xs.push(r.getBoundingClientRect().x);
      from = at + 1;
    }
  }
  return xs;
}"""


def _in_order(page: Page, selector: str, marks: list[str]) -> bool:
    """Whether ``marks``, read in that order in the element's text, are drawn left to right."""
    xs: list[float] = page.locator(selector).first.evaluate(EDGES, marks)
    return len(xs) == len(marks) and xs == sorted(xs)


def test_bidi_controls_in_memory_do_not_reorder_the_page(client: Path, tab: Tab) -> None:
    commit = _plant_bidi(client)
    page = tab.page
    with ui(client) as (_, url):
        home = url.split("?")[0]
        page.goto(url)
        paths = [
            "", "review", f"review/{OTHER}", f"review/{OTHER}?view=split", "history", "cards",
            "cards/bidi", "cards/bidi/notes-gnirts", "index", "search?q=budget", f"revert/{commit}",
            f"show?ref=bidi/notes-gnirts@{commit}",
        ]  # fmt: skip
        open_at: dict[str, list[str]] = {}
        in_order: dict[str, bool] = {}
        for path in paths:
            answer = page.goto(home + path)
            assert answer is not None and answer.status == 200, path
            open_at[path] = page.evaluate(OPEN_BIDI)
            if path == f"review/{OTHER}":
                sha = page.locator("div.commit-head code.sha").first.inner_text()
                in_order["review"] = _in_order(page, "div.commit-head", ["acme:", sha])
                shot(page, "review-bidi")
            if path == "history":
                row = f"tr:has(code:text('{commit[:7]}')) td:nth-child(4)"
                in_order["history"] = _in_order(page, row, ["acme", "§"])
            if path.startswith("revert/"):
                in_order["revert"] = _in_order(
                    page, "section.file h2", ["acme", "§", "·", commit[:7]]
                )
    assert in_order == dict.fromkeys(("review", "history", "revert"), True)
    assert {p: bad for p, bad in open_at.items() if bad} == {}
