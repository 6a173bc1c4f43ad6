"""`gitmem ui`'s review page in a real browser: the pull request's description copied with
one click (and readable with JavaScript off), and a decision stopped half-way shown as
the one line `gitmem review` gives, with no button to decide again."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import Tab, chromium, shot, tab
from test_review import SID, agent_session, person_writes
from test_ui import ui
from test_ui_browser import pending_with_a_killer

from gitmem.features.edit import write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.review import session_branches as sessions

from helpers import gm

if TYPE_CHECKING:
    from playwright.sync_api import Browser

__all__ = ["chromium", "tab"]  # fixtures
pytestmark = pytest.mark.slow
# What must reach the clipboard as the CLI prints it: a tag that would close the
# textarea, and a bidi override the CLI shows as its escape.
TRICKY = "Note: </textarea><b>bold</b> & \u202eright-to-left"


def _session_with_tricky_text(client: Path) -> None:
    with MemoryRepo(client) as repo:
        person_writes(repo)
        agent_session(repo)
        s = sessions.start_session(repo, "tricky-1")
        entry = IndexEntry.make("notes", ["notes"], "notes with markup")
        write_card(
            repo, "acme-notes", "", f"# Notes\n\n## Notes\n{TRICKY}\n", entry,
            session="tricky-1", actor="agent", branch=s.branch,
        )  # fmt: skip
        sessions.finish_session(repo, s, "review")


def test_copy_puts_the_markdown_description_on_the_clipboard(client: Path, tab: Tab) -> None:
    _session_with_tricky_text(client)
    printed = gm("-C", str(client), "review", "tricky-1", "--markdown")
    assert printed.code == 0 and "\\u202e" in printed.out and "</textarea>" in printed.out
    page = tab.page
    with ui(client) as (_, url):
        page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        page.goto(url)
        page.get_by_role("link", name="Review", exact=True).click()
        page.get_by_role("link", name="tricky-1").click()
        page.wait_for_url("**/review/tricky-1")
        page.get_by_role("button", name="Copy", exact=True).click()
        page.get_by_role("status").get_by_text("Copied").wait_for()
        copied = page.evaluate("navigator.clipboard.readText()")
        page.get_by_text("Show it").click()
        shot(page, "review-copy")
    assert copied == printed.out


def test_the_description_reads_with_javascript_off(client: Path, chromium: Browser) -> None:
    _session_with_tricky_text(client)
    printed = gm("-C", str(client), "review", "tricky-1", "--markdown").out
    ctx = chromium.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    with ui(client) as (_, url):
        page.goto(url)
        page.goto(url.split("?")[0] + "review/tricky-1")
        page.get_by_text("Show it").click()
        shown = page.get_by_label("description for a pull request")
        text, editable = shown.input_value(), shown.is_editable()
        copy = page.get_by_role("button", name="Copy", exact=True).count()
    ctx.close()
    assert text == printed and not editable
    assert copy == 0  # made by the script: without it there is nothing that could not copy


def test_an_interrupted_decision_is_shown_as_the_cli_s_reason(
    client: Path, tmp_path: Path, tab: Tab
) -> None:
    pid, hook = pending_with_a_killer(client, tmp_path)
    page = tab.page
    with ui(client) as (proc, url):
        pid.write_text(str(proc.pid))
        page.goto(url)
        page.goto(url.split("?")[0] + f"review/{SID}")
        page.get_by_role("button", name="Accept", exact=True).click(no_wait_after=True)
        assert proc.wait(timeout=60) == -signal.SIGKILL  # killed with main moved
    hook.unlink()
    with ui(client) as (_, url):
        page.goto(url)
        page.get_by_role("link", name="Review", exact=True).click()
        page.get_by_role("link", name=SID).first.click()
        page.wait_for_url(f"**/review/{SID}")
        warned = page.locator("p.warn").inner_text()
        buttons = page.get_by_role("button").all_inner_texts()
        started = page.locator("dl.meta dd").nth(2).inner_text()
        files = page.locator("section.file").count()
        empty = page.get_by_text("No edits in this session's branch.").count()
        shot(page, "review-interrupted")
    cli = gm("-C", str(client), "review", SID, "--accept")
    reason = cli.err.splitlines()[-1].removeprefix("gitmem: error: ")
    assert cli.code == 4 and "was interrupted; `gitmem recover` finishes it" in reason
    assert warned == f"No decision now: {reason}"
    assert not any(b in {"Accept", "Reject session"} for b in buttons), buttons
    assert started == "(not recorded)" or started[:4].isdigit(), started  # never "?"
    assert empty == (files == 0)  # a heading with no file under it says so
