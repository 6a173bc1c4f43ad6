"""Object ids as long as the repository's format: sha1 (20 bytes) or sha256 (32 bytes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.git.formats import ident_date
from gitmem.memory.repo import MemoryRepo
from gitmem.ops.refs import cas

from helpers import git


@pytest.mark.parametrize(("fmt", "width"), [("sha1", 20), ("sha256", 32)])
def test_the_store_tells_its_id_length_and_a_new_ref_is_made_with_its_zero_id(
    tmp_path: Path, fmt: str, width: int
) -> None:
    root = tmp_path / "plain"
    git(tmp_path, "init", "-q", f"--object-format={fmt}", "-b", "main", str(root))
    (root / "a.md").write_text("a\n")
    git(root, "add", "a.md")
    git(root, "commit", "-qm", "a")
    tip = git(root, "rev-parse", "main").strip()
    with MemoryRepo(root) as repo:
        assert repo.store.sha_bytes == width and len(tip) == 2 * width
        assert repo.store.zero_sha == "0" * len(tip)
        assert repo.tip("main") == tip
        # "must not exist yet" is said with the zero id of the repository's format
        assert cas(repo, "refs/heads/new", repo.branch_tip("main"), None, "test")
        assert not cas(repo, "refs/heads/new", repo.branch_tip("main"), None, "test")
    assert git(root, "rev-parse", "refs/heads/new").strip() == tip


@pytest.mark.parametrize("zone", ["+0000", "-0530", "+1245"])
def test_a_commit_date_reads_as_git_prints_it(
    tmp_path: Path, zone: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "plain"
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    monkeypatch.setenv("GIT_COMMITTER_DATE", f"1764498000 {zone}")
    git(root, "commit", "-q", "--allow-empty", "-m", "a")
    with MemoryRepo(root) as repo:
        commit = repo.store.read_commit("main")
    assert ident_date(commit.committer) == git(root, "log", "-1", "--format=%cI").strip()
