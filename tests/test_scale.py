"""Costs that must not grow with history: what is reused, and that reusing it changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem import index, index_cache, replay, sessions
from gitmem.edit import write_card
from gitmem.repo import MAIN, MemoryRepo
from gitmem.trailers import IndexEntry

from helpers import index_summaries


def _cards(repo: MemoryRepo, n: int, branch: str = MAIN, start: int = 0) -> None:
    for i in range(start, start + n):
        text = f"# Card {i}\n\n## Notes\nline {i}\n"
        entry = IndexEntry.make("notes", ["k"], f"card {i} notes")
        write_card(repo, f"card-{i}", "", text, entry, branch=branch)


def _no_full_replay(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every full replay of a branch's history (the cost that grows with it)."""
    calls: list[str] = []
    real = replay.FullReplay.__init__

    def spy(self: replay.FullReplay, repo: MemoryRepo, branch: str = MAIN) -> None:
        calls.append(branch)
        real(self, repo, branch)

    monkeypatch.setattr(replay.FullReplay, "__init__", spy)
    return calls


def test_a_session_branch_starts_from_mains_index_cache(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemoryRepo(client) as repo:
        _cards(repo, 3)
        want = index.refresh(repo, MAIN).render()  # main's cache, as any use leaves it
    calls = _no_full_replay(monkeypatch)
    with MemoryRepo(client) as repo:  # a new process: nothing in memory
        s = sessions.start(repo, "20260101-090000-abcd")
        got = index.refresh(repo, s.branch).render()
        assert got == want
        _cards(repo, 1, branch=s.branch, start=3)  # the session's own edit is folded in
        after = index_summaries_at(repo, s.branch)
    assert calls == []
    assert after["card-3/notes"] == "card 3 notes"
    with MemoryRepo(client) as repo:  # the seeded result is the full replay's
        assert index.rebuild(repo, s.branch)[0].render() == index.refresh(repo, s.branch).render()


def index_summaries_at(repo: MemoryRepo, branch: str) -> dict[str, str | None]:
    return {
        f"{c.project}/{s.id}": s.summary
        for c in index.refresh(repo, branch).cards
        for s in c.sections
    }


def test_a_session_resumed_after_main_moved_is_replayed_not_seeded_wrong(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """main's cache at a commit the branch does not grow from cannot seed it."""
    with MemoryRepo(client) as repo:
        _cards(repo, 2)
        s = sessions.start(repo, "20260101-090000-abce")
        entry = IndexEntry.make("notes", ["k"], "session's view")
        write_card(repo, "card-0", "line 0", "session line", entry, branch=s.branch)
        entry = IndexEntry.make("notes", ["k"], "main's newer view")
        write_card(repo, "card-1", "line 1", "main line", entry)
        index.refresh(repo, MAIN)  # main's cache is past the session's base
    with MemoryRepo(client) as repo:
        got = index_summaries_at(repo, s.branch)
        assert got == {"card-0/notes": "session's view", "card-1/notes": "card 1 notes"}
        rebuilt = index.rebuild(repo, s.branch)[0]
        assert rebuilt.render() == index.refresh(repo, s.branch).render()
        assert index_summaries(repo)["card-1/notes"] == "main's newer view"


def test_a_landed_session_leaves_no_index_cache(client: Path) -> None:
    with MemoryRepo(client) as repo:
        _cards(repo, 1)
        s = sessions.start(repo, "20260101-090000-abcf")
        _cards(repo, 2, branch=s.branch, start=1)
        index.rebuild(repo, s.branch)
        index.rendered(repo, s.branch)
        state = Path(index_cache._state_path(repo, s.branch))
        text = Path(index_cache.text_path(repo, s.branch))
        assert state.exists() and text.exists()
        done = sessions.finish(repo, s, "auto")
        assert done.landed
        assert not state.exists() and not text.exists()
        assert Path(index_cache._state_path(repo, MAIN)).exists()  # main's is kept


def test_refresh_after_new_commits_fills_and_renders_only_the_cards_they_touched(
    client: Path,
) -> None:
    with MemoryRepo(client) as repo:
        _cards(repo, 4)
        before = index.refresh(repo, MAIN)
        before.render()
        entry = IndexEntry.make("notes", ["k2"], "card 2 changed")
        write_card(repo, "card-2", "line 2", "line two", entry)
        after = index.refresh(repo, MAIN)
        kept = [a is b for a, b in zip(before.cards, after.cards, strict=True)]
        assert kept == [True, True, False, True]
        assert after.card("card-2") == index.rebuild(repo, MAIN)[0].card("card-2")
    with MemoryRepo(client) as repo:  # the same as a new process's full fill
        assert index.refresh(repo, MAIN).render() == after.render()
        assert "card 2 changed" in after.render()
