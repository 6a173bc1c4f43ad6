"""git's attributes cannot change what gitmem writes: a person's .gitattributes (an encoding,
line endings) leaves the working tree and index as the commit says, with `git status` clean
and a person's next commit taking nothing of the card's; and one a remote brings that would
change how memory is stored or merged is refused by `gitmem sync`, like a symlink."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_sync import make_pair, state, sync

from gitmem.bridges.memory_tool import GitMemoryTool
from gitmem.memory.repo import MemoryRepo

from helpers import git, gm, try_write, write

ATTRIBUTES = ["*.md working-tree-encoding=UTF-16LE\n", "* text=auto\n"]
CARD = "# acme\r\n\r\n## P\r\nBudget: 30k, café\r\n"  # CRLF, and a byte outside ASCII


def person_sets(client: Path, attributes: str) -> None:
    """The person adds a line to the repo's .gitattributes and commits it, and a file of
    their own to edit later."""
    with (client / ".gitattributes").open("a") as f:
        f.write(attributes)
    (client / "notes.txt").write_text("mine\n")
    git(client, "add", ".gitattributes", "notes.txt")
    git(client, "commit", "-qm", "my attributes")
    for name in git(client, "ls-files", "-z").split("\0")[:-1]:  # checked out again under them
        (client / name).unlink()
    git(client, "checkout", "-q", "--", ".")
    assert status(client) == ""


def status(client: Path) -> str:
    return git(client, "status", "--porcelain", "--untracked-files=all")


def person_commits_notes(client: Path, text: str = "mine, edited\n") -> None:
    """An unrelated `git commit -a`: it must take nothing of the card's."""
    (client / "notes.txt").write_text(text)
    git(client, "commit", "-qam", "my notes")
    assert git(client, "show", "--format=", "--name-only", "HEAD").split() == ["notes.txt"]


@pytest.mark.parametrize("attributes", ATTRIBUTES)
def test_gitmem_write_leaves_the_tree_clean_whatever_gitattributes_says(
    client: Path, attributes: str
) -> None:
    person_sets(client, attributes)
    write(client, "acme", "", CARD, "p")  # a new card
    assert status(client) == ""
    person_commits_notes(client)
    write(client, "acme", "30k", "40k", "p")  # the next write to it is not refused
    assert status(client) == ""
    person_commits_notes(client, "again\n")
    assert git(client, "show", "main:cards/acme.md") == CARD.replace("30k", "40k")
    assert status(client) == ""


@pytest.mark.parametrize("attributes", ATTRIBUTES)
def test_the_memory_tool_leaves_the_tree_clean_whatever_gitattributes_says(
    client: Path, attributes: str
) -> None:
    person_sets(client, attributes)
    with MemoryRepo(client) as repo:
        tool = GitMemoryTool(repo, branch="main")
        tool.call({"command": "create", "path": "/memories/acme.md", "file_text": CARD})
        assert status(client) == ""
        cmd = {"command": "str_replace", "path": "/memories/acme.md"}
        tool.call({**cmd, "old_str": "30k", "new_str": "40k"})
    assert status(client) == ""
    person_commits_notes(client)
    assert git(client, "show", "main:cards/acme.md") == CARD.replace("30k", "40k")


# -- what a remote brings ------------------------------------------------------------
def pushed_by_the_other_machine(other: Path, name: str, text: str) -> None:
    (other / name).parent.mkdir(parents=True, exist_ok=True)
    (other / name).write_text(text)
    git(other, "add", name)
    git(other, "commit", "-qm", "attributes", "--no-verify")
    git(other, "push", "-q", "origin", "main")


TEMPLATE = "sessions/*.jsonl merge=union\nlogs/*.jsonl merge=union\n"


# (file, line added to it, the attribute as the refusal names it)
HOSTILE = [
    (
        ".gitattributes",
        "*.md working-tree-encoding=UTF-16LE\n",
        "working-tree-encoding=UTF-16LE",
    ),
    (".gitattributes", "* text=auto\n", "text=auto"),
    (".gitattributes", "*.md eol=crlf\n", "eol=crlf"),
    (".gitattributes", "cards/** filter=lfs\n", "filter=lfs"),
    (".gitattributes", "*.md merge=union\n", "merge=union"),
    (".gitattributes", "persona.md diff=odd\n", "diff=odd"),
    ("cards/.gitattributes", "* -text\n", "-text"),
    ("cards/d/.gitattributes", "*.md ident\n", "ident"),
]


@pytest.mark.parametrize(("name", "line", "shown"), HOSTILE)
def test_sync_refuses_gitattributes_that_change_memory(
    tmp_path: Path, name: str, line: str, shown: str
) -> None:
    _bare, laptop, desktop = make_pair(tmp_path)
    old = (desktop / name).read_text() if (desktop / name).exists() else ""
    pushed_by_the_other_machine(desktop, name, old + line)
    before = state(laptop)
    code, _, err = sync(laptop)
    assert code == 4, err
    (said,) = err.strip().splitlines()
    assert f"origin/main brings {name} that sets {shown} on " in said, said
    assert "nothing was changed here" in said
    assert state(laptop) == before


def test_sync_takes_gitattributes_that_leave_memory_alone_and_refuses_dropping_its_own(
    tmp_path: Path,
) -> None:
    _bare, laptop, desktop = make_pair(tmp_path)
    pushed_by_the_other_machine(desktop, ".gitattributes", TEMPLATE + "*.png binary\n")
    pushed_by_the_other_machine(desktop, "docs/.gitattributes", "* text eol=crlf\n")
    code, _, err = sync(laptop)
    assert code == 0, err
    assert "*.png binary" in (laptop / ".gitattributes").read_text()
    pushed_by_the_other_machine(desktop, ".gitattributes", "logs/*.jsonl merge=union\n")
    before = state(laptop)
    code, _, err = sync(laptop)
    assert code == 4, err
    assert "brings .gitattributes that drops merge=union from sessions/" in err, err
    assert state(laptop) == before


# -- what a clone brings ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "line", "shown"), [*HOSTILE, (".gitattributes", "* text=auto eol=crlf\n", "eol")]
)
def test_clone_refuses_gitattributes_that_change_memory_and_leaves_nothing(
    tmp_path: Path, name: str, line: str, shown: str
) -> None:
    bare, _laptop, desktop = make_pair(tmp_path)
    old = (desktop / name).read_text() if (desktop / name).exists() else ""
    pushed_by_the_other_machine(desktop, name, old + line)
    target = tmp_path / "new"
    res = gm("clone", str(bare), str(target))
    assert res.code == 4, res.err
    (said,) = res.err.strip().splitlines()
    assert f"origin/main brings {name} that sets {shown}" in said, said
    assert not target.exists()
    (tmp_path / "empty").mkdir()  # a folder that was there stays, empty
    assert gm("clone", str(bare), str(tmp_path / "empty")).code == 4
    assert list((tmp_path / "empty").iterdir()) == []


def test_clone_refuses_a_symlink_where_memory_lives_in_any_commit(tmp_path: Path) -> None:
    """As sync does: a link a checkout would make (or one an older commit made, which a
    later checkout of that commit would) is refused before anything is checked out."""
    bare, _laptop, desktop = make_pair(tmp_path)
    os.symlink("/etc/passwd", desktop / "cards" / "pw.md")
    git(desktop, "add", "cards/pw.md")
    git(desktop, "commit", "-qm", "a link", "--no-verify")
    git(desktop, "rm", "-q", "cards/pw.md")
    git(desktop, "commit", "-qm", "gone again", "--no-verify")
    git(desktop, "push", "-q", "origin", "main")
    res = gm("clone", str(bare), str(tmp_path / "new"))
    assert res.code == 4, res.err
    (said,) = res.err.strip().splitlines()
    assert "origin/main brings cards/pw.md as a symlink (commit " in said, said
    assert not (tmp_path / "new").exists()


def test_clone_never_runs_a_filter_the_remote_names(tmp_path: Path, hermetic: Path) -> None:
    """A driver the person configured (say for their other repos) is named by the remote's
    .gitattributes: a checkout would run it on every card."""
    bare, _laptop, desktop = make_pair(tmp_path)
    ran = tmp_path / "smudge-ran"
    git(tmp_path, "config", "--global", "filter.mine.smudge", f"touch {ran}; cat")
    git(tmp_path, "config", "--global", "filter.mine.clean", "cat")
    pushed_by_the_other_machine(desktop, ".gitattributes", TEMPLATE + "cards/** filter=mine\n")
    res = gm("clone", str(bare), str(tmp_path / "new"))
    assert res.code == 4, res.err
    assert "sets filter=mine on cards/" in res.err, res.err
    assert not ran.exists()
    assert not (tmp_path / "new").exists()


def test_clone_takes_gitattributes_that_leave_memory_alone_and_refuses_dropping_its_own(
    tmp_path: Path,
) -> None:
    bare, _laptop, desktop = make_pair(tmp_path)
    pushed_by_the_other_machine(desktop, ".gitattributes", TEMPLATE + "*.png binary\n")
    pushed_by_the_other_machine(desktop, "docs/.gitattributes", "* text eol=crlf\n")
    target = tmp_path / "new"
    res = gm("clone", str(bare), str(target))
    assert res.code == 0, res.err
    write(target, "acme", "", CARD, "p")  # written and read back as committed, byte for byte
    assert (target / "cards/acme.md").read_bytes() == CARD.encode()
    assert git(target, "show", "main:cards/acme.md") == CARD
    assert status(target) == ""
    pushed_by_the_other_machine(desktop, ".gitattributes", "logs/*.jsonl merge=union\n")
    res = gm("clone", str(bare), str(tmp_path / "other"))
    assert res.code == 4, res.err
    assert "brings .gitattributes that drops merge=union from sessions/" in res.err, res.err
    assert not (tmp_path / "other").exists()


def test_a_follow_cut_short_under_gitattributes_is_finished_by_the_next_command(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The follow failed (the disk filled): the file on disk is the old card as git checked
    it out (UTF-16LE), not its committed bytes, and `gitmem recover` still knows it for
    gitmem's and brings it to the new one."""
    import subprocess
    from typing import Any

    from gitmem.git.runner import Git

    person_sets(client, ATTRIBUTES[0])
    write(client, "acme", "", CARD, "p")
    real = Git.run

    def full(self: Git, *args: str, **kw: Any) -> subprocess.CompletedProcess[bytes]:
        if args[2:4] == ("--literal-pathspecs", "restore"):
            err = b"error: unable to write file cards/acme.md: No space left on device\n"
            return subprocess.CompletedProcess(["git", *args], 1, b"", err)
        return real(self, *args, **kw)

    monkeypatch.setattr(Git, "run", full)
    res = try_write(client, "acme", "30k", "40k", "p")
    assert res.code == 0 and "did not follow" in res.err, res.err
    monkeypatch.setattr(Git, "run", real)
    res = gm("-C", str(client), "recover")
    assert res.code == 0 and "cards/acme.md" in res.out, res.out
    assert status(client) == ""
    on_disk = (client / "cards/acme.md").read_bytes().decode("utf-16-le")
    assert on_disk == CARD.replace("30k", "40k")
