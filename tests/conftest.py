"""Shared fixtures: a hermetic environment for every test, client repos, the CLI in-process."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import is_hypothesis_test, settings

from gitmem.memory.repo import MemoryRepo
from gitmem.setup.init import init_repo

from helpers import gm

# Property tests run git and write files: on a shared 2-core machine one example can take
# far longer than hypothesis' 200 ms deadline, a failure that says nothing of gitmem.
settings.register_profile("gitmem", deadline=None)
settings.load_profile("gitmem")

FIXED_DATE = "1764498000 +0000"  # 2025-11-30 10:20:00 UTC


@pytest.fixture(autouse=True)
def hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test can read or touch the real user's git config, HOME, workspace or API key."""
    home = tmp_path / "home"
    home.mkdir()
    for key in list(os.environ):
        if key.startswith(("GIT_", "ANTHROPIC_", "GITMEM_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GITMEM_HOME", str(home / "gitmem"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Person")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "person@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Person")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "person@example.com")
    monkeypatch.setenv("GIT_AUTHOR_DATE", FIXED_DATE)
    monkeypatch.setenv("GIT_COMMITTER_DATE", FIXED_DATE)
    monkeypatch.setenv("GIT_EDITOR", "false")
    # Signing makes commit ids depend on a key made per test; its tests turn it on.
    monkeypatch.setenv("GITMEM_SIGNING", "off")
    return home


@pytest.fixture
def client(tmp_path: Path) -> Path:
    """A fresh client memory repo made by `gitmem init`."""
    path = tmp_path / "client"
    init_repo(path)
    return path


@pytest.fixture
def repo(client: Path) -> Iterator[MemoryRepo]:
    with MemoryRepo(client) as r:
        yield r


SEEDED_CARD = "# Acme\n\n## Budget\nBudget: 30k\n\n## Notes\nfoo\nfoo\n"


@pytest.fixture
def seeded(client: Path) -> Path:
    """The client with one card, acme (SEEDED_CARD), written by `gitmem write`."""
    entry = ["--section", "budget", "--keywords", "budget,q3", "--summary", "Budget raised"]
    res = gm("-C", str(client), "write", "acme", "--old", "", "--new", SEEDED_CARD, *entry)
    assert res.code == 0, res.err
    return client


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every property test (hypothesis) is `slow`: `pytest` leaves them out, `pytest -m ''`
    (the README's command, CI) runs them. The fault-injection loops and other long tests
    are marked `slow` where they are written."""
    for item in items:
        if is_hypothesis_test(getattr(item, "obj", None)):
            item.add_marker(pytest.mark.slow)


# Re-exported for tests that import them from here; new tests import from helpers.
from helpers import Result, git, snapshot  # noqa: E402

__all__ = ["Result", "git", "gm", "snapshot"]
