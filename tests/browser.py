"""A real browser for the `gitmem ui` tests: Debian's Chromium driven by Playwright.

Playwright's own browser download is not reachable, so the system Chromium is launched
by path; where none is installed (and `.ci/run` could not install one) the browser tests
skip and say why in pytest's summary."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Dialog, Page

CHROMIUM = os.environ.get("GITMEM_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",  # the tests run as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SHOTS = os.environ.get("GITMEM_UI_SCREENSHOTS")  # e.g. docs/img: where screenshots go


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install chromium to run browser tests")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as pw:  # a fresh profile (user-data-dir) of its own
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield browser
        browser.close()


@dataclass
class Tab:
    """A page in a browser with no cookie yet, and the dialogs it raised (dismissed)."""

    page: Page
    dialogs: list[str] = field(default_factory=list)


@pytest.fixture
def tab(chromium: Browser) -> Iterator[Tab]:
    ctx = chromium.new_context(viewport={"width": 1280, "height": 900})
    ctx.set_default_timeout(30_000)
    t = Tab(ctx.new_page())

    def seen(dialog: Dialog) -> None:
        t.dialogs.append(dialog.message)
        dialog.dismiss()

    t.page.on("dialog", seen)
    yield t
    ctx.close()


def shot(page: Page, name: str) -> None:
    """A screenshot of the page into $GITMEM_UI_SCREENSHOTS (docs/img), when it is set."""
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)
