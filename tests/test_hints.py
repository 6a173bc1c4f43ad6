"""Every command gitmem suggests in a message works when run as printed.

Each test brings about the condition, takes the commands between backticks from
what gitmem printed (or the error's hint), runs them literally in the repo (only a
placeholder such as URL or NAME is filled in), and checks that they did what was
promised.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_session_revert import SID, run_session, setup_card
from test_sync import CARDS, is_ancestor, make_pair, sync

from gitmem import hooks
from gitmem.errors import InvalidInput, NotARepo, NotFound
from gitmem.fakeapi import FakeAnthropicServer, Fault, RuleModel
from gitmem.memory.repo import MemoryRepo
from gitmem.ops import remote as remote_mod
from gitmem.sync import exchange as sync_mod

from helpers import Result, git, gm, write_sha


def commands(text: str) -> list[str]:
    """The git and gitmem commands quoted in ``text`` (between backticks)."""
    found = [c for c in re.findall(r"`([^`]+)`", text) if c.split()[0] in ("git", "gitmem")]
    assert found, f"no command in {text!r}"
    return found


def run(cwd: Path, command: str, stdin: str = "", **fill: str) -> Result:
    """Run one suggested command as a person would type it in ``cwd``."""
    for placeholder, value in fill.items():
        command = command.replace(placeholder, value)
    argv = shlex.split(command)
    if argv[0] == "gitmem":
        return gm(*argv[1:], cwd=cwd, stdin=stdin)
    proc = subprocess.run(argv, cwd=cwd, input=stdin.encode(), capture_output=True, check=False)
    return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def only(text: str, prefix: str) -> str:
    (cmd,) = [c for c in commands(text) if c.startswith(prefix)]
    return cmd


# -- sync ------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["amended", "deleted"])
def test_the_rewritten_remote_hint_puts_our_history_back(tmp_path: Path, how: str) -> None:
    bare, laptop, desktop = make_pair(tmp_path)
    assert sync(desktop)[0] == 0
    mine = write_sha(desktop, "beta", "Ship v2", "Ship v3", "goals", "Ship v3")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    if how == "amended":
        git(other, "commit", "-q", "--amend", "-m", "rewritten history")
        git(other, "push", "-q", "--force", "origin", "main")
    else:
        git(bare, "config", "receive.denyDeleteCurrent", "ignore")
        git(other, "push", "-q", "origin", "--delete", "main")
    refused = gm("sync", cwd=desktop)
    assert refused.code == 4 and "was rewritten" in refused.err
    done = run(desktop, only(refused.err, "git push"))
    assert done.code == 0, done.err
    assert git(bare, "rev-parse", "main") == git(desktop, "rev-parse", "main")
    assert is_ancestor(bare, mine, "main")
    code, _, err = sync(desktop)
    assert code == 0, err
    code, _, err = sync(laptop)
    assert code == 0, err
    assert "Ship v3" in (laptop / "cards/beta.md").read_text()


def conflicted(tmp_path: Path) -> tuple[Path, Path, Result]:
    bare, laptop, desktop = make_pair(tmp_path)
    write_sha(laptop, "acme-website", "30k", "40k", "budget", "40k")
    assert sync(laptop)[0] == 0
    write_sha(desktop, "acme-website", "30k", "50k", "budget", "50k")
    stopped = gm("sync", cwd=desktop)
    assert stopped.code == 4, stopped.err
    return bare, desktop, stopped


def test_the_conflict_report_commands_continue_and_abort(tmp_path: Path) -> None:
    bare, desktop, stopped = conflicted(tmp_path)
    before = git(desktop, "rev-parse", "main")
    # a second sync is refused and names the same two ways out
    again = gm("sync", cwd=desktop)
    assert again.code == 4
    assert {only(again.err, "gitmem sync --abort"), only(again.err, "gitmem sync --continue")}
    # --continue before settling: the message names the command to run once settled
    early = run(desktop, only(stopped.out, "gitmem sync --continue"))
    assert early.code == 2 and "conflict markers" in early.err
    (desktop / "cards/acme-website.md").write_text(CARDS["acme-website"].replace("30k", "45k"))
    done = run(desktop, only(early.err, "gitmem sync --continue"))
    assert done.code == 0, done.err
    assert git(bare, "rev-parse", "main") == git(desktop, "rev-parse", "main") != before

    (tmp_path / "again").mkdir()
    _, other, stopped = conflicted(tmp_path / "again")
    ours = git(other, "rev-parse", "main")
    done = run(other, only(stopped.out, "gitmem sync --abort"))
    assert done.code == 0, done.err
    assert git(other, "rev-parse", "main") == ours and git(other, "status", "--porcelain") == ""


def test_someone_always_pushing_first_names_a_sync_that_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, laptop, desktop = make_pair(tmp_path)
    write_sha(desktop, "beta", "Ship v2", "Ship v3", "goals", "Ship v3")
    real_push = remote_mod.push_updates
    edits = iter(range(100))

    def racing(
        repo: MemoryRepo, name: str, updates: Any, where: str | None = None
    ) -> remote_mod.Pushed:
        n = next(edits)
        text = (laptop / "cards/acme-website.md").read_text()
        (laptop / "cards/acme-website.md").write_text(text + f"note {n}\n")
        git(laptop, "commit", "-qam", f"hand edit {n}")
        git(laptop, "push", "-q", "origin", "main")
        return real_push(repo, name, updates, where)

    monkeypatch.setattr(remote_mod, "push_updates", racing)
    monkeypatch.setattr(sync_mod, "_sleep", lambda _s: None)  # the pauses between rounds
    busy = gm("sync", cwd=desktop)
    assert busy.code == 4 and "kept moving" in busy.err
    monkeypatch.setattr(remote_mod, "push_updates", real_push)
    done = run(desktop, only(busy.err, "gitmem sync"))
    assert done.code == 0, done.err
    assert git(bare, "rev-parse", "main") == git(desktop, "rev-parse", "main")


def test_no_remote_hint_adds_one(tmp_path: Path, client: Path) -> None:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    missing = gm("sync", cwd=client)
    assert missing.code == 3
    done = run(client, only(missing.err, "git remote add"), URL=str(bare))
    assert done.code == 0, done.err
    assert gm("sync", cwd=client).code == 0
    assert git(bare, "rev-parse", "main") == git(client, "rev-parse", "main")


# -- repos, clients, hooks ------------------------------------------------------------
def test_not_a_repo_hint_creates_one(tmp_path: Path) -> None:
    with pytest.raises(NotARepo) as err:
        MemoryRepo.discover(tmp_path)
    hint = err.value.hint or ""
    new = tmp_path / "fresh"
    done = run(tmp_path, only(hint, "gitmem init"), PATH=str(new))
    assert done.code == 0, done.err
    assert gm("-C", str(new), "index").code == 0


def test_unknown_client_hints_work(tmp_path: Path) -> None:
    from gitmem.setup.workspace import find_client

    with pytest.raises(NotFound) as err:
        find_client("acme")
    hint = err.value.hint or ""
    assert run(tmp_path, only(hint, "gitmem init")).code == 0
    listed = run(tmp_path, only(hint, "gitmem clients"))
    assert listed.code == 0 and "acme" in listed.out
    assert gm("--client", "acme", "index").code == 0


def test_an_empty_workspace_names_a_working_init(tmp_path: Path) -> None:
    empty = gm("clients", cwd=tmp_path)
    assert empty.code == 0
    done = run(tmp_path, only(empty.out, "gitmem init"), NAME="beta")
    assert done.code == 0, done.err
    assert "beta" in gm("clients", cwd=tmp_path).out


def test_the_hooks_hint_installs_them(client: Path) -> None:
    hooks_dir = hooks.hooks_dir(client)
    (hooks_dir / "commit-msg").write_text("#!/bin/sh\nexit 0\n")
    (hooks_dir / "commit-msg.legacy").write_text("#!/bin/sh\nexit 0\n")
    with pytest.raises(InvalidInput) as err:
        hooks.install_hooks(client)
    hint = err.value.hint or ""
    assert str(hooks_dir / "commit-msg") in hint
    (hooks_dir / "commit-msg").unlink()  # "merge them by hand, then remove ..."
    done = run(client, only(hint, "gitmem install-hooks"))
    assert done.code == 0, done.err
    assert hooks.MARKER in (hooks_dir / "commit-msg").read_text()


# -- log, review, revert --------------------------------------------------------------
def test_the_log_limit_line_names_a_full_log(client: Path) -> None:
    for n in range(3):
        write_sha(client, f"card-{n}", "", "## Goals\nship\n", "goals", f"goal {n}")
    short = gm("log", "-n", "2", cwd=client)
    assert short.code == 0 and len(short.out.splitlines()) == 4  # header, 2 edits, the hint
    full = run(client, only(short.out, "gitmem log"))
    assert full.code == 0 and len(full.out.splitlines()) == 5  # header, 3 edits, the first commit


def test_review_hints_list_and_decide(repo: MemoryRepo, client: Path) -> None:
    setup_card(repo)
    run_session(repo, policy="review")
    unnamed = gm("review", "--accept", cwd=client)
    assert unnamed.code == 2
    listed = run(client, only(unnamed.err, "gitmem review"))
    assert listed.code == 0 and SID in listed.out
    unknown = gm("review", "20990101-000000-zz99", cwd=client)
    assert unknown.code == 3
    every = run(client, only(unknown.err, "gitmem review"))
    assert every.code == 0 and SID in every.out
    shown = gm("review", SID, cwd=client)
    decide = run(client, only(shown.out, "gitmem review"))
    assert decide.code == 0 and decide.out == shown.out
    pending = gm("revert", SID, cwd=client)
    assert pending.code == 2
    rejected = run(client, only(pending.err, "gitmem review"))
    assert rejected.code == 0 and "rejected" in rejected.out
    assert json.loads(gm("review", "--all", "--json", cwd=client).out)[0]["state"] == "rejected"


# -- the agent ----------------------------------------------------------------------
@pytest.mark.slow
def test_no_api_key_names_a_demo_that_runs(tmp_path: Path, client: Path) -> None:
    missing = gm("ask", "hello", cwd=client)
    assert missing.code == 6
    done = run(tmp_path, only(missing.err, "gitmem demo"))
    assert done.code == 0, done.err
    log = run(tmp_path, only(done.out, "gitmem -C"))
    assert log.code == 0 and "agent" in log.out, log.err
    kept = gm("demo", "--keep", str(tmp_path / "my demos"), cwd=tmp_path)  # a path with a blank
    assert kept.code == 0, kept.err
    log = run(tmp_path, only(kept.out, "gitmem -C"))
    assert log.code == 0 and "agent" in log.out, log.err


def test_a_chat_left_for_review_names_the_review_command(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toml = client / "gitmem.toml"
    toml.write_text(toml.read_text().replace('review = "auto"', 'review = "review"'))
    git(client, "commit", "-qam", "review every session")
    with FakeAnthropicServer(RuleModel()) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        chat = gm("chat", cwd=client, stdin="remember acme Budget: 40k\n")
    assert chat.code == 0, chat.err
    shown = run(client, only(chat.err, "gitmem review"))
    assert shown.code == 0 and "40k" in shown.out


def test_an_unanswered_ask_names_a_retry_that_answers(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeAnthropicServer(RuleModel()) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        api.faults.push(Fault.status(529, retry_after=0.001), times=3)  # the SDK's retries, used up
        failed = gm("ask", "remember acme Budget: 40k", cwd=client)
        assert failed.code == 7, failed.err
        retry = run(client, only(failed.err, "gitmem ask"), MESSAGE="'remember acme Budget: 40k'")
    assert retry.code == 0, retry.err
    assert "Saved." in retry.out
    assert "40k" in git(client, "show", "main:cards/acme.md")


def test_a_session_id_in_use_names_a_resume_that_continues_it(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toml = client / "gitmem.toml"
    toml.write_text(toml.read_text().replace('review = "auto"', 'review = "review"'))
    git(client, "commit", "-qam", "review every session")
    with FakeAnthropicServer(RuleModel()) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        first = gm("chat", "--session", "s1", cwd=client, stdin="remember acme Budget: 40k\n")
        assert first.code == 0, first.err
        taken = gm("chat", "--session", "s1", cwd=client, stdin="hello\n")
        assert taken.code == 2 and "exists already" in taken.err
        resumed = run(client, only(taken.err, "gitmem chat"), stdin="hello\n")
    assert resumed.code == 0, resumed.err
    transcript = git(client, "show", "gitmem/session/s1:sessions/s1.jsonl")
    assert "remember acme" in transcript and "hello" in transcript  # one session, continued
