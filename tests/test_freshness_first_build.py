"""The first index build of a client (nothing known about freshness yet, as after a clone)
reads what the stale marks need from history at the cost of its cards, not of every
entry: the card at each entry's commit is looked up newest commit first (each cards tree
git reads is then a small delta of the last), and only the versions of a card whose
sections must be compared are read and digested."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from gitmem.git.runner import Git
from gitmem.index import build as index
from gitmem.index import freshness
from gitmem.memory.edit import write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry

from helpers import git


def card(n: int, budget: str = "30k") -> str:
    return f"# Card {n}\n\n## People\nDana is PM {n}\n\n## Budget\n{budget}\n"


@pytest.fixture(autouse=True)
def many(monkeypatch: pytest.MonkeyPatch) -> None:
    """These few cards stand for a client's many (a refresh's few go by one git process)."""
    monkeypatch.setattr(freshness, "_MANY", 1)


def fresh_start(repo: MemoryRepo) -> None:
    for f in repo.gitmem_dir.glob("index-fresh-*"):
        f.unlink()
    repo.memo.clear()


def record_cat_file(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str]]]:
    calls: list[tuple[str, list[str]]] = []
    real = Git.run

    def run(
        self: Git,
        *args: str,
        input: bytes | None = None,
        check: bool = True,
        env: object = None,
        ok_codes: Sequence[int] = (0,),
    ) -> object:
        if args[:1] == ("cat-file",) and input is not None:
            calls.append((args[1], input.decode().split()))
        return real(self, *args, input=input, check=check, env=env, ok_codes=ok_codes)  # type: ignore[arg-type]

    monkeypatch.setattr(Git, "run", run)
    return calls


def test_a_first_build_reads_no_card_version_it_need_not_compare(
    repo: MemoryRepo, client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = [
        write_card(repo, f"c{n}", "", card(n), IndexEntry.make("people", ["pm"], f"PM {n}"))
        for n in range(4)
    ]
    # c0's budget changes after its people entry: that entry's card version is compared
    write_card(repo, "c0", card(0), card(0, "40k"), IndexEntry.make("budget", ["money"], "40k"))
    expected = [
        (c.project, s.id, s.stale) for c in index.rebuild(repo, "main")[0].cards for s in c.sections
    ]
    fresh_start(repo)
    calls = record_cat_file(monkeypatch)
    rebuilt, _ = index.rebuild(repo, "main")
    assert [(c.project, s.id, s.stale) for c in rebuilt.cards for s in c.sections] == expected
    commits = set(git(client, "rev-list", "main").split())
    read = [
        name for mode, names in calls if mode == "--batch" for name in names if name not in commits
    ]
    # only c0's two versions (at its people entry, and now); the other cards are unchanged
    then = git(client, "rev-parse", f"{made[0].commit}:cards/c0.md").strip()
    now = git(client, "rev-parse", "main:cards/c0.md").strip()
    assert sorted(read) == sorted([then, now])


def test_a_first_build_looks_up_the_cards_newest_commit_first(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(6):  # one commit a minute (the fixture's date is fixed)
        monkeypatch.setenv("GIT_COMMITTER_DATE", f"2026-03-0{n + 1}T10:00:00Z")
        with MemoryRepo(client) as repo:
            write_card(repo, f"c{n}", "", card(n), IndexEntry.make("people", ["pm"], f"PM {n}"))
    with MemoryRepo(client) as repo:
        fresh_start(repo)
        calls = record_cat_file(monkeypatch)
        index.rebuild(repo, "main")
        paths = [name for _mode, names in calls for name in names if ":cards/" in name]
        assert freshness.memo_for(repo, "main").at  # the facts are kept for the next build
    history = git(client, "log", "--format=%H", "main").split()
    assert len(paths) == 6
    assert [p.split(":")[0] for p in paths] == history[:6]
