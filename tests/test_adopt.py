"""`gitmem init` adopts a folder with files or an existing git repo: history kept, gitmem's
files in one commit, the person's files never overwritten, uncommitted work never touched."""

from __future__ import annotations

import json
import os
from pathlib import Path

from gitmem.memory.repo import MemoryRepo

from helpers import git, gm, snapshot


def _repo_with_history(path: Path, branch: str = "master") -> str:
    path.mkdir()
    git(path, "init", "-q", "-b", branch)
    (path / "README.md").write_text("# My project\n")
    git(path, "add", "README.md")
    git(path, "commit", "-qm", "first")
    (path / "notes.md").write_text("# Notes\n\n## Ideas\nship it\n")
    git(path, "add", "notes.md")
    git(path, "commit", "-qm", "second")
    return git(path, "rev-parse", "HEAD").strip()


def _committed(path: Path, rev: str = "HEAD") -> list[str]:
    return git(path, "show", "--name-only", "--format=", rev).split()


def test_empty_folder_is_a_new_repo(tmp_path: Path) -> None:
    target = tmp_path / "empty"
    target.mkdir()
    res = gm("init", str(target), "--json")
    assert res.code == 0, res.err
    out = json.loads(res.out)
    assert out["adopted"] is False and out["kept"] == []
    assert git(target, "rev-list", "--count", "main").strip() == "1"
    assert git(target, "status", "--porcelain") == ""


def test_folder_of_notes_is_adopted_and_the_notes_are_left_as_they_were(tmp_path: Path) -> None:
    target = tmp_path / "notes"
    target.mkdir()
    (target / "acme.md").write_text("# Acme\n\n## Budget\n30k\n")
    (target / "persona.md").write_text("I am my own persona.\n")
    (target / "cards").mkdir()
    (target / "cards" / "old.md").write_text("# Old\n")
    mine = {p: (target / p).read_bytes() for p in ("acme.md", "persona.md", "cards/old.md")}
    res = gm("init", str(target))
    assert res.code == 0, res.err
    assert "Adopted" in res.out
    assert "kept as they were (yours, not overwritten): cards/, persona.md" in res.out
    assert "3 files of yours are not committed" in res.out
    assert {p: (target / p).read_bytes() for p in mine} == mine
    assert git(target, "rev-list", "--count", "main").strip() == "1"
    added = _committed(target)
    assert "persona.md" not in added and not any(p.startswith("cards/") for p in added)
    assert set(added) == {
        ".gitattributes",
        "gitmem.toml",
        "logs/.gitkeep",
        "sessions/.gitkeep",
        "synthesis.md",
    }
    untracked = git(target, "status", "--porcelain").split("\n")
    assert "?? acme.md" in untracked and "?? persona.md" in untracked
    assert gm("-C", str(target), "index").code == 0


def test_repo_on_master_keeps_history_and_gets_main(tmp_path: Path) -> None:
    target = tmp_path / "proj"
    old_tip = _repo_with_history(target)
    hook = target / ".git/hooks/commit-msg"
    hook.write_text(f"#!/bin/sh\necho mine >> {tmp_path / 'ran'}\n")
    hook.chmod(0o755)
    res = gm("init", str(target), "--json")
    assert res.code == 0, res.err
    out = json.loads(res.out)
    assert out["adopted"] is True
    assert any("created branch main at master's tip" in n for n in out["notes"])
    assert git(target, "branch", "--show-current").strip() == "main"
    assert git(target, "rev-parse", "master").strip() == old_tip  # left as it was
    assert git(target, "rev-parse", "main~1").strip() == old_tip  # one commit on top
    assert git(target, "log", "--format=%s", "main").split("\n")[:3] == [
        "gitmem: adopt proj as memory for client proj",
        "second",
        "first",
    ]
    assert "persona.md" in _committed(target) and "README.md" not in _committed(target)
    assert (target / ".git/hooks/commit-msg.legacy").read_text().startswith("#!/bin/sh\necho mine")
    assert "gitmem-hook v1" in hook.read_text()
    assert git(target, "status", "--porcelain") == ""
    (target / "x.txt").write_text("x")
    git(target, "add", "x.txt")
    git(target, "commit", "-qm", "a plain commit")
    assert (tmp_path / "ran").read_text() == "mine\n"  # the person's hook still runs
    res = gm(
        "-C",
        str(target),
        "write",
        "proj",
        "--old",
        "",
        "--new",
        "## Plan\nship\n",
        "--section",
        "plan",
        "--keywords",
        "plan",
        "--summary",
        "the plan",
    )
    assert res.code == 0, res.err
    with MemoryRepo(target) as repo:
        assert repo.tip("main") == git(target, "rev-parse", "HEAD").strip()
    assert (target / "cards/proj.md").read_text() == "# proj\n\n## Plan\nship\n"
    assert git(target, "rev-parse", "master").strip() == old_tip


def test_repo_with_uncommitted_changes_is_refused_and_untouched(tmp_path: Path) -> None:
    target = tmp_path / "proj"
    _repo_with_history(target)
    (target / "notes.md").write_text("# Notes\n\n## Ideas\nunsaved thought\n")
    (target / "staged.md").write_text("staged\n")
    git(target, "add", "staged.md")
    before = snapshot(target)
    res = gm("init", str(target))
    assert res.code == 4, res.err
    assert "uncommitted changes" in res.err and "commit or stash" in res.err
    assert len(res.err.strip().split("\n")) == 1
    assert snapshot(target) == before


def test_repo_with_main_and_another_branch_checked_out_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "proj"
    _repo_with_history(target, "main")
    git(target, "switch", "-q", "-c", "topic")
    before = snapshot(target)
    res = gm("init", str(target))
    assert res.code == 4 and "git switch main" in res.err
    assert snapshot(target) == before


def test_unborn_repo_on_master_starts_main(tmp_path: Path) -> None:
    target = tmp_path / "fresh"
    target.mkdir()
    git(target, "init", "-q", "-b", "master")
    res = gm("init", str(target))
    assert res.code == 0, res.err
    assert git(target, "branch", "--show-current").strip() == "main"
    assert git(target, "branch", "--list").split() == ["*", "main"]


def test_symlink_where_memory_lives_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "notes"
    target.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (target / "a.md").write_text("a\n")
    os.symlink(tmp_path / "elsewhere", target / "cards")
    before = snapshot(target)
    res = gm("init", str(target))
    assert res.code == 4 and "symlink" in res.err
    assert snapshot(target) == before and not (target / ".git").exists()


def test_a_kept_gitmem_toml_that_is_not_gitmem_config_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "notes"
    target.mkdir()
    (target / "gitmem.toml").write_text("this is = not [toml\n")
    before = snapshot(target)
    res = gm("init", str(target))
    assert res.code == 6 and "gitmem.toml" in res.err
    assert snapshot(target) == before and not (target / ".git").exists()


def test_init_on_an_adopted_repo_changes_nothing(client: Path) -> None:
    before = snapshot(client)
    res = gm("init", str(client))
    assert res.code == 2 and "memory repo" in res.err
    assert snapshot(client) == before


def test_a_failed_commit_undoes_everything_adoption_wrote(tmp_path: Path) -> None:
    target = tmp_path / "proj"
    old_tip = _repo_with_history(target)
    # A reference-transaction hook that refuses git commit's move of main makes the commit
    # fail after the files were written, staged and the branch switched: all of it must
    # be undone. (Loose objects git add wrote stay: unreachable, they are not the repo's.)
    hook = target / ".git/hooks/reference-transaction"
    hook.write_text(
        f'#!/bin/sh\n[ "$1" = prepared ] && grep -q "^{old_tip} .* HEAD$" && exit 1\nexit 0\n'
    )
    hook.chmod(0o755)

    def state() -> dict[str, str]:
        return {k: v for k, v in snapshot(target).items() if not k.startswith(".git/objects/")}

    before = state()
    res = gm("init", str(target))
    assert res.code == 5 and "commit" in res.err, res.err
    assert state() == before
    assert git(target, "rev-parse", "HEAD").strip() == old_tip
    assert git(target, "branch", "--show-current").strip() == "master"


def test_a_folder_inside_another_repo_gets_its_own_and_says_so(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    _repo_with_history(outer)
    inner = outer / "memory"
    inner.mkdir()
    (inner / "a.md").write_text("# A\n")
    before = git(outer, "rev-parse", "HEAD")
    res = gm("init", str(inner), "--json")
    assert res.code == 0, res.err
    assert any("is inside the git repo" in n for n in json.loads(res.out)["notes"])
    assert git(inner, "rev-parse", "--show-toplevel").strip() == str(inner)
    assert git(outer, "rev-parse", "HEAD") == before
