"""A plain `gitmem sync` begins its fetch before click is loaded (gitmem/cli/early.py): the
command line is read without click only to recognise a plain sync, the fetch it starts is
the one the sync then takes, and any other command line starts nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sync import diverged, sync, write

from gitmem.cli import early
from gitmem.cli.app import Ctx, all_commands, cli
from gitmem.errors import EXIT_NOT_FOUND
from gitmem.memory.repo import MemoryRepo

from helpers import git, gm, snapshot

FETCHED = "refs/gitmem/sync/origin/fetched"


def test_the_plain_sync_command_lines() -> None:
    P = early.PlainSync
    assert early.plain_sync(["sync"]) == P(None, None, "origin", False)
    assert early.plain_sync(["-C", "/m", "sync"]) == P("/m", None, "origin", False)
    assert early.plain_sync(["sync", "backup", "--json"]) == P(None, None, "backup", True)
    assert early.plain_sync(["sync", "-C", "/m", "--json", "b"]) == P("/m", None, "b", True)
    assert early.plain_sync(["--client", "acme", "sync"]) == P(None, "acme", "origin", False)
    assert early.plain_sync(["--client=acme", "sync"]) == P(None, "acme", "origin", False)
    for doubtful in (
        [],
        ["index"],
        ["sync", "--continue"],
        ["sync", "--abort"],
        ["sync", "--help"],
        ["sync", "-h"],
        ["sync", "--accept-redaction"],
        ["sync", "a", "b"],
        ["-C"],
        ["sync", "-C"],
        ["-C", "", "sync"],
        ["-C", "a", "-C", "b", "sync"],
        ["-Ca", "sync"],
        ["-C", "a", "--client", "b", "sync"],
        ["sync", "--"],
        ["--version", "sync"],
        ["sync", "--json=1"],
        ["-C", "-x", "sync"],
        ["log", "sync"],
        ["sync", ""],
    ):
        assert early.plain_sync(doubtful) is None, doubtful


def _as_click_reads(args: list[str]) -> tuple[str, dict[str, Any], Ctx] | None:
    """(command, its parameters, the group's Ctx) as click parses ``args``; None when
    click refuses them or stops before a command (--help, --version)."""
    all_commands()  # every command registered
    seen: list[tuple[str, dict[str, Any]]] = []
    state = Ctx()
    sync_cmd = cli.commands["sync"]
    real = sync_cmd.callback

    def record(**params: Any) -> None:
        seen.append(("sync", params))

    sync_cmd.callback = record
    try:
        cli.main(args=list(args), prog_name="gitmem", obj=state, standalone_mode=False)
    except (click.exceptions.Exit, click.ClickException, SystemExit):
        return None
    finally:
        sync_cmd.callback = real
    return (*seen[0], state) if seen else None


WORDS = st.sampled_from(
    [
        "sync",
        "index",
        "-C",
        "--client",
        "--client=acme",
        "--json",
        "origin",
        "backup",
        "/m",
        "acme",
        "--continue",
        "--abort",
        "--accept-redaction",
        "--help",
        "-h",
        "--",
        "",
        "-Cm",
        "--version",
        "-x",
    ]
)


# Command lines shaped like a sync's (options, `sync`, then its own words), so that most
# are near the edge of what the reading accepts; and any words at all.
_OPTION = st.sampled_from(
    [
        ["-C", "/m"],
        ["--client", "acme"],
        ["--client=acme"],
        ["-C"],
        ["-C", ""],
        ["-Cm"],
        ["--help"],
        ["--version"],
    ]
)
_AFTER = st.sampled_from(
    [
        ["--json"],
        ["origin"],
        ["backup"],
        ["-C", "/m"],
        ["--client", "acme"],
        ["--continue"],
        ["--abort"],
        ["--accept-redaction"],
        ["-h"],
        ["--"],
        [""],
        ["-x"],
        ["sync"],
        ["--json=1"],
        ["-C"],
    ]
)
SHAPED = st.builds(
    lambda pre, word, post: [w for ws in pre for w in ws] + [word] + [w for ws in post for w in ws],
    st.lists(_OPTION, max_size=2),
    st.sampled_from(["sync", "sync", "sync", "index"]),
    st.lists(_AFTER, max_size=3),
)


@settings(max_examples=1500, deadline=None)
@given(st.one_of(SHAPED, st.lists(WORDS, max_size=7)))
def test_a_command_line_read_as_a_plain_sync_is_one_click_reads_the_same(args: list[str]) -> None:
    wanted = early.plain_sync(args)
    if wanted is None:
        return  # nothing is started: click alone decides what the command line means
    got = _as_click_reads(args)
    assert got is not None, args
    name, params, state = got
    assert name == "sync"
    assert (params["remote"], params["cont"], params["abort"], params["accept_redaction"]) == (
        wanted.remote,
        False,
        False,
        False,
    )
    assert (state.path, state.client, state.json) == (wanted.path, wanted.client, wanted.as_json)


def test_the_plain_forms_are_read_by_click_as_this_reading_says() -> None:
    """The property above holds for these in particular (so it is never vacuous)."""
    for args in (
        ["sync"],
        ["-C", "/m", "sync", "--json"],
        ["sync", "backup", "-C", "/m"],
        ["--client=acme", "sync", "origin"],
    ):
        wanted = early.plain_sync(args)
        got = _as_click_reads(args)
        assert wanted is not None and got is not None
        assert (got[1]["remote"], got[2].path, got[2].client, got[2].json) == (
            wanted.remote,
            wanted.path,
            wanted.client,
            wanted.as_json,
        )


# A process running `gitmem ARGS` through the entry point; it reports, on stderr's last
# line, which of LATER were loaded when each `git fetch` began.
_SPY = """
import json, subprocess, sys
LATER = %r
seen = []
real = subprocess.Popen.__init__
def spy(self, args, *a, **k):
    if list(args[:2]) == ["git", "fetch"]:
        seen.append(sorted(m for m in LATER if m in sys.modules))
    real(self, args, *a, **k)
subprocess.Popen.__init__ = spy
from gitmem.cli import main
code = 0
try:
    main(sys.argv[1:])
except SystemExit as done:
    code = done.code or 0
print(json.dumps([code, seen]), file=sys.stderr)
"""


# What the command loads only once its fetch runs: the command line (click), the sync,
# the merge and index code, the object store, and gitmem.toml's parser.
LATER = (
    "click",
    "gitmem.cli.app",
    "gitmem.sync.exchange",
    "gitmem.memory.merge",
    "gitmem.index.build",
    "gitmem.git.objects",
    "tomllib",
)


def _run(*args: str) -> tuple[int, list[list[str]], str]:
    proc = subprocess.run(
        [sys.executable, "-c", _SPY % (LATER,), *args], capture_output=True, text=True, check=False
    )
    code, seen = json.loads(proc.stderr.splitlines()[-1])
    return int(code), list(seen), proc.stdout


def test_a_plain_sync_fetches_before_click_is_loaded(tmp_path: Path) -> None:
    laptop, desktop = diverged(tmp_path)
    code, seen, out = _run("-C", str(desktop), "sync", "--json")
    assert code == 0
    assert seen == [[]]  # one fetch, begun before any of those was imported
    res = json.loads(out)
    assert (res["status"], res["received"], res["merged"]) == ("synced", 1, True)
    assert (
        subprocess.run(
            [
                "git",
                "merge-base",
                "--is-ancestor",
                git(laptop, "rev-parse", "main").strip(),
                "main",
            ],
            cwd=desktop,
            check=False,
        ).returncode
        == 0
    )
    assert git(desktop, "for-each-ref", FETCHED) == ""  # the private ref is gone
    assert "Ship v2 in May" in (desktop / "cards" / "beta.md").read_text()


def test_other_sync_command_lines_fetch_only_once_the_command_runs(tmp_path: Path) -> None:
    _laptop, desktop = diverged(tmp_path)
    code, seen, _ = _run("-C", str(desktop), "sync", "origin", "--accept-redaction")
    assert code != 0  # nothing was redacted: refused, as before
    assert len(seen) == 1 and "click" in seen[0]
    code, seen, _ = _run("-C", str(desktop), "sync", "--continue")
    assert code != 0 and seen == []  # no sync waits: no fetch at all


def test_a_bad_command_line_fetches_nothing_and_changes_nothing(tmp_path: Path) -> None:
    _laptop, desktop = diverged(tmp_path)
    before = snapshot(desktop)
    for args in (("sync", "--bogus"), ("sync", "a", "b"), ("sync", "--json", "-x")):
        code, seen, _ = _run("-C", str(desktop), *args)
        assert code == 2 and seen == [], args
    code, seen, _ = _run("-C", str(desktop), "sync", "nowhere")
    assert code == EXIT_NOT_FOUND and seen == []  # no such remote: refused before fetching
    assert snapshot(desktop) == before


def test_a_started_fetch_nobody_takes_is_waited_for_and_its_ref_deleted(tmp_path: Path) -> None:
    _laptop, desktop = diverged(tmp_path)
    early.start(["-C", str(desktop), "sync"])
    started = early._started
    assert started is not None
    proc = started.fetch.proc
    early.discard()
    assert proc.returncode == 0 and early._started is None
    assert git(desktop, "for-each-ref", FETCHED) == ""


def test_a_fetch_for_another_remote_or_repo_is_not_taken(tmp_path: Path) -> None:
    _laptop, desktop = diverged(tmp_path)
    git(desktop, "remote", "add", "backup", git(desktop, "remote", "get-url", "origin").strip())
    early.start(["-C", str(desktop), "sync"])
    with MemoryRepo(desktop) as repo:
        assert early.take(repo, "backup") is None
    assert early._started is None
    assert git(desktop, "for-each-ref", FETCHED) == ""
    early.start(["-C", str(desktop), "sync", "backup"])
    with MemoryRepo(desktop) as repo:
        got = early.take(repo, "backup")
        assert got is not None and got.repo is repo
        assert got.result() is not None  # backup's main, fetched
        got.abandon()


def test_a_sync_on_a_terminal_leaves_the_fetch_to_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where a person watches, the sync draws its fetch's progress: nothing starts early."""
    _laptop, desktop = diverged(tmp_path)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    early.start(["-C", str(desktop), "sync"])
    assert early._started is None
    early.start(["-C", str(desktop), "sync", "--json"])  # JSON draws no progress
    assert early._started is not None
    early.discard()


def test_an_early_sync_refused_after_its_fetch_leaves_no_ref(tmp_path: Path) -> None:
    """The sync takes the early fetch and is refused (uncommitted edits to a card the
    remote changed): the private ref goes, main and the card stay as they were."""
    _laptop, desktop = diverged(tmp_path)
    card = desktop / "cards" / "beta.md"
    card.write_text(card.read_text() + "my own note\n")
    main = git(desktop, "rev-parse", "main")
    res = gm("-C", str(desktop), "sync")
    assert res.code != 0 and "uncommitted" in res.err
    assert git(desktop, "rev-parse", "main") == main
    assert card.read_text().endswith("my own note\n")
    assert git(desktop, "for-each-ref", FETCHED) == ""


# -- what leaves is scanned for secrets during the fetch --------------------------------------


def _spy_scans(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    from gitmem.memory import scan

    seen: list[tuple[str, ...]] = []
    real = scan.scan_log

    def scan_log(repo: Any, *revs: str) -> Any:
        seen.append(revs)
        return real(repo, *revs)

    monkeypatch.setattr(scan, "scan_log", scan_log)
    return seen


def _secret_commit(path: Path) -> str:
    from test_redact import AWS

    card = path / "cards" / "beta.md"
    card.write_text(card.read_text() + f"- key {AWS}\n")
    git(path, "commit", "-qam", "beta: a key", "--no-verify")
    return git(path, "rev-parse", "main").strip()


def test_what_leaves_is_scanned_while_git_fetches_and_not_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _laptop, desktop = diverged(tmp_path)
    seen = _spy_scans(monkeypatch)
    res = gm("-C", str(desktop), "sync")
    assert res.code == 0 and "merged" in res.out, res.err
    assert len(seen) == 1 and seen[0][1].startswith("^")  # one scan: the early one


def test_a_secret_in_what_would_leave_is_still_refused(tmp_path: Path) -> None:
    _laptop, desktop = diverged(tmp_path)
    tip = _secret_commit(desktop)
    res = gm("-C", str(desktop), "sync")
    assert res.code == 4 and "carry a secret" in res.err and tip[:7] in res.err, res.err
    assert git(desktop, "for-each-ref", FETCHED) == ""


def test_a_secret_the_remote_has_already_is_not_a_reason_to_refuse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The early scan reaches back to the remote as last seen: a commit the remote got
    since (from another machine) is scanned there, but it does not leave from here."""
    laptop, desktop = diverged(tmp_path)
    assert sync(desktop)[0] == 0 and sync(laptop)[0] == 0  # both synced: the last sync known
    _secret_commit(laptop)
    git(laptop, "push", "-q", "origin", "main")  # on the remote, past gitmem's checks
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
    write(desktop, "acme-website", "Call Bob today", "Call Bob now", "next-steps", "Call Bob now")
    seen = _spy_scans(monkeypatch)
    res = gm("-C", str(desktop), "sync")
    assert res.code == 0, res.err
    assert len(seen) == 2  # the early scan found it; the exact one, of what leaves, did not


def test_a_secret_committed_during_the_fetch_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gitmem.sync import exchange

    _laptop, desktop = diverged(tmp_path)
    real = exchange._scan_early
    made: list[str] = []

    def scan_then_commit(repo: Any, remote: str) -> Any:
        got = real(repo, remote)
        made.append(_secret_commit(desktop))  # main moves after the early scan
        return got

    monkeypatch.setattr(exchange, "_scan_early", scan_then_commit)
    res = gm("-C", str(desktop), "sync")
    assert res.code == 4 and made and made[0][:7] in res.err, res.err


@pytest.mark.parametrize("damage", ["json", "folder", "bytes", "list"])
def test_a_damaged_stopped_sync_state_is_one_line_and_nothing_changes(
    tmp_path: Path, damage: str
) -> None:
    """Before the fetch as in the command: the state of a stopped sync that cannot be read
    is a one-line refusal (exit 4) naming the file, never a traceback or an exit 70."""
    _laptop, desktop = diverged(tmp_path)
    state = desktop / ".git" / "gitmem" / "sync-state.json"
    if damage == "folder":
        state.mkdir()
    else:
        state.write_bytes({"json": b"{broken", "bytes": b"\xff\xfe\x00", "list": b"[1, 2]"}[damage])
    before = snapshot(desktop)
    for args in (("sync",), ("sync", "--json"), ("sync", "--abort"), ("sync", "--continue")):
        code, seen, out = _run("-C", str(desktop), *args)
        assert code == 4 and seen == [], (args, out)
        res = gm("-C", str(desktop), *args)
        assert res.code == 4 and "sync-state.json cannot be read" in res.err, res.err
        assert len(res.err.strip().splitlines()) == 1
        if "--json" in args:
            assert json.loads(res.out)["error"]["exit_code"] == 4
    assert snapshot(desktop) == before


def test_a_fetch_older_than_another_syncs_push_is_fetched_again_not_called_a_rewrite(
    tmp_path: Path,
) -> None:
    """Two syncs of one clone at once: the second's fetch predates the first's push and
    record, so what it fetched lacks what was synced last. That is no rewritten remote."""
    from gitmem import start_sync_fetch, sync_repo

    laptop, desktop = diverged(tmp_path)
    with MemoryRepo(desktop) as repo:
        started = start_sync_fetch(repo, "origin")  # a sync's fetch, done...
        assert started is not None
        started.proc.wait()
        res = gm("-C", str(desktop), "sync")  # ...another sync pushes and records first
        assert res.code == 0 and "merged" in res.out, res.err
        write(
            desktop, "acme-website", "Call Bob today", "Call Bob now", "next-steps", "Call Bob now"
        )
        done = sync_repo(repo, "origin", started=started)
    assert done.status == "synced" and done.rounds == 2
    assert (
        git(laptop, "ls-remote", "origin", "main").split()[0]
        == git(desktop, "rev-parse", "main").strip()
    )
