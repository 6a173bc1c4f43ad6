"""A bug's report: the user's own file, 0600, versions in it, no argument values."""

from __future__ import annotations

import stat
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from gitmem.cli.command_words import command_words
from gitmem.features import edit

from helpers import gm

SECRET = "Dana's salary is 93k"


def _boom(*_args: object, **_kwargs: object) -> object:
    raise RuntimeError("simulated bug")


def test_a_bug_writes_a_private_report_without_argument_values(
    client: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setattr(edit, "write_card", _boom)
    res = gm(
        "-C",
        str(client),
        "write",
        "acme",
        "--old",
        "",
        "--new",
        SECRET,
        "--section",
        "pay",
        "--keywords",
        "salary,dana",
        "--summary",
        "Dana salary 93k",
    )
    assert res.code == 70, res.err
    log = cache / "gitmem" / "crash.log"
    assert res.err.strip().endswith(f"(details in {log})")
    assert len(res.err.strip().splitlines()) == 1
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700
    text = log.read_text()
    assert (
        "command: gitmem -C … write … --old … --new … --section … --keywords … --summary …" in text
    )
    for value in (SECRET, "93k", "salary", str(client), "pay"):
        assert value not in text, value
    assert f"python: {sys.version.split()[0]}" in text
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    assert f"git: {git_version.strip()}" in text
    assert f"gitmem: {version('vibrating-memory')}" in text
    assert "RuntimeError: simulated bug" in text


def test_without_xdg_cache_home_the_report_goes_under_home(
    client: Path, hermetic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(edit, "write_card", _boom)
    old = hermetic / ".cache" / "gitmem" / "crash.log"
    old.parent.mkdir(parents=True)
    old.write_text("an earlier report\n")
    old.chmod(0o644)
    res = gm(
        "-C",
        str(client),
        "write",
        "acme",
        "--old",
        "",
        "--new",
        SECRET,
        "--section",
        "s",
        "--keywords",
        "k",
        "--summary",
        "s",
    )
    assert res.code == 70
    assert str(old) in res.err
    assert stat.S_IMODE(old.stat().st_mode) == 0o600
    text = old.read_text()
    assert text.startswith("an earlier report\n") and "RuntimeError: simulated bug" in text


def test_command_words_keep_names_and_drop_values() -> None:
    from gitmem.cli.app import cli

    assert command_words(cli, ["--client", "chat", "chat", "--resume=abc", "--json"]) == [
        "--client",
        "…",
        "chat",
        "--resume=…",
        "--json",
    ]
    assert command_words(cli, ["-C/some/path", "show", "acme", "budget"]) == [
        "-C=…",
        "show",
        "…",
        "…",
    ]
    assert command_words(cli, ["write", "--", "-secret-"]) == ["write", "--", "…"]
