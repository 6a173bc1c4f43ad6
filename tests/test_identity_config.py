"""Who gitmem commits as: git's own answer, from every place git takes it (git is the judge).

gitmem asks ``git config`` (one process per open repo) rather than reading the files
in-process: these are the places an in-process reader such as GitPython's misses.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from gitmem.memory.repo import MemoryRepo

from helpers import git


@pytest.fixture
def bare_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.delenv(f"GIT_{role}_NAME")
        monkeypatch.delenv(f"GIT_{role}_EMAIL")


def _git_ident(path: Path, role: str = "AUTHOR") -> tuple[str, str]:
    out = subprocess.run(
        ["git", "var", f"GIT_{role}_IDENT"], cwd=path, capture_output=True, text=True, check=True
    ).stdout
    m = re.fullmatch(r"(.*) <(.*)> \d+ [+-]\d{4}\n", out)
    assert m, out
    return m.group(1), m.group(2)


def _ours(path: Path, role: str = "AUTHOR") -> tuple[str, str]:
    with MemoryRepo(path) as repo:
        return repo.identity(role)


def _set(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.usefixtures("bare_env")
def test_identity_from_an_include_if_gitdir(client: Path, hermetic: Path) -> None:
    _set(
        hermetic / ".gitconfig",
        f"[user]\n\tname = Home\n\temail = home@example.com\n"
        f'[includeIf "gitdir:{client}/"]\n\tpath = work.inc\n',
    )
    _set(hermetic / "work.inc", "[user]\n\tname = At Work\n\temail = work@example.com\n")
    assert _ours(client) == _git_ident(client) == ("At Work", "work@example.com")


@pytest.mark.usefixtures("bare_env")
def test_identity_from_git_config_global(
    client: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere.gitconfig"
    _set(elsewhere, "[user]\n\tname = Global File\n\temail = g@example.com\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(elsewhere))
    assert _ours(client) == _git_ident(client) == ("Global File", "g@example.com")


@pytest.mark.usefixtures("bare_env")
def test_identity_from_git_dash_c_and_config_env(
    client: Path, hermetic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``git -c user.name=...`` reaches a hook through GIT_CONFIG_PARAMETERS; so does
    GIT_CONFIG_COUNT: both win over the files."""
    _set(hermetic / ".gitconfig", "[user]\n\tname = Home\n\temail = home@example.com\n")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'user.name'='Dash C'")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "user.email")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "env@example.com")
    assert _ours(client) == _git_ident(client) == ("Dash C", "env@example.com")


@pytest.mark.usefixtures("bare_env")
def test_repo_config_over_global_and_env_over_both(
    client: Path, hermetic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _set(hermetic / ".config" / "git" / "config", "[user]\n\tname = Xdg\n\temail = x@example.com\n")
    git(client, "config", "user.name", "Repo Only")
    assert _ours(client) == _git_ident(client) == ("Repo Only", "x@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Committer Env")
    assert _ours(client, "COMMITTER") == _git_ident(client, "COMMITTER")
    assert _ours(client, "COMMITTER") == ("Committer Env", "x@example.com")
    assert _ours(client, "AUTHOR") == ("Repo Only", "x@example.com")
