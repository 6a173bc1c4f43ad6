"""`gitmem index` in a new process after a few commits: what it keeps about the other cards
stays kept (their stale marks are not looked up in history again), and the cards file
moves to the tip; the I block is the full replay's every time."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.index import build as index
from gitmem.index import card_cache as index_cards
from gitmem.index import freshness, replay
from gitmem.memory.edit import write_card
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.memory.trailers import IndexEntry


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
    return index.resolve(repo, replay.replay_all(repo, MAIN), {}).render()


def test_a_new_process_keeps_the_other_cards_freshness_facts(client: Path) -> None:
    with MemoryRepo(client) as repo:
        make(repo, 4)
        index.rebuild(repo, MAIN)
        index.rendered(repo, MAIN)
        before = dict(freshness.memo_for(repo, MAIN).at)
        edit(repo, 0, 1)
    assert {k.partition(":")[2] for k in before} == {f"card-{i}" for i in range(4)}
    with MemoryRepo(client) as repo:
        got = index.rendered(repo, MAIN)
        kept = freshness.memo_for(repo, MAIN).at
        # every fact about cards 1-3 is still there: no lookup in history for them next time
        assert {
            k: v for k, v in before.items() if not k.endswith(":card-0")
        }.items() <= kept.items()
        assert got == full(repo)


def test_a_few_commits_move_the_cards_file_to_the_tip(client: Path) -> None:
    with MemoryRepo(client) as repo:
        make(repo, 3)
        index.rendered(repo, MAIN)
    for round_ in range(3):
        with MemoryRepo(client) as repo:
            edit(repo, round_ % 3, round_)
        with MemoryRepo(client) as repo:
            got = index.rendered(repo, MAIN)
            assert got == full(repo)
            kept = index_cards._load(repo, MAIN)
            assert kept is not None and kept["commit"] == repo.tip(MAIN)  # the next run folds
            # only its own commits


def test_the_kept_digests_are_unpacked_only_for_the_cards_a_refresh_compares(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemoryRepo(client) as repo:
        make(repo, 4)
        index.rebuild(repo, MAIN)
        index.rendered(repo, MAIN)
        edit(repo, 2, 1)
    unpacked: list[dict[str, str]] = []
    real = freshness._unpack

    def spy(packed: str) -> dict[str, str]:
        unpacked.append(real(packed))
        return unpacked[-1]

    monkeypatch.setattr(freshness, "_unpack", spy)
    with MemoryRepo(client) as repo:
        memo = freshness.memo_for(repo, MAIN)
        versions = len(memo.blobs)
        assert versions >= 8 and all(isinstance(v, str) for v in memo.blobs.values())
        repo.memo.clear()  # (a new process's state, the facts file read above aside)
        got = index.rendered(repo, MAIN)
        # the kept cards say what each entry's text was: no digest of history is unpacked
        assert unpacked == []
        assert got == full(repo)
    with MemoryRepo(client) as repo:  # what was written is read back the same
        assert index.rendered(repo, MAIN) == got
