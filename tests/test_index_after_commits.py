"""`gitmem index` in a new process after a few commits folds in only those commits (no
replay of all history) and gives the full replay's I block every time."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.features.edit import write_card
from gitmem.index import build as index
from gitmem.index import replay
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.memory.trailers import IndexEntry

from helpers import git, spy_full_replays


def text(i: int, more: str = "") -> str:
    return f"# Card {i}\n\n## Notes\nline {i}\n{more}\n## Plan\nplan {i}\n"


def make(repo: MemoryRepo, n: int) -> None:
    for i in range(n):
        write_card(repo, f"card-{i}", "", text(i), IndexEntry.make("notes", ["k"], f"card {i}"))
        write_card(
            repo,
            f"card-{i}",
            text(i),
            text(i, "more\n"),
            IndexEntry.make("plan", ["p"], f"plan {i}"),
        )


def edit(repo: MemoryRepo, i: int, round_: int) -> None:
    card = (repo.root / f"cards/card-{i}.md").read_text()
    write_card(
        repo,
        f"card-{i}",
        card,
        card + f"round {round_}\n",
        IndexEntry.make("plan", ["p"], f"plan {i} round {round_}"),
    )


def full(repo: MemoryRepo) -> str:
    """The I block from a replay of all history (no cache read or written)."""
    return index.resolve(repo, replay.replay_all(repo, MAIN)).render()


def test_a_few_commits_are_folded_into_the_cache(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemoryRepo(client) as repo:
        make(repo, 3)
        index.rendered(repo, MAIN)
    calls = spy_full_replays(monkeypatch)
    for round_ in range(3):
        with MemoryRepo(client) as repo:
            edit(repo, round_ % 3, round_)
            (client / "cards/card-1.md").write_text(text(1, f"by hand {round_}\n"))
            git(client, "commit", "-qam", f"by hand {round_}")
        with MemoryRepo(client) as repo:
            got = index.rendered(repo, MAIN)
        assert calls == []
        assert got == full(repo) and "(stale)" in got
        calls.clear()  # (the full replay just made to compare)
