"""The command line behaves like git's and gh's: -C and --client on either side of the
subcommand, bare `gitmem` is the help, and `gitmem completion SHELL` completes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.cli.app import all_commands
from gitmem.setup.init import init_repo
from gitmem.setup.workspace import client_path

from helpers import gm

GITMEM = Path(sys.executable).with_name("gitmem")


def test_bare_gitmem_prints_help_and_succeeds() -> None:
    res = gm()
    assert res.code == 0, res.err
    assert res.out.startswith("Usage: gitmem")
    assert all(f"  {name}" in res.out for name in ("init", "write", "mcp", "completion"))


def test_every_command_takes_C_and_client_after_its_name() -> None:
    for name, cmd in all_commands().items():
        opts = {o for p in cmd.params for o in getattr(p, "opts", [])}
        assert {"-C", "--client"} <= opts, name


@pytest.mark.parametrize("before", [True, False])
def test_C_and_client_work_on_both_sides(client: Path, before: bool) -> None:
    where = ["-C", str(client)]
    res = gm(*where, "index") if before else gm("index", *where)
    assert res.code == 0, res.err
    init_repo(client_path("acme"), "acme")
    named = ["--client", "acme"]
    res2 = gm(*named, "log", "--json") if before else gm("log", "--json", *named)
    assert res2.code == 0, res2.err
    assert "acme" in res2.out


def test_after_the_subcommand_wins_and_both_is_an_error(client: Path, tmp_path: Path) -> None:
    res = gm("-C", str(tmp_path / "nowhere"), "index", "-C", str(client))
    assert res.code == 0, res.err
    init_repo(client_path("acme"), "acme")
    both = gm("index", "-C", str(client), "--client", "acme")
    assert both.code == 2 and both.err.startswith("gitmem: error: give either")


def test_init_keeps_its_own_client_option(tmp_path: Path) -> None:
    res = gm("init", "--client", "beta")
    assert res.code == 0, res.err
    assert (client_path("beta") / "gitmem.toml").is_file()


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_a_script(shell: str) -> None:
    res = gm("completion", shell)
    assert res.code == 0, res.err
    assert "_GITMEM_COMPLETE" in res.out and f"{shell}_complete" in res.out


def test_completion_of_an_unknown_shell_is_a_usage_error() -> None:
    res = gm("completion", "tcsh")
    assert res.code == 2 and res.err.startswith("gitmem: error:")


def _bash_complete(words: str, cword: int, tmp_path: Path) -> list[str]:
    """Source `gitmem completion bash` in a real bash and complete COMP_WORDS."""
    script = (
        "source <(gitmem completion bash)\n"
        f"COMP_WORDS=({words}); COMP_CWORD={cword}\n"
        "_gitmem_completion gitmem\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    env = {**os.environ, "PATH": f"{GITMEM.parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_bash_completion_completes_subcommands_and_options(tmp_path: Path) -> None:
    assert _bash_complete("gitmem ind", 1, tmp_path) == ["index"]
    assert set(_bash_complete("gitmem re", 1, tmp_path)) >= {"reindex", "revert", "review"}
    assert {"-C", "--client", "--json"} <= set(_bash_complete("gitmem index -", 2, tmp_path))
    assert _bash_complete("gitmem completion f", 2, tmp_path) == ["fish"]


def test_completion_protocol_answers_zsh_and_fish(tmp_path: Path) -> None:
    # zsh's script passes the word's index, fish's the word itself
    for shell, cword in (("zsh", "1"), ("fish", "mc")):
        env = {
            **os.environ,
            "_GITMEM_COMPLETE": f"{shell}_complete",
            "COMP_WORDS": "gitmem mc",
            "COMP_CWORD": cword,
        }
        proc = subprocess.run(
            [str(GITMEM)],
            env=env,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        assert "mcp" in proc.stdout, (shell, proc.stdout)


def test_C_before_init_names_the_new_repo(tmp_path: Path) -> None:
    res = gm("-C", str(tmp_path / "fresh"), "init")
    assert res.code == 0, res.err
    assert (tmp_path / "fresh" / "gitmem.toml").is_file()
