"""No git identity: gitmem still commits, as gitmem <gitmem@localhost>, and says once per
process how to set one; with an identity from config or the environment it says nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.git import identity

from helpers import git, gm

WARNING = (
    "gitmem: warning: git has no identity (user.name, user.email); committing as "
    "gitmem <gitmem@localhost>; set yours with: "
    'git config --global user.name "Your Name" && git config --global user.email you@example.com'
)
WRITE = [
    "write",
    "acme",
    "--old",
    "",
    "--new",
    "## Budget\n30k\n",
    "--section",
    "budget",
    "--keywords",
    "budget",
    "--summary",
    "budget is 30k",
]


@pytest.fixture
def anonymous(monkeypatch: pytest.MonkeyPatch) -> None:
    for role in ("AUTHOR", "COMMITTER"):
        for part in ("NAME", "EMAIL"):
            monkeypatch.delenv(f"GIT_{role}_{part}", raising=False)
    monkeypatch.setattr(identity, "_warned", False)  # each gm() stands for a new process


def test_no_identity_warns_once_per_process_with_the_command(
    tmp_path: Path, anonymous: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = gm("init", str(tmp_path / "c"))
    assert res.code == 0, res.err
    assert res.err.splitlines() == [WARNING]
    monkeypatch.setattr(identity, "_warned", False)
    wrote = gm("-C", str(tmp_path / "c"), *WRITE)
    assert wrote.code == 0, wrote.err
    assert wrote.err.splitlines() == [WARNING]  # one line, though it made several signatures
    authors = git(tmp_path / "c", "log", "--format=%an <%ae>|%cn <%ce>").splitlines()
    assert len(authors) == 2
    assert set(authors) == {"gitmem <gitmem@localhost>|gitmem <gitmem@localhost>"}
    again = gm(
        "-C",
        str(tmp_path / "c"),
        "write",
        "acme",
        "--old",
        "30k",
        "--new",
        "40k",
        "--section",
        "budget",
        "--keywords",
        "budget",
        "--summary",
        "now 40k",
    )
    assert again.code == 0 and again.err == ""  # the same process: said already


def test_identity_from_config_or_environment_is_used_silently(
    tmp_path: Path, anonymous: None, monkeypatch: pytest.MonkeyPatch, hermetic: Path
) -> None:
    git(hermetic, "config", "--global", "user.name", "Dana Config")
    git(hermetic, "config", "--global", "user.email", "dana@example.com")
    res = gm("init", str(tmp_path / "c"))
    assert res.code == 0 and res.err == "", res.err
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Eve Env")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "eve@example.com")
    wrote = gm("-C", str(tmp_path / "c"), *WRITE)
    assert wrote.code == 0 and wrote.err == "", wrote.err
    assert git(tmp_path / "c", "log", "-1", "--format=%an <%ae>|%cn <%ce>").strip() == (
        "Eve Env <eve@example.com>|Dana Config <dana@example.com>"
    )
