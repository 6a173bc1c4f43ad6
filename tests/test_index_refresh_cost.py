"""`gitmem index` after a few commits: no git process of its own, no cache file rewritten,
and the same text as a full replay."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_index_property import full_replay

from gitmem.index import build as index
from gitmem.index import card_cache, freshness
from gitmem.index.replay import fold, log
from gitmem.memory.edit import write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.setup.init import init_repo

from helpers import git


def _cards(repo: MemoryRepo, n: int) -> None:
    for i in range(n):
        text = f"# Card {i}\n\n## Notes\nline {i}\n\n## Plans\nplan {i}\n"
        write_card(repo, f"card-{i}", "", text, IndexEntry.make("notes", ["k"], f"card {i} notes"))


def _edit(repo: MemoryRepo, i: int, n: int) -> None:
    body = (repo.root / "cards" / f"card-{i}.md").read_text()
    old = next(ln for ln in body.split("\n") if ln.startswith("line "))
    write_card(
        repo, f"card-{i}", old, f"line {i} v{n}", IndexEntry.make("notes", ["k"], f"card {i} v{n}")
    )


def _processes(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every program this process starts from now on (subprocess.run goes through Popen)."""
    started: list[list[str]] = []
    real = subprocess.Popen

    class Spy(real):  # type: ignore[misc,valid-type]
        def __init__(self, args: Any, *rest: Any, **kw: Any) -> None:
            started.append([str(a) for a in args])
            super().__init__(args, *rest, **kw)

    monkeypatch.setattr(subprocess, "Popen", Spy)
    return started


def test_a_new_process_after_a_few_commits_starts_no_git_log(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemoryRepo(client) as repo:
        _cards(repo, 4)
        index.rendered(repo)
        for i in range(3):
            _edit(repo, i, 1)
    started = _processes(monkeypatch)
    with MemoryRepo(client) as repo:
        text = index.rendered(repo)
    # the object store's one long-running cat-file, nothing else: no log, no batch of its own
    assert started == [["git", "cat-file", "--batch"]]
    assert "card 2 v1" in text
    with MemoryRepo(client) as repo:
        assert text == full_replay(repo).render()


def test_a_refresh_of_a_few_cards_does_not_rewrite_the_facts_file(client: Path) -> None:
    facts = client / ".git" / "gitmem" / "index-fresh-main.marshal"
    with MemoryRepo(client) as repo:
        _cards(repo, 4)
        index.rendered(repo)
    for n in range(1, 4):
        with MemoryRepo(client) as repo:  # each a new process, as `gitmem index` is
            _edit(repo, n % 4, n)
        before = facts.read_bytes()
        with MemoryRepo(client) as repo:
            text = index.rendered(repo)
        assert facts.read_bytes() == before
        with MemoryRepo(client) as repo:
            assert text == full_replay(repo).render()  # (which writes the facts anew)


def test_the_facts_file_is_written_once_its_new_facts_are_many(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(freshness, "_SAVE_EVERY", 4)
    facts = client / ".git" / "gitmem" / "index-fresh-main.marshal"
    with MemoryRepo(client) as repo:
        _cards(repo, 4)
        index.rendered(repo)
    with MemoryRepo(client) as repo:  # an open repo refreshes a few cards (``_refill``)
        index.refresh(repo)
        for i in range(4):
            _edit(repo, i, 1)
        before = facts.read_bytes()
        text = index.refresh(repo).render()
    assert facts.read_bytes() != before
    with MemoryRepo(client) as repo:
        assert text == full_replay(repo).render()


# Messages whose trailer blocks git may read otherwise than the obvious way: each is
# either read through the object store exactly as git log reads it, or left to git.
_LINES = st.sampled_from(
    [
        "Gitmem-Card: card-0",
        "Gitmem-Card: card-1",
        "gitmem-section: notes",
        "Gitmem-Section: plans",
        "Gitmem-Keywords: a, b",
        "Gitmem-Summary: said so",
        "Gitmem-Summary : spaced",
        "Gitmem-Summary:tight",
        "GITMEM-CARD: card-1",
        " folded on",
        "\tfolded tab",
        "Signed-off-by: A <a@b>",
        "prose line",
        "",
        "---",
        "# a comment",
        "Gitmem-Layer: R",
        "Gitmem-Card:",
        "Gitmem-Summary: ünïcode",
    ]
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.lists(_LINES, max_size=6), min_size=1, max_size=6))
def test_the_new_commits_read_through_the_store_fold_as_git_logs_them(
    tmp_path_factory: pytest.TempPathFactory, messages: list[list[str]]
) -> None:
    root = tmp_path_factory.mktemp("c")
    init_repo(root)
    with MemoryRepo(root) as repo:
        base = str(repo.tip("main"))
    parent = base
    for lines in messages:
        msg = "subject\n\n" + "\n".join(lines) + "\n"
        parent = git(root, "commit-tree", f"{parent}^{{tree}}", "-p", parent, "-m", msg).strip()
    git(root, "update-ref", "refs/heads/main", parent)
    with MemoryRepo(root) as repo:
        read = card_cache._read_new(repo, base, parent)
        got = read[0] if read is not None else None
        assert (
            read is None
            or [c[0] for c in read[1]]
            == git(root, "rev-list", "--reverse", f"{base}..{parent}").split()
        )  # oldest first
        want = fold(log(repo, f"{base}..{parent}"))
        plain = all(
            ln and ln[0] not in " \t#-" and ": " in ln and " :" not in ln and ln != "prose line"
            for lines in messages
            for ln in lines
        )
        assert got is not None or not plain  # the plain ones are read without git
        if got is not None:
            assert (
                got.tip,
                got.entries,
                got.reverts,
                got.merges,
                got.linear,
                got.oldest_parent,
            ) == (
                want.tip,
                want.entries,
                want.reverts,
                want.merges,
                want.linear,
                want.oldest_parent,
            )
