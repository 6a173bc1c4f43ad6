"""Every public entry point that takes a path takes a str or an os.PathLike, with a
leading ``~`` as the home directory, and a folder inside a repo opens the repo itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem import (
    GitMemoryTool,
    IndexEntry,
    MemoryRepo,
    NotARepo,
    clone_repo,
    export_cards,
    find_repo,
    import_notes,
    init_repo,
    install_hooks,
    open_repo,
    write_card,
)

from helpers import git

ENTRY = IndexEntry.make("next", ["ship"], "What ships next")


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


def test_export_cards_takes_a_str_with_a_tilde(home_client: Path, hermetic: Path) -> None:
    with open_repo("~/acme") as repo:
        write_card(repo, "ideas", "", "# Ideas\n\n## Next\nship\n", ENTRY)
        done = export_cards(repo, "~/out")
    assert done.files == ["ideas.md"]
    assert (hermetic / "out/ideas.md").read_text() == "# Ideas\n\n## Next\nship\n"


def test_import_notes_takes_a_str_with_a_tilde(home_client: Path, hermetic: Path) -> None:
    (hermetic / "notes").mkdir()
    (hermetic / "notes/ideas.md").write_text("# Ideas\n\n## Next\nship\n")
    with open_repo("~/acme") as repo:
        done = import_notes(repo, "~/notes")
    assert [c.card for c in done.cards] == ["ideas"] and len(done.commits) == 1
    assert (home_client / "cards/ideas.md").read_text() == "# Ideas\n\n## Next\nship\n"


def test_install_hooks_takes_a_str_with_a_tilde(home_client: Path) -> None:
    (home_client / ".git/hooks/commit-msg").unlink()
    actions = {a.hook: a.action for a in install_hooks("~/acme")}
    assert actions["commit-msg"] == "installed"
    assert "gitmem-hook" in (home_client / ".git/hooks/commit-msg").read_text()


def test_clone_repo_takes_a_str_with_a_tilde(home_client: Path, hermetic: Path) -> None:
    bare = hermetic / "remote.git"
    git(hermetic, "clone", "-q", "--bare", str(home_client), str(bare))
    done = clone_repo(str(bare), "~/copy")
    assert done.path == str(hermetic / "copy")
    assert git(hermetic / "copy", "rev-parse", "main") == git(home_client, "rev-parse", "main")
