"""Every command that takes a branch, or a session that maps to one, refuses an unknown one."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.features.edit import write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry

from helpers import git, gm, snapshot

WRITE = [
    "write",
    "acme",
    "--old",
    "",
    "--new",
    "## A\nx\n",
    "--section",
    "a",
    "--keywords",
    "k",
    "--summary",
    "s",
]
BRANCH_COMMANDS = [
    ["index"],
    ["index", "--json"],
    ["reindex"],
    ["reindex", "--json"],
    ["log"],
    ["log", "acme"],
    ["show", "acme"],
    ["show", "acme", "budget"],
    ["revert", "HEAD"],
    ["revert", "20261130-101200-ab12"],
    WRITE,
]


@pytest.fixture
def edited_in_a_session(repo: MemoryRepo, client: Path) -> Path:
    """Card acme: budget written, then edited in session 20261130-101200-ab12."""
    write_card(repo, "acme", "", "## Budget\n30k\n", IndexEntry.make("budget", ["b"], "Budget 30k"))
    write_card(
        repo,
        "acme",
        "30k",
        "40k",
        IndexEntry.make("budget", ["b"], "Budget 40k"),
        session="20261130-101200-ab12",
    )
    return client


@pytest.mark.parametrize("args", BRANCH_COMMANDS, ids=lambda a: " ".join(a[:3]))
def test_an_unknown_branch_is_exit_3_in_one_line_and_changes_nothing(
    edited_in_a_session: Path, args: list[str]
) -> None:
    before = snapshot(edited_in_a_session)
    res = gm("-C", str(edited_in_a_session), *args, "--branch", "nosuch")
    assert res.code == 3, (res.out, res.err)
    if "--json" in args:
        assert '"message": "no branch \'nosuch\' in ' in res.out
    else:
        assert res.err == f"gitmem: error: no branch 'nosuch' in {edited_in_a_session}\n"
        assert res.out == ""
    assert snapshot(edited_in_a_session) == before


@pytest.mark.parametrize(
    "name", ["main~1", "main^", "main:cards", "-x", "a..b", "a b", "main\n", "x.lock", "@{1}"]
)
@pytest.mark.parametrize(
    "args", [["index"], ["reindex"], ["log"], ["show", "acme"], WRITE], ids=lambda a: a[0]
)
def test_a_revision_or_malformed_name_is_not_a_branch(
    edited_in_a_session: Path, args: list[str], name: str
) -> None:
    before = snapshot(edited_in_a_session)
    res = gm("-C", str(edited_in_a_session), *args, "--branch", name)
    assert res.code == 2
    assert res.err.startswith(f"gitmem: error: invalid branch name {name!r}")
    assert len(res.err.splitlines()) == 1
    assert snapshot(edited_in_a_session) == before


def test_a_known_branch_other_than_main_still_works(edited_in_a_session: Path) -> None:
    git(edited_in_a_session, "branch", "side", "main~1")
    assert "Budget 30k" in gm("-C", str(edited_in_a_session), "index", "--branch", "side").out
    assert gm("-C", str(edited_in_a_session), "reindex", "--branch", "side").code == 0
    assert "30k" in gm("-C", str(edited_in_a_session), "show", "acme", "--branch", "side").out
    missing = gm("-C", str(edited_in_a_session), "show", "nocard", "--branch", "side")
    assert (missing.code, missing.err) == (
        3,
        "gitmem: error: no card 'nocard' on side; cards: acme\n",
    )


@pytest.mark.parametrize(
    "args",
    [
        ["review", "20990101-000000-zz99"],
        ["review", "20990101-000000-zz99", "--accept"],
        ["review", "20990101-000000-zz99", "--reject"],
        ["revert", "20990101-000000-zz99"],
        ["usage", "--session", "20990101-000000-zz99"],
    ],
    ids=lambda a: " ".join(a[:1] + a[2:]),
)
def test_an_unknown_session_is_exit_3_in_one_line(
    edited_in_a_session: Path, args: list[str]
) -> None:
    before = snapshot(edited_in_a_session)
    res = gm("-C", str(edited_in_a_session), *args)
    assert res.code == 3, (res.out, res.err)
    assert res.err.count("\n") == 1 and "20990101-000000-zz99" in res.err
    assert snapshot(edited_in_a_session) == before


def test_a_branch_named_gitmem_is_named_when_a_session_cannot_start(
    edited_in_a_session: Path,
) -> None:
    # A person's branch `gitmem` leaves no room for gitmem/session/<id>: git refuses to
    # make the session's branch, and nobody else made it, so that is what the error says.
    git(edited_in_a_session, "branch", "gitmem")
    before = snapshot(edited_in_a_session)
    res = gm("-C", str(edited_in_a_session), "ask", "--simulated", "recall acme budget")
    assert res.code == 5, (res.out, res.err)
    error = res.err.splitlines()[-1]
    assert error.startswith("gitmem: error: git update-ref refs/heads/gitmem/session/"), res.err
    assert "'refs/heads/gitmem' exists" in error and "concurrently" not in error
    assert snapshot(edited_in_a_session) == before
