"""A full replay (``gitmem reindex``, a first index) lets git pick out the trailers it
replays (``trailers.FILTERED_BLOCK``): the state must be exactly the one gitmem reads from
the trailer blocks as written, whatever the messages, and git's trailer aliases (which
rename a token before git filters) must not change it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_trailer_block import message

from gitmem.index import build as index
from gitmem.index import replay
from gitmem.memory import trailers as T
from gitmem.memory.edit import write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry

from helpers import git

CARD = "# Acme\n\n## People\nDana is PM\n\n## Budget\n30k\n"


def commit_messages(root: Path, messages: list[str]) -> str:
    tree = git(root, "hash-object", "-t", "tree", "-w", "--stdin", input=b"").strip()
    tip = ""
    for msg in messages:
        tip = git(root, "commit-tree", tree, *(["-p", tip] if tip else []), input=msg.encode()).strip()
    git(root, "update-ref", "refs/heads/main", tip)
    return tip


def as_written(repo: MemoryRepo) -> replay.Replay:
    """The replay of main from the trailer blocks as written, read by gitmem alone."""
    state = replay.Replay()
    replay.fold(replay.log(repo, "refs/heads/main")).onto(state)
    return state


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages=st.lists(message, min_size=1, max_size=6),
       more=st.lists(st.sampled_from([
           "Gitmem-Card: alpha\nGitmem-Section: one\nGitmem-Keywords: a\nGitmem-Summary: s",
           "Gitmem-Card: alpha\nGitmem-Section: one\nGitmem-Keywords: a\nGitmem-Section: two\n"
           "Gitmem-Keywords: b, c\nGitmem-Section: three",
           "gitmem-card:alpha\ngitmem-section : one\nGitmem-Summary:  folded\n  on\n\tand on",
           "Gitmem-Card: alpha\nGitmem-Section: one\nGitmem-Layer: persona",
       ]), max_size=3))
def test_the_filtered_replay_is_the_replay_of_the_blocks_as_written(
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
    git(client, "commit", "-q", "--no-verify", "--allow-empty", "-m",
        "hand\n\ncard: acme\nsec: people\nGitmem-Keywords: pm\nGitmem-Summary: forged")
    with MemoryRepo(client) as repo:
        state = replay.replay_all(repo, "main")
        assert "acme/people" not in state.entries
        assert state == as_written(repo)


def test_a_full_replay_leaves_reading_the_trailer_blocks_to_git(
    repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_card(repo, "acme", "", CARD, IndexEntry.make("people", ["pm"], "Dana is PM"))
    write_card(repo, "acme", CARD, CARD.replace("30k", "40k"),
               IndexEntry.make("budget", ["money"], "40k now"))
    index.refresh(repo, "main")  # the cache at the tip: rebuild compares, folds nothing in
    parsed: list[str] = []
    real = T.gitmem_trailers

    def counting(block: str) -> tuple[dict[str, str], tuple[str, ...]]:
        parsed.append(block)
        return real(block)

    monkeypatch.setattr(T, "gitmem_trailers", counting)
    rebuilt, _ = index.rebuild(repo, "main")
    assert [(s.id, s.summary) for c in rebuilt.cards for s in c.sections] == [
        ("people", "Dana is PM"), ("budget", "40k now")]
    assert parsed == []  # git printed only the replayed trailers, unfolded and trimmed
