"""An edit on a checked-out branch leaves git's staging area as `git status` expects it."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.errors import DirtyCard
from gitmem.features.edit import write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry

from helpers import git

ENTRY = IndexEntry.make("notes", ["n"], "notes")


def ls_stage(root: Path, path: str) -> list[tuple[int, str]]:
    out = git(root, "ls-files", "--stage", "--", path)
    return [(int(line.split()[2]), line.split()[1]) for line in out.splitlines()]


def test_untracked_new_card_blocks_its_creation(repo: MemoryRepo) -> None:
    (repo.root / "cards/new.md").write_text("# mine\n")
    tip = repo.tip("main")
    with pytest.raises(DirtyCard):
        write_card(repo, "new", "", "## Notes\nx\n", ENTRY)
    assert repo.tip("main") == tip and (repo.root / "cards/new.md").read_text() == "# mine\n"


def test_dirty_check_still_works_with_a_v4_index(repo: MemoryRepo) -> None:
    write_card(repo, "a", "", "## Notes\nx\n", ENTRY)
    git(repo.root, "update-index", "--index-version", "4")
    (repo.root / "cards/a.md").write_text("# a\n\n## Notes\nmine\n")
    with pytest.raises(DirtyCard):
        write_card(repo, "a", "x", "y", ENTRY)
    git(repo.root, "checkout", "--", "cards/a.md")
    write_card(repo, "a", "x", "y", ENTRY)
    assert git(repo.root, "status", "--porcelain") == ""


@pytest.mark.parametrize(
    "setup", [[], ["--untracked-cache"], ["--split-index"], ["--index-version", "3"]]
)
def test_edit_on_a_checked_out_branch_leaves_the_index_as_git_would(
    repo: MemoryRepo, setup: list[str]
) -> None:
    write_card(repo, "a", "", "## Notes\nx\n", ENTRY)
    git(repo.root, "commit", "-q", "--allow-empty", "-m", "cache tree present")  # TREE extension
    if setup:
        git(repo.root, "update-index", *setup)
    write_card(repo, "a", "x", "y", ENTRY)
    assert git(repo.root, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(repo.root, "diff-index", "--cached", "HEAD") == ""
    assert (
        git(repo.root, "write-tree").strip() == git(repo.root, "rev-parse", "HEAD^{tree}").strip()
    )
    assert ls_stage(repo.root, "cards/a.md") == [
        (0, git(repo.root, "rev-parse", "HEAD:cards/a.md").strip())
    ]
    # The stat data is what git would record: a refresh finds nothing to re-hash.
    assert git(repo.root, "update-index", "--refresh") == ""
    assert "error" not in git(repo.root, "fsck", "--no-dangling").lower()


def test_kept_extensions_stay_readable_over_many_edits(repo: MemoryRepo) -> None:
    """A resolve-undo record (REUC) survives, after the dropped caches, edit after edit."""
    write_card(repo, "a", "", "## Notes\nx\n", ENTRY)
    write_card(repo, "b", "", "## Notes\nx\n", ENTRY)
    git(repo.root, "commit", "-q", "--allow-empty", "-m", "cache tree present")
    # Make a REUC extension: a conflict on a side file, resolved by hand.
    side = repo.root / "side.txt"
    side.write_text("base\n")
    git(repo.root, "add", "side.txt")
    git(repo.root, "commit", "-qm", "side")
    git(repo.root, "checkout", "-qb", "other")
    side.write_text("theirs\n")
    git(repo.root, "commit", "-qam", "theirs")
    git(repo.root, "checkout", "-q", "main")
    side.write_text("ours\n")
    git(repo.root, "commit", "-qam", "ours")
    git(repo.root, "merge", "-q", "other", check=False)
    side.write_text("resolved\n")
    git(repo.root, "add", "side.txt")
    git(repo.root, "commit", "-qm", "merged", "--no-verify")
    for i in range(5):
        write_card(repo, "a" if i % 2 else "b", f"{'x' if i < 2 else i - 2}", f"{i}", ENTRY)
        assert git(repo.root, "status", "--porcelain") == ""
        assert (
            git(repo.root, "write-tree").strip()
            == git(repo.root, "rev-parse", "HEAD^{tree}").strip()
        )
