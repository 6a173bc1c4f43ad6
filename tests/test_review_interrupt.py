"""`gitmem review --accept` killed (SIGKILL) just after main moved, before the decision
was recorded: the session must not be landed twice nor rejected as if nothing landed,
and `gitmem recover` records what happened."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from helpers import git

GITMEM = str(Path(sys.executable).with_name("gitmem"))
# Kills the accepting gitmem once git has moved main (its state "committed"), once.
HOOK = """#!/bin/sh
[ "$1" = committed ] || exit 0
grep -q ' refs/heads/main$' || exit 0
[ -e {mark} ] && exit 0
touch {mark}
i=0
while [ ! -s {pid} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
kill -KILL "$(cat {pid})"
"""


def _gitmem(client: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    return subprocess.run(
        [GITMEM, "-C", str(client), *args],
        input=stdin, capture_output=True, text=True, check=False, timeout=120, env=env,
    )  # fmt: skip


def _pending_session(client: Path, said: str = "remember acme Budget: 40k agreed\n") -> str:
    toml = client / "gitmem.toml"
    toml.write_text(toml.read_text().replace('review = "auto"', 'review = "review"'))
    git(client, "commit", "-qam", "review every session")
    chat = _gitmem(client, "chat", "--simulated", stdin=said)
    assert chat.returncode == 0, chat.stderr
    listed = json.loads(_gitmem(client, "review", "--json").stdout)
    (session,) = [s["session"] for s in listed]
    return str(session)


def _accept_killed_after_main_moved(client: Path, tmp_path: Path, session: str) -> None:
    mark, pid = tmp_path / "fired", tmp_path / "pid"
    hook = client / ".git" / "hooks" / "reference-transaction"
    hook.write_text(HOOK.format(mark=mark, pid=pid))
    hook.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    proc = subprocess.Popen(
        [GITMEM, "-C", str(client), "review", session, "--accept"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    pid.write_text(str(proc.pid))
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.returncode == -9, proc.communicate()  # killed by the hook, not finished
    hook.unlink()


def _killed_accept_recovered_once(client: Path, tmp_path: Path, session: str) -> None:
    """An accept killed after main moved: the edit is on main once, deciding again is
    refused (it would land it twice, or reject what is on main already), and `gitmem
    recover` records the acceptance without landing anything more."""
    _accept_killed_after_main_moved(client, tmp_path, session)
    landed = git(client, "log", "--format=%s", "main").splitlines()
    assert landed.count("acme: 40k agreed") == 1, landed
    for decide in ("--accept", "--reject"):
        again = _gitmem(client, "review", session, decide)
        assert again.returncode == 4, again.stdout
        assert again.stderr.splitlines()[-1] == (  # (after: the working tree followed main)
            f"gitmem: error: a decision on session {session} was interrupted; "
            "`gitmem recover` finishes it"
        )
    done = _gitmem(client, "recover")
    assert done.returncode == 0, done.stderr
    assert f"recorded the acceptance of session {session}" in done.stdout
    assert git(client, "log", "--format=%s", "main").splitlines() == landed
    assert json.loads(_gitmem(client, "review", "--json").stdout) == []


def test_an_accept_killed_after_main_moved_is_recorded_by_recover(
    client: Path, tmp_path: Path
) -> None:
    session = _pending_session(client)
    _killed_accept_recovered_once(client, tmp_path, session)
    shown = _gitmem(client, "review", session, "--accept")
    assert shown.returncode == 2 and "was accepted already" in shown.stderr
    assert _gitmem(client, "recover").stdout.strip() == "nothing to finish"


def test_an_accept_refused_by_a_conflict_leaves_nothing_to_recover(client: Path) -> None:
    def write(old: str, new: str) -> None:
        w = (
            "--section",
            "budget",
            "--keywords",
            "budget",
            "--summary",
            new.strip().split("\n")[-1],
        )
        assert _gitmem(client, "write", "acme", "--old", old, "--new", new, *w).returncode == 0

    write("", "# Acme\n\n## Budget\nBudget: 30k\n")
    session = _pending_session(client, "update acme budget: Budget: 30k => Budget: 40k\n")
    write("Budget: 30k", "Budget: 35k")  # the same line on main, meanwhile
    before = git(client, "rev-parse", "main")
    refused = _gitmem(client, "review", session, "--accept")
    assert refused.returncode == 4 and "changed on both sides" in refused.stderr, refused.stderr
    # the session's usage commit on main is no edit of it: nothing landed, nothing to finish
    assert _gitmem(client, "recover").stdout.strip() == "nothing to finish"
    assert git(client, "rev-parse", "main") == before
    assert [s["session"] for s in json.loads(_gitmem(client, "review", "--json").stdout)] == [
        session
    ]
    assert _gitmem(client, "review", session, "--reject").returncode == 0


def test_an_accept_of_a_synced_session_killed_after_main_moved_is_finished_by_recover(
    client: Path, tmp_path: Path
) -> None:
    """A session the remote has is claimed there before it lands: killed after that,
    deciding again would land it twice; `gitmem recover` records it, as for a local one."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(client, "remote", "add", "origin", str(remote))
    session = _pending_session(client)
    assert _gitmem(client, "sync").returncode == 0  # the session is on the remote now
    _killed_accept_recovered_once(client, tmp_path, session)
    assert _gitmem(client, "sync").returncode == 0
    assert git(client, "log", "--format=%s", "main").count("acme: 40k agreed") == 1


def test_an_accept_of_a_synced_session_refused_by_a_conflict_claims_nothing(
    client: Path, tmp_path: Path
) -> None:
    """Deciding a session the remote has is published there first: one that cannot land
    on main is refused before that, so the remote still has it pending and sync goes on."""
    write = ("--section", "budget", "--keywords", "budget", "--summary", "budget")
    new = "# Acme\n\n## Budget\nBudget: 30k\n"
    assert _gitmem(client, "write", "acme", "--old", "", "--new", new, *write).returncode == 0
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(client, "remote", "add", "origin", str(remote))
    session = _pending_session(client, "update acme budget: Budget: 30k => Budget: 40k\n")
    assert _gitmem(client, "sync").returncode == 0  # the session is on the remote now
    old = ("--old", "Budget: 30k", "--new", "Budget: 35k")
    assert _gitmem(client, "write", "acme", *old, *write).returncode == 0  # the same line
    refused = _gitmem(client, "review", session, "--accept")
    assert refused.returncode == 4 and "changed on both sides" in refused.stderr, refused.stderr
    assert _gitmem(client, "recover").stdout.strip() == "nothing to finish"
    synced = _gitmem(client, "sync")
    assert synced.returncode == 0, synced.stderr
    decided = ("refs/gitmem/archive", "refs/gitmem/partial", "refs/gitmem/rejected")
    assert git(remote, "for-each-ref", "--format=%(refname)", *decided) == ""  # no claim
    listed = json.loads(_gitmem(client, "review", "--json").stdout)
    assert [s["session"] for s in listed] == [session]
    assert _gitmem(client, "review", session, "--reject").returncode == 0
