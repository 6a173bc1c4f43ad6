"""The search index is built where a person sees it (clone, init of an existing repo,
reindex), with progress on a terminal only, never silently inside a first search."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mcp import ClientSession
from test_mcp_server import run
from test_progress import _on_pty, _piped
from test_sync import make_pair

from gitmem import open_repo
from gitmem.fakeapi import FakeAnthropicServer, RuleModel
from gitmem.search import cache

from helpers import git, gm

_DRAWN = "gitmem: building the search index: "


def _cached_at(path: Path) -> str | None:
    """The commit the search cache file of main was built at; None when there is none."""
    with open_repo(path) as repo:
        stored = cache.Stored.open(cache.path(repo, "main"))
    return None if stored is None else stored.commit


def _existing_repo(path: Path, commits: int = 3) -> Path:
    """A plain git repo with a few commits of Markdown cards, as a person might have."""
    git(path.parent, "init", "-q", "-b", "main", str(path))
    (path / "cards").mkdir()
    for i in range(commits):
        (path / "cards" / f"note-{i}.md").write_text(
            f"# Note {i}\n\n## Plan\nCamping in June {i}\n"
        )
        git(path, "add", "-A")
        git(path, "-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-qm", f"n{i}")
    return path


def test_a_clone_of_a_bare_remote_has_its_search_index_current(tmp_path: Path) -> None:
    bare, laptop, _ = make_pair(tmp_path)
    res = gm("clone", str(bare), str(tmp_path / "copy"))
    assert res.code == 0, res.err
    assert _cached_at(tmp_path / "copy") == git(laptop, "rev-parse", "main").strip()


def test_init_of_an_existing_repo_builds_its_search_index(tmp_path: Path) -> None:
    repo = _existing_repo(tmp_path / "notes")
    res = gm("init", str(repo))
    assert res.code == 0, res.err
    assert _cached_at(repo) == git(repo, "rev-parse", "main").strip()


def test_reindex_leaves_the_search_index_current(tmp_path: Path) -> None:
    repo = _existing_repo(tmp_path / "notes")
    assert gm("init", str(repo)).code == 0
    Path(cache.path(open_repo(repo), "main")).unlink()
    assert gm("-C", str(repo), "reindex").code == 0
    assert _cached_at(repo) == git(repo, "rev-parse", "main").strip()


def test_clone_reindex_and_init_draw_progress_on_a_terminal(tmp_path: Path) -> None:
    bare, _, _ = make_pair(tmp_path)
    code, screen = _on_pty(["clone", str(bare), "copy"], tmp_path)
    assert code == 0, screen
    assert _DRAWN in screen and "100% (" in screen, screen
    code, screen = _on_pty(["-C", str(tmp_path / "copy"), "reindex"], tmp_path)
    assert code == 0, screen
    assert _DRAWN in screen, screen
    code, screen = _on_pty(["init", str(_existing_repo(tmp_path / "notes"))], tmp_path)
    assert code == 0, screen
    assert _DRAWN in screen and "Adopted " in screen, screen


def test_no_progress_when_piped_or_json(tmp_path: Path) -> None:
    bare, _, _ = make_pair(tmp_path)
    piped = _piped(["clone", str(bare), "copy"], tmp_path)
    assert piped.returncode == 0 and _DRAWN not in piped.stderr, piped.stderr
    assert _cached_at(tmp_path / "copy") is not None
    code, screen = _on_pty(["-C", str(tmp_path / "copy"), "reindex", "--json"], tmp_path)
    assert code == 0 and _DRAWN not in screen, screen
    assert json.loads(screen)["search_index"] == "matched"


def test_a_search_with_no_index_yet_says_it_builds_one(tmp_path: Path) -> None:
    """A copy made without gitmem (plain git clone): the first search tells the person,
    on stderr, that it builds the index; --json output stays as it was."""
    _, _, desktop = make_pair(tmp_path)
    assert _cached_at(desktop) is None
    quiet = gm("-C", str(desktop), "search", "bob", "--json")
    assert quiet.code == 0 and quiet.err == "", quiet.err
    assert json.loads(quiet.out)["hits"]
    Path(cache.path(open_repo(desktop), "main")).unlink()
    said = gm("-C", str(desktop), "search", "bob")
    assert said.code == 0, said.err
    assert "no usable search index in this copy (none yet" in said.err
    again = gm("-C", str(desktop), "search", "bob")
    assert again.err == "" and again.out == said.out


def test_a_damaged_index_is_named_as_damaged_and_built_again(tmp_path: Path) -> None:
    _, _, desktop = make_pair(tmp_path)
    assert gm("-C", str(desktop), "search", "bob", "--json").code == 0
    file = Path(cache.path(open_repo(desktop), "main"))
    file.write_bytes(b"\0" * 64)
    said = gm("-C", str(desktop), "search", "bob")
    assert said.code == 0, said.err
    assert said.err.startswith("gitmem: no usable search index in this copy (none yet, damaged")
    assert _cached_at(desktop) is not None  # built again, where it was


def test_a_directory_where_the_index_goes_is_named_and_left_alone(tmp_path: Path) -> None:
    _, _, desktop = make_pair(tmp_path)
    file = Path(cache.path(open_repo(desktop), "main"))
    file.mkdir(parents=True)
    (file / "kept.txt").write_text("someone's file\n")
    before = git(desktop, "rev-parse", "main")
    for args in (["search", "bob"], ["reindex"]):
        got = gm("-C", str(desktop), *args)
        assert got.code not in (0, 70), (args, got.out)
        assert got.err.count("\n") == 1 and "is a directory" in got.err, got.err
        assert str(file) in got.err and "Traceback" not in got.err
    assert (file / "kept.txt").read_text() == "someone's file\n"
    assert git(desktop, "rev-parse", "main") == before
    file.rename(file.with_suffix(".aside"))
    assert gm("-C", str(desktop), "search", "bob").code == 0
    assert _cached_at(desktop) is not None


def test_reindex_says_so_when_only_the_search_index_had_no_cache(client: Path) -> None:
    assert gm("-C", str(client), "reindex").code == 0  # both caches made
    with open_repo(client) as repo:
        Path(cache.path(repo, "main")).unlink()
    text = gm("-C", str(client), "reindex").out
    assert "cache matched; search index: no cache before." in text
    assert gm("-C", str(client), "reindex").out.rstrip().endswith("cache matched.")


def test_an_empty_as_of_is_refused_by_its_option_name(client: Path) -> None:
    got = gm("-C", str(client), "search", "bob", "--as-of", "")
    assert got.code == 2 and got.err.count("\n") == 1, got.err
    assert "--as-of" in got.err and "YYYY-MM-DD" in got.err


def test_a_chat_builds_the_search_index_before_its_first_turn(client: Path) -> None:
    """A session whose turns never search still starts with the index built: the agent's
    first search is never the one that folds all of history."""
    with FakeAnthropicServer(RuleModel()) as api:
        env = {**os.environ, "ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": api.base_url}
        before = git(client, "rev-parse", "main").strip()
        assert _cached_at(client) is None
        proc = subprocess.run(
            [str(Path(sys.executable).with_name("gitmem")), "-C", str(client), "chat"],
            input=b"hello\n",
            capture_output=True,
            env=env,
            timeout=120,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr.decode()
    assert _cached_at(client) == before


def test_an_mcp_server_builds_the_search_index_before_the_first_request(
    client: Path, tmp_path: Path
) -> None:
    """Over stdio with the MCP client: the index exists once the server answers, before
    any tool call."""
    tip = git(client, "rev-parse", "main").strip()
    seen: list[str | None] = []

    async def scenario(session: ClientSession) -> None:
        seen.append(_cached_at(client))

    run(client, tmp_path, scenario)
    assert seen == [tip]
