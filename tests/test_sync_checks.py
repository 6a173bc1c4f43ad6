"""What `gitmem sync` refuses before anything changes here, and what it leaves behind
when it does: a bad command line, uncommitted edits, a secret in what would leave, a
symlink where memory lives, a stopped sync's damaged state; and a fetch that is older
than another sync's push is fetched again, not called a rewritten remote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_redact import AWS, person_commits_secrets
from test_sync import diverged, sync

from gitmem.errors import EXIT_CONFLICT, EXIT_NOT_FOUND
from gitmem.memory.repo import MemoryRepo
from gitmem.ops import remote as remote_mod
from gitmem.setup.init import init_repo
from gitmem.sync import exchange

from helpers import git, gm, snapshot, write_sha

FETCHED = "refs/gitmem/sync/origin/fetched"


def _gitmem(*args: str) -> subprocess.CompletedProcess[str]:
    """`gitmem ARGS` in a process of its own, through the entry point."""
    return subprocess.run(
        [sys.executable, "-c", "from gitmem.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_plain_sync_merges_and_leaves_no_private_ref(tmp_path: Path) -> None:
    laptop, desktop = diverged(tmp_path)
    proc = _gitmem("-C", str(desktop), "sync", "--json")
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert (res["status"], res["received"], res["merged"]) == ("synced", 1, True)
    theirs = git(laptop, "rev-parse", "main").strip()
    git(desktop, "merge-base", "--is-ancestor", theirs, "main")  # fails unless it is
    assert git(desktop, "for-each-ref", FETCHED) == ""  # the private ref is gone
    assert "Ship v2 in May" in (desktop / "cards" / "beta.md").read_text()


def test_a_bad_command_line_fetches_nothing_and_changes_nothing(tmp_path: Path) -> None:
    _laptop, desktop = diverged(tmp_path)
    before = snapshot(desktop)
    for args in (("sync", "--bogus"), ("sync", "a", "b"), ("sync", "--json", "-x")):
        assert gm("-C", str(desktop), *args).code == 2, args
    assert gm("-C", str(desktop), "sync", "nowhere").code == EXIT_NOT_FOUND
    assert gm("-C", str(desktop), "sync", "--continue").code != 0  # no sync waits
    assert snapshot(desktop) == before


def test_a_sync_refused_after_its_fetch_leaves_no_ref(tmp_path: Path) -> None:
    """Refused after fetching (uncommitted edits to a card the remote changed): the
    private ref goes, main and the card stay as they were."""
    _laptop, desktop = diverged(tmp_path)
    card = desktop / "cards" / "beta.md"
    card.write_text(card.read_text() + "my own note\n")
    main = git(desktop, "rev-parse", "main")
    res = gm("-C", str(desktop), "sync")
    assert res.code != 0 and "uncommitted" in res.err
    assert git(desktop, "rev-parse", "main") == main
    assert card.read_text().endswith("my own note\n")
    assert git(desktop, "for-each-ref", FETCHED) == ""


# -- what leaves is scanned for secrets ------------------------------------------------------


def _secret_commit(path: Path) -> str:
    card = path / "cards" / "beta.md"
    card.write_text(card.read_text() + f"- key {AWS}\n")
    git(path, "commit", "-qam", "beta: a key", "--no-verify")
    return git(path, "rev-parse", "main").strip()


def test_a_secret_in_what_would_leave_is_refused(tmp_path: Path) -> None:
    _laptop, desktop = diverged(tmp_path)
    tip = _secret_commit(desktop)
    res = gm("-C", str(desktop), "sync")
    assert res.code == 4 and "carry a secret" in res.err and tip[:7] in res.err, res.err
    assert git(desktop, "for-each-ref", FETCHED) == ""


def test_a_secret_the_remote_has_already_is_not_a_reason_to_refuse(tmp_path: Path) -> None:
    """A commit the remote got since the last sync (from another machine, past gitmem's
    checks) is in main here too, but it does not leave from here."""
    laptop, desktop = diverged(tmp_path)
    assert sync(desktop)[0] == 0 and sync(laptop)[0] == 0  # both synced: the last sync known
    _secret_commit(laptop)
    git(laptop, "push", "-q", "origin", "main")
    git(
        desktop,
        "-c",
        "core.hooksPath=/dev/null",
        "pull",
        "-q",
        "--no-rebase",
        "--no-edit",
        "origin",
        "main",
    )  # here too, by plain git: main holds it, the last sync does not
    write_sha(
        desktop, "acme-website", "Call Bob today", "Call Bob now", "next-steps", "Call Bob now"
    )
    res = gm("-C", str(desktop), "sync")
    assert res.code == 0, res.err


def test_a_secret_committed_during_the_fetch_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _laptop, desktop = diverged(tmp_path)
    real = remote_mod.fetch_main
    made: list[str] = []

    def fetch_then_commit(*args: Any, **kw: Any) -> Any:
        got = real(*args, **kw)
        made.append(_secret_commit(desktop))  # main moves while git fetches
        return got

    monkeypatch.setattr(remote_mod, "fetch_main", fetch_then_commit)
    res = gm("-C", str(desktop), "sync")
    assert res.code == 4 and made and made[0][:7] in res.err, res.err


def test_a_remote_bringing_a_symlink_is_refused_first_when_local_commits_carry_a_secret(
    tmp_path: Path,
) -> None:
    """The incoming check (symlinks, submodules) runs before the outgoing scan (secrets):
    with both to refuse, the incoming refusal is the one reported."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    a = tmp_path / "a"
    init_repo(a)
    git(a, "remote", "add", "origin", str(bare))
    made = gm(
        "-C",
        str(a),
        "write",
        "acme",
        "--old",
        "",
        "--new",
        "## Budget\n- 30k\n",
        "--section",
        "budget",
        "--keywords",
        "budget",
        "--summary",
        "budget",
    )
    assert made.code == 0 and gm("-C", str(a), "sync").code == 0
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(bare), str(b))
    outside = tmp_path / "outside"
    outside.mkdir()
    git(b, "rm", "-rq", "cards")
    os.symlink(outside, b / "cards")
    git(b, "add", "cards")
    git(b, "commit", "-qm", "cards is a link", "--no-verify")
    git(b, "push", "-q", "origin", "main")
    person_commits_secrets(a)
    before = {k: v for k, v in snapshot(a).items() if not k.startswith(".git/objects/")}
    res = gm("-C", str(a), "sync")
    assert res.code == 4, res.err
    assert "brings cards as a symlink" in res.err and "secret" not in res.err
    assert {k: v for k, v in snapshot(a).items() if not k.startswith(".git/objects/")} == before
    git(a, "remote", "set-url", "origin", str(tmp_path / "elsewhere.git"))
    git(tmp_path, "clone", "-q", "--bare", str(bare), str(tmp_path / "elsewhere.git"))
    git(tmp_path / "elsewhere.git", "update-ref", "refs/heads/main", "main~1")
    res = gm("-C", str(a), "sync")  # the same commits against a remote without the link
    assert res.code == EXIT_CONFLICT and "commits carry a secret" in res.err, res.err


@pytest.mark.parametrize("damage", ["json", "folder", "bytes", "list"])
def test_a_damaged_stopped_sync_state_is_one_line_and_nothing_changes(
    tmp_path: Path, damage: str
) -> None:
    """The state of a stopped sync that cannot be read is a one-line refusal (exit 4)
    naming the file, never a traceback or an exit 70, and nothing is fetched."""
    _laptop, desktop = diverged(tmp_path)
    state = desktop / ".git" / "gitmem" / "sync-state.json"
    if damage == "folder":
        state.mkdir()
    else:
        state.write_bytes({"json": b"{broken", "bytes": b"\xff\xfe\x00", "list": b"[1, 2]"}[damage])
    before = snapshot(desktop)
    for args in (("sync",), ("sync", "--json"), ("sync", "--abort"), ("sync", "--continue")):
        res = gm("-C", str(desktop), *args)
        assert res.code == 4 and "sync-state.json cannot be read" in res.err, res.err
        assert len(res.err.strip().splitlines()) == 1
        if "--json" in args:
            assert json.loads(res.out)["error"]["exit_code"] == 4
    assert snapshot(desktop) == before


def test_a_fetch_older_than_another_syncs_push_is_fetched_again_not_called_a_rewrite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two syncs of one clone at once: the second's fetch predates the first's push and
    record, so what it fetched lacks what was synced last. That is no rewritten remote."""
    laptop, desktop = diverged(tmp_path)
    real = remote_mod.fetch_main
    fetches: list[object] = []

    def fetch_then_another_sync(*args: Any, **kw: Any) -> Any:
        got = real(*args, **kw)
        fetches.append(got)
        if len(fetches) == 1:  # another sync of this clone pushes and records first
            other = _gitmem("-C", str(desktop), "sync")
            assert other.returncode == 0 and "merged" in other.stdout, other.stderr
            write_sha(
                desktop,
                "acme-website",
                "Call Bob today",
                "Call Bob now",
                "next-steps",
                "Call Bob now",
            )
        return got

    monkeypatch.setattr(remote_mod, "fetch_main", fetch_then_another_sync)
    with MemoryRepo(desktop) as repo:
        done = exchange.sync_repo(repo, "origin")
    assert done.status == "synced" and done.rounds == 2 and len(fetches) == 2
    assert (
        git(laptop, "ls-remote", "origin", "main").split()[0]
        == git(desktop, "rev-parse", "main").strip()
    )
