"""A full replay (``gitmem reindex``, a first index) reads each trailer block as git
prints it for ``%(trailers)`` in one loop of its own (``replay._Fold.feed``): the state
must be exactly the one of ``trailers.gitmem_trailers`` read commit by commit, oldest
first, whatever the messages; git's trailer aliases (``trailer.<token>.key``) must not
change it, and no ``git config`` is asked about them.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_trailer_block import message

from gitmem.index import build as index
from gitmem.index import replay
from gitmem.memory import trailers as T
from gitmem.memory.edit import write_card
from gitmem.memory.history import read_log
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry

from helpers import git, spy_git_processes

CARD = "# Acme\n\n## People\nDana is PM\n\n## Budget\n30k\n"


def commit_messages(root: Path, messages: list[str]) -> str:
    tree = git(root, "hash-object", "-t", "tree", "-w", "--stdin", input=b"").strip()
    tip = ""
    for msg in messages:
        tip = git(
            root, "commit-tree", tree, *(["-p", tip] if tip else []), input=msg.encode()
        ).strip()
    git(root, "update-ref", "refs/heads/main", tip)
    return tip


def as_written(repo: MemoryRepo) -> replay.Replay:
    """The replay of main from the trailer blocks as written: ``gitmem_trailers`` of each
    commit's block, applied oldest first (the parsing the one loop stands for)."""
    state = replay.Replay()
    for c in read_log(repo.git, "main", reverse=True):
        state.apply(c)
    if state.commit is not None:
        state.merges = [c.sha for c in read_log(repo.git, "main") if len(c.parents) > 1]
    return state


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    messages=st.lists(message, min_size=1, max_size=6),
    more=st.lists(
        st.sampled_from(
            [
                "Gitmem-Card: alpha\nGitmem-Section: one\nGitmem-Keywords: a\nGitmem-Summary: s",
                "Gitmem-Card: alpha\nGitmem-Section: one\nGitmem-Keywords: a\nGitmem-Section: two\n"
                "Gitmem-Keywords: b, c\nGitmem-Section: three",
                "gitmem-card:alpha\ngitmem-section : one\nGitmem-Summary:  folded\n  on\n\tand on",
                "Gitmem-Card: alpha\nGitmem-Section: one\nGitmem-Layer: persona",
                "GITMEM-CARD\t: beta\nGitmem-Section:two \r\nGitmem-Keywords:\nGitmem-Session: s",
                "Gitmem-Card: alpha\nGitmem-Section: one\nGitmem-Summary: first\n"
                "Gitmem-Summary: second\nGitmem-Card: beta\nSigned-off-by: A <a@example.com>",
                "Gitmem-Reverts: 0123456789abcdef0123456789abcdef01234567\nGitmem-Reverts:\n"
                "Gitmem-Card: alpha\nGitmem-Section: one",
                "Gitmem-C\u212ard: alpha\nGitmem-Section: one\nGitmem-Card: \xe9\xfc",
            ]
        ),
        max_size=3,
    ),
)
def test_the_one_loop_replay_is_the_replay_of_the_blocks_as_written(
    tmp_path: Path, messages: list[str], more: list[str]
) -> None:
    root = tmp_path / "r"
    if not root.exists():
        git(tmp_path, "init", "-q", "-b", "main", str(root))
    commit_messages(root, [*messages, *(f"subject\n\n{m}\n" for m in more)])
    with MemoryRepo(root) as repo:
        assert replay.replay_all(repo, "main") == as_written(repo)


def test_a_trailer_alias_in_gits_config_changes_nothing(client: Path) -> None:
    # git renames "card:" to Gitmem-Card before it filters; gitmem reads the token as written
    git(client, "config", "trailer.card.key", "Gitmem-Card")
    git(client, "config", "trailer.sec.key", "Gitmem-Section")
    git(
        client,
        "commit",
        "-q",
        "--no-verify",
        "--allow-empty",
        "-m",
        "hand\n\ncard: acme\nsec: people\nGitmem-Keywords: pm\nGitmem-Summary: forged",
    )
    with MemoryRepo(client) as repo:
        state = replay.replay_all(repo, "main")
        assert "acme/people" not in state.entries
        assert state == as_written(repo)


def test_a_full_replay_reads_plain_blocks_in_its_own_loop(
    repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_card(repo, "acme", "", CARD, IndexEntry.make("people", ["pm"], "Dana is PM"))
    write_card(
        repo,
        "acme",
        CARD,
        CARD.replace("30k", "40k"),
        IndexEntry.make("budget", ["money"], "40k now"),
    )
    index.refresh(repo, "main")  # the cache at the tip: rebuild compares, folds nothing in
    parsed: list[str] = []
    real = T.gitmem_trailers

    def counting(block: str) -> tuple[dict[str, str], tuple[str, ...]]:
        parsed.append(block)
        return real(block)

    monkeypatch.setattr(T, "gitmem_trailers", counting)
    rebuilt, _ = index.rebuild(repo, "main")
    assert [(s.id, s.summary) for c in rebuilt.cards for s in c.sections] == [
        ("people", "Dana is PM"),
        ("budget", "40k now"),
    ]
    assert parsed == []  # no continuation lines: no block handed to gitmem_trailers


def _one_card_indexed(client: Path) -> None:
    """acme with one section, and main's index cache as `gitmem index` leaves it."""
    with MemoryRepo(client) as repo:
        write_card(repo, "acme", "", CARD, IndexEntry.make("people", ["pm"], "Dana is PM"))
        index.refresh(repo, "main")


def test_a_reindex_starts_git_log_and_git_cat_file_only(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _one_card_indexed(client)
    started = spy_git_processes(monkeypatch)
    with MemoryRepo(client) as repo:  # a new process's: nothing running yet
        rebuilt, cached = index.rebuild(repo, "main")
    assert rebuilt == cached and rebuilt.cards[0].sections[0].summary == "Dana is PM"
    assert started == ["log", "cat-file"]  # no `git config` asked about trailer aliases


def test_a_replayed_state_is_left_in_the_gcs_oldest_generation(repo: MemoryRepo) -> None:
    # nothing of it for the first collections after the replay to walk over
    write_card(repo, "acme", "", CARD, IndexEntry.make("people", ["pm"], "Dana is PM"))
    write_card(
        repo,
        "acme",
        CARD,
        CARD.replace("30k", "40k"),
        IndexEntry.make("budget", ["money"], "40k now"),
    )
    gc.collect()
    state = replay.replay_all(repo, "main")
    young = {id(o) for generation in (0, 1) for o in gc.get_objects(generation=generation)}
    built = [v for values in state.entries.values() for v in (values, *values)]
    assert len(built) == 4
    assert not [v for v in built if id(v) in young]


def test_a_reindex_reads_the_stale_marks_facts_while_git_walks(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the facts file is read before the log is folded (the fold waits on git's walk
    # anyway), not after it, where it would add to the rebuild's time
    from gitmem.index import freshness

    _one_card_indexed(client)
    order: list[str] = []
    load, fold = freshness._load, replay.fold

    def spy_load(repo: MemoryRepo, branch: str) -> freshness.Memo:
        order.append("facts")
        return load(repo, branch)

    def spy_fold(records: object) -> object:
        order.append("fold")
        return fold(records)  # type: ignore[arg-type]

    monkeypatch.setattr(freshness, "_load", spy_load)
    monkeypatch.setattr(replay, "fold", spy_fold)
    with MemoryRepo(client) as repo:
        index.rebuild(repo, "main")
    assert order == ["facts", "fold"]
