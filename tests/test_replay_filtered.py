"""A full replay (``gitmem reindex``, a first index) reads each trailer block as git
prints it for ``%(trailers)``: the state must be exactly the one of
``trailers.gitmem_trailers`` read commit by commit, oldest first, whatever the messages;
git's trailer aliases (``trailer.<token>.key``) must not change it.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_trailer_block import message

from gitmem.index import replay
from gitmem.memory.repo import MemoryRepo
from gitmem.ops.history import read_log

from helpers import git

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
