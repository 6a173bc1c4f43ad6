"""Every public entry point that takes a path takes a str or an os.PathLike, with a
leading ``~`` as the home directory, and a folder inside a repo opens the repo itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem import GitMemoryTool, MemoryRepo, NotARepo, find_repo, init_repo, open_repo

from helpers import git


@pytest.fixture
def home_client(hermetic: Path) -> Path:
    """A repo at ~/acme, made from a str path with a ~."""
    init_repo("~/acme")
    return hermetic / "acme"


def test_init_repo_takes_a_str_with_a_tilde(home_client: Path) -> None:
    assert (home_client / "gitmem.toml").is_file()
    assert git(home_client, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"


def test_memory_repo_takes_a_str(home_client: Path) -> None:
    with MemoryRepo(str(home_client)) as repo:
        assert repo.root == home_client and repo.tip("main") is not None


def test_memory_repo_takes_a_tilde(home_client: Path) -> None:
    with MemoryRepo("~/acme") as repo:
        assert repo.root == home_client


def test_memory_repo_of_a_folder_inside_opens_the_repo_at_its_top(home_client: Path) -> None:
    with MemoryRepo(home_client / "cards") as repo:
        assert repo.root == home_client
        assert repo.git_dir == home_client / ".git"


def test_discover_expands_a_tilde(home_client: Path) -> None:
    with MemoryRepo.discover("~/acme/cards") as repo:
        assert repo.root == home_client


def test_discover_outside_any_repo_refuses(hermetic: Path) -> None:
    with pytest.raises(NotARepo, match="not a gitmem memory repo"):
        MemoryRepo.discover(hermetic)


def test_find_and_open_repo_expand_a_tilde(home_client: Path) -> None:
    assert find_repo("~/acme/cards") == home_client
    with open_repo("~/acme") as repo:
        assert repo.root == home_client


def test_memory_tool_takes_a_tilde(home_client: Path) -> None:
    with GitMemoryTool("~/acme", branch="main") as tool:
        assert tool.repo.root == home_client
