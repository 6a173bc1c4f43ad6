"""The path rule at every door: names a checkout on some system cannot hold, or that
Windows and macOS take for another, are never made by the memory tool and never received
by sync or clone; a repo an older gitmem let one into still works and says how to fix it."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from pathlib import Path

import pytest
from anthropic.tools import ToolError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_sync import make_pair, sync

from gitmem.bridges.memory_tool import GitMemoryTool
from gitmem.memory import path_rule
from gitmem.memory.repo import MemoryRepo
from gitmem.setup.init import init_repo

from helpers import git, gm, snapshot, write_sha

CARD = "# Notes\n\n## Budget\n30k\n"


def _put(repo: Path, tree: str, parts: list[str], blob: str) -> str:
    """``tree`` with ``blob`` at ``parts``, made with ``git mktree``, which judges no name
    (as a hostile remote's own tools would not)."""
    rows = [r for r in git(repo, "ls-tree", "-z", tree).split("\0") if r] if tree else []
    entries = {r.split("\t", 1)[1]: r.split("\t", 1)[0] for r in rows}
    head = parts[0]
    if len(parts) == 1:
        entries[head] = f"100644 blob {blob}"
    else:
        old = entries.get(head, "").split(" ")
        sub = _put(repo, old[2] if len(old) == 3 and old[1] == "tree" else "", parts[1:], blob)
        entries[head] = f"040000 tree {sub}"
    listing = "".join(f"{meta}\t{name}\0" for name, meta in sorted(entries.items()))
    return git(repo, "mktree", "-z", input=listing.encode()).strip()


def plant(repo: Path, path: str, message: str = "plant") -> str:
    """A commit on main adding ``path``, made with plumbing; main moves, the files do not."""
    blob = git(repo, "hash-object", "-w", "--stdin", input=CARD.encode()).strip()
    tree = _put(repo, git(repo, "rev-parse", "main^{tree}").strip(), path.split("/"), blob)
    sha = git(repo, "commit-tree", tree, "-p", "main", "-m", message).strip()
    git(repo, "update-ref", "refs/heads/main", sha)
    return sha


HOSTILE = [
    "cards/git~1/config",
    "cards/GIT~1/config",
    "cards/Git~1/x.md",
    "cards/git~1 /config",
    "cards/git~1./config",
    "cards/sub/git~1/x",
    "cards/.git/config",
    "cards/.GIT/config",
    ".GIT/config",
    "GIT~1/config",
    ".git./config",
    "x/.git/config",
    "cards/\u200c.git/config",
    "cards/\u200d.git",
    "cards/\ufeff.git",
    "cards/gitmod~1/config",
    "cards/cafe\u0301.md",
    "cards/evil\u202egnp.md",
    "cards/dot.md.",
    "cards/con.md",
    "cards/AUX",
    "cards/acme.md/x.md",
    "cards/Beta.md",  # beside make_pair's cards/beta.md
]


@pytest.mark.slow
@pytest.mark.parametrize("path", HOSTILE)
def test_sync_refuses_a_remote_commit_that_makes_a_refused_name(tmp_path: Path, path: str) -> None:
    bare, laptop, desktop = make_pair(tmp_path)
    git(laptop, "push", "-q", str(bare), f"{plant(laptop, path)}:refs/heads/main")
    before = snapshot(desktop)
    code, out, err = sync(desktop)
    assert code != 0 and code != 70, out
    message = err.strip().splitlines()[0]
    assert "nothing was changed here" in message, err
    refs = {k: v for k, v in snapshot(desktop).items() if not k.startswith(".git/objects/")}
    assert refs == {k: v for k, v in before.items() if not k.startswith(".git/objects/")}
    assert gm("-C", str(desktop), "status").code == 0
    # and a fresh clone of that remote refuses it too, leaving nothing behind
    res = gm("clone", str(bare), str(tmp_path / "fresh"))
    assert res.code not in (0, 70), res.out
    assert not (tmp_path / "fresh").exists()


@pytest.mark.slow
def test_a_repo_holding_a_refused_name_works_and_says_how_to_remove_it(client: Path) -> None:
    write_sha(client, "acme", "", CARD, "budget", "budget set")
    bad = "cards/git~1/config"
    plant(client, bad)
    gm("-C", str(client), "recover")  # the follow an older gitmem would have left behind
    for args in (
        ["index"],
        ["log"],
        ["cards"],
        ["reindex"],
        ["search", "budget"],
    ):
        res = gm("-C", str(client), *args)
        assert res.code == 0, (args, res.err)
    write_sha(client, "acme", "30k", "40k", "budget", "raised")  # an edit beside it lands
    status = gm("-C", str(client), "status")
    assert status.code == 0 and bad in status.out and "recover --remove" in status.out
    done = gm("-C", str(client), "recover", "--remove", bad)
    assert done.code == 0, done.err
    assert bad not in git(client, "ls-tree", "-r", "--name-only", "main")
    assert git(client, "log", "-1", "--format=%s", "main").strip() == f"gitmem: remove {bad}"
    assert bad not in gm("-C", str(client), "status").out
    assert git(client, "status", "--porcelain") == ""
    again = gm("-C", str(client), "recover", "--remove", "cards/acme.md")
    assert again.code not in (0, 70) and "not a path gitmem refuses" in again.err


# -- every name the memory tool makes holds everywhere -----------------------------------

_pieces = st.sampled_from(
    [
        "a",
        "A",
        "git~1",
        "GIT~2",
        ".git",
        "gitmod~1",
        "con",
        "Nul",
        "com1",
        "é",
        "e\u0301",
        "\u200c",
        "\u202e",
        "\t",
        " ",
        ".",
        ":",
        "\\",
        "?",
        "~",
        ".md",
        "-",
        "日本",
    ]
)
_names = st.lists(_pieces, min_size=1, max_size=4).map("".join)
_paths = st.lists(_names, min_size=1, max_size=3).map("/".join)


def _checks_out_everywhere(root: Path) -> None:
    clone = root.parent / f"{root.name}-check"
    subprocess.run(
        [
            "git",
            "-c",
            "core.protectNTFS=true",
            "-c",
            "core.protectHFS=true",
            "clone",
            "-q",
            str(root),
            str(clone),
        ],
        check=True,
        capture_output=True,
    )
    git(clone, "fsck", "--strict", "--no-dangling")


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_paths, min_size=1, max_size=6))
def test_every_name_the_memory_tool_makes_checks_out_everywhere(paths: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "client"
        init_repo(root)
        with MemoryRepo(root) as repo:
            tool = GitMemoryTool(repo, "main")
            for path in paths:
                with contextlib.suppress(ToolError):  # a refusal: one line, nothing made
                    tool.call({"command": "create", "path": f"/memories/{path}", "file_text": "x"})
        made = [p for p in git(root, "ls-tree", "-r", "-z", "--name-only", "main").split("\0") if p]
        assert not [p for p in made if path_rule.path_problem(p)]
        assert path_rule.tree_clashes(made) == []
        _checks_out_everywhere(root)
        for args in (["status"], ["index"], ["log"], ["cards"]):
            assert gm("-C", str(root), *args).code == 0, args


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_names, min_size=1, max_size=6, unique=True))
def test_every_card_import_makes_checks_out_everywhere(names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        notes = Path(tmp) / "notes"
        notes.mkdir()
        for name in names:
            with contextlib.suppress(OSError):  # a name this disk cannot hold is no note
                (notes / f"{name.replace('/', '-')}.md").write_text(CARD)
        root = Path(tmp) / "client"
        init_repo(root)
        gm("-C", str(root), "import", str(notes), "--skip-problems")
        made = [p for p in git(root, "ls-tree", "-r", "-z", "--name-only", "main").split("\0") if p]
        assert not [p for p in made if path_rule.path_problem(p)]
        assert path_rule.tree_clashes(made) == []
        _checks_out_everywhere(root)
