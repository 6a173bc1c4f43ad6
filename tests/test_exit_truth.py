"""Exit codes and messages that tell the truth (issue 24, point 2), through the installed
``gitmem``: a model that never answered is exit 7 naming the endpoint; a sync that cannot
reach its remote says git's reason; a session with no memory edits never waits for
review; a name that is not found comes with what exists or the command that lists it."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.fakeapi import FakeAnthropicServer, QueueModel
from gitmem.setup.init import init_repo

from helpers import git, gm

GITMEM = str(Path(sys.executable).with_name("gitmem"))


def run(*args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [GITMEM, *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env=dict(os.environ, **env),
    )


@pytest.fixture
def nowhere() -> str:
    """The address of a port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _review_policy(client: Path) -> None:
    toml = client / "gitmem.toml"
    toml.write_text(toml.read_text().replace('review = "auto"', 'review = "review"'))
    git(client, "commit", "-qam", "review every session")


@pytest.mark.parametrize("command", ["chat", "ask"])
def test_a_model_that_never_answered_is_exit_7_naming_the_endpoint(
    client: Path, nowhere: str, command: str
) -> None:
    args = ["chat"] if command == "chat" else ["ask", "hello"]
    proc = run(
        "-C", str(client), *args, stdin="hello\n", ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=nowhere
    )
    assert proc.returncode == 7, proc.stderr
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("gitmem: error: no answer from the model API")
    assert nowhere in last and "ANTHROPIC_BASE_URL" in last
    if command == "chat":  # the chat's turn is kept, for `--resume` to answer
        assert "`gitmem chat --resume " in last
    else:  # a failed ask keeps nothing (tests/test_ask_failed.py)
        assert "nothing was kept: run the same `gitmem ask MESSAGE` again" in last


def test_a_piped_chat_answered_once_is_exit_0(client: Path) -> None:
    with FakeAnthropicServer(QueueModel(["Hello."])) as api:
        proc = run(
            "-C", str(client), "chat", stdin="hi\n", ANTHROPIC_API_KEY="k",
            ANTHROPIC_BASE_URL=api.base_url,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Hello." in proc.stdout


def test_a_session_with_no_memory_edits_never_waits_for_review(client: Path, nowhere: str) -> None:
    _review_policy(client)
    run("-C", str(client), "chat", stdin="hi\n", ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=nowhere)
    with FakeAnthropicServer(QueueModel(["Nothing in memory about that."])) as api:
        asked = run(
            "-C", str(client), "ask", "what is the budget?", ANTHROPIC_API_KEY="k",
            ANTHROPIC_BASE_URL=api.base_url,
        )  # fmt: skip
    assert asked.returncode == 0, asked.stderr
    assert "waits" not in asked.stderr and "review" not in asked.stderr
    status = json.loads(run("-C", str(client), "status", "--json").stdout)
    assert status["pending"] == []


def test_a_sync_that_cannot_reach_its_remote_says_why_and_what_to_do(client: Path) -> None:
    git(client, "remote", "add", "broken", "/nonexistent/x.git")
    proc = run("-C", str(client), "sync", "broken", "--json")
    assert proc.returncode == 5
    error = json.loads(proc.stdout)["error"]
    assert error["message"] == (
        "cannot fetch from broken (/nonexistent/x.git): "
        "'/nonexistent/x.git' does not appear to be a git repository"
    )
    assert "`git remote get-url broken`" in error["hint"]
    assert proc.stderr.splitlines() == [f"gitmem: error: {error['message']}"]


def _write(client: Path, card: str) -> None:
    res = gm(
        "-C", str(client), "write", card, "--old", "", "--new", "## Budget\n\n30k\n",
        "--section", "budget", "--keywords", "budget", "--summary", "budget 30k",
    )  # fmt: skip
    assert res.code == 0, res.err


def test_a_card_that_is_not_there_names_the_ones_that_are(client: Path) -> None:
    _write(client, "acme-website")
    _write(client, "globex")
    for args in (["show", "nope"], ["log", "nope"]):
        proc = run("-C", str(client), *args)
        assert proc.returncode == 3, args
        assert proc.stderr == "gitmem: error: no card 'nope' on main; cards: acme-website, globex\n"
    shown = run("-C", str(client), "show", "acme-website", "nope")
    assert (shown.returncode, shown.stderr) == (
        3,
        "gitmem: error: no section 'nope' in acme-website (sections: budget)\n",
    )


def test_a_ref_at_a_commit_that_is_not_there_names_the_commit(client: Path) -> None:
    _write(client, "acme-website")
    for missing in ("deadbeef0000", "a" * 40):  # a whole id too: not a damaged object
        proc = run("-C", str(client), "show", f"acme-website/budget@{missing}")
        assert (proc.returncode, proc.stderr) == (
            3,
            f"gitmem: error: no commit '{missing}' in this repo; `gitmem log` lists the edits\n",
        )
    head = git(client, "rev-parse", "--short=12", "HEAD").strip()
    there = run("-C", str(client), "show", f"globex/budget@{head}")
    assert there.returncode == 3 and f"no card globex at {head}" in there.stderr


def test_log_of_a_card_removed_since_still_shows_its_history(client: Path) -> None:
    _write(client, "globex")
    gm("-C", str(client), "revert", "main")
    proc = run("-C", str(client), "log", "globex")
    assert proc.returncode == 0, proc.stderr
    assert "globex § budget" in proc.stdout


def test_revert_of_nothing_names_what_it_takes_and_where_to_find_it(client: Path) -> None:
    proc = run("-C", str(client), "revert", "nonsense")
    assert proc.returncode == 3
    assert proc.stderr == (
        "gitmem: error: no commit or session 'nonsense'; `gitmem log` lists the commits on "
        "main and the sessions that made them\n"
    )


def test_outside_a_repo_and_an_unknown_client_say_what_to_do(tmp_path: Path) -> None:
    home = tmp_path / "home"
    init_repo(home / "acme")
    init_repo(home / "globex")
    (tmp_path / "plain").mkdir()
    outside = subprocess.run(
        [GITMEM, "status"], cwd=tmp_path / "plain", capture_output=True, text=True, check=False
    )
    assert outside.returncode == 3
    assert "`gitmem init PATH`" in outside.stderr and "`gitmem clients`" in outside.stderr
    nobody = run("--client", "nobody", "status", GITMEM_HOME=str(home))
    assert (nobody.returncode, nobody.stderr) == (
        3,
        f"gitmem: error: no client 'nobody' in {home}; clients: acme, globex\n",
    )


def test_a_file_where_gitmem_keeps_its_state_is_named_by_every_command(client: Path) -> None:
    _write(client, "acme-website")
    own = client / ".git" / "gitmem"
    shutil.rmtree(own)
    own.write_text("not a folder\n")
    for args in (["log"], ["index"], ["status"], ["search", "budget"], ["show", "acme-website"]):
        proc = run("-C", str(client), *args)
        assert proc.returncode == 6, (args, proc.stderr)
        assert proc.stderr == (
            f"gitmem: error: {own} is not a folder: gitmem keeps its own state there; "
            "move it away and run the command again\n"
        )
    assert own.read_text() == "not a folder\n"


def test_ask_with_an_empty_message_is_refused_and_starts_no_session(client: Path) -> None:
    for message in ("", "   "):
        proc = run("-C", str(client), "ask", "--simulated", message)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.splitlines()[-1] == (
            "gitmem: error: the message is empty; give the agent something to answer"
        )
    assert git(client, "branch", "--list", "gitmem/session/*") == ""
    assert not list((client / "sessions").glob("*.jsonl"))
