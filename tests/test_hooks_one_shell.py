"""Every check of a person's commit runs in one hook (commit-msg): git starts one shell per
commit, not two, and the checks still refuse through every way git runs that hook.

Hooks installed by an older gitmem (tests/old-hooks/: a pre-commit and a commit-msg) keep
working with this gitmem, and installing again upgrades them: gitmem's pre-commit goes, a
person's own pre-commit it had kept as ``pre-commit.legacy`` is put back.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from test_secrets import AWS

from gitmem import hooks
from gitmem.paths import shipped

from helpers import git, gm

OLD_HOOKS = Path(__file__).resolve().parent / "old-hooks"
SESSION_CLAIM = "\n\nGitmem-Session: 20260101-090000-abd0\n"


def _commit(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )


def _card(client: Path, text: str, name: str = "acme") -> str:
    path = client / "cards" / f"{name}.md"
    path.write_text(f"# {name}\n\n## budget\n{text}\n")
    return f"cards/{name}.md"


def _hooks_run(trace: Path) -> list[str]:
    """The hooks git ran, from GIT_TRACE's run_command lines."""
    return [
        m.group(1)
        for ln in trace.read_text().splitlines()
        if (m := re.search(r"trace: run_command: .*?\.git/hooks/([\w.-]+)", ln))
    ]


def test_a_plain_card_commit_runs_one_hook_and_it_starts_one_git(
    client: Path, tmp_path: Path
) -> None:
    trace = tmp_path / "trace.log"
    git(client, "add", _card(client, "- met the team on Tuesday"))
    done = _commit(client, "commit", "-q", "-m", "meeting notes", env={"GIT_TRACE": str(trace)})
    assert done.returncode == 0, done.stderr
    assert _hooks_run(trace) == ["commit-msg"]
    started = [ln for ln in trace.read_text().splitlines() if "trace: built-in: git " in ln]
    assert len(started) == 3, started  # the commit, the hook's `git diff`, git's maintenance
    assert not (hooks.hooks_dir(client) / "pre-commit").exists()


# -- a secret, or a claimed session, is refused through every path git runs the hook for ---
def _prepare(
    client: Path, how: str, tmp_path: Path, secret: str
) -> tuple[Path, list[str], dict[str, str]]:
    """Stage (or prepare) the card line ``secret`` the way ``how`` does; the git command
    that then records it, where it runs, and its environment."""
    if how == "commit":
        git(client, "add", _card(client, secret))
        return client, ["commit", "-q", "-m", "notes"], {}
    if how == "commit -a":
        git(client, "add", _card(client, "- first"))
        git(client, "commit", "-q", "-m", "first")
        _card(client, secret)
        return client, ["commit", "-q", "-a", "-m", "notes"], {}
    if how == "commit PATH":
        _card(client, "- first")
        git(client, "add", "cards/acme.md")
        git(client, "commit", "-q", "-m", "first")
        _card(client, secret)
        return client, ["commit", "-q", "-m", "notes", "cards/acme.md"], {}
    if how == "amend":
        git(client, "add", _card(client, "- first"))
        git(client, "commit", "-q", "-m", "first")
        git(client, "add", _card(client, secret))
        return client, ["commit", "-q", "--amend", "-m", "first, amended"], {}
    if how == "subdirectory":
        git(client, "add", _card(client, secret))
        return client / "cards", ["commit", "-q", "-m", "notes"], {}
    if how == "worktree":
        other = tmp_path / "other"
        git(client, "worktree", "add", "-q", "-b", "side", str(other))
        git(other, "add", _card(other, secret))
        return other, ["commit", "-q", "-m", "notes"], {}
    if how == "GIT_INDEX_FILE":
        env = {"GIT_INDEX_FILE": str(tmp_path / "other-index")}
        _commit(client, "read-tree", "HEAD", env=env)
        _card(client, secret)
        assert _commit(client, "add", "cards/acme.md", env=env).returncode == 0
        return client, ["commit", "-q", "-m", "notes"], env
    assert how == "merge"
    git(client, "checkout", "-q", "-b", "side")
    git(client, "add", _card(client, secret, "other"))
    git(client, "commit", "-q", "--no-verify", "-m", "a secret, the checks skipped")
    git(client, "checkout", "-q", "main")
    git(client, "add", _card(client, "- on main"))
    git(client, "commit", "-q", "-m", "on main")
    return client, ["merge", "-q", "--no-edit", "side", "-m", "merge side"], {}


PATHS = [
    "commit",
    "commit -a",
    "commit PATH",
    "amend",
    "subdirectory",
    "worktree",
    "GIT_INDEX_FILE",
    "merge",
]


@pytest.mark.parametrize("how", PATHS)
def test_a_secret_staged_for_a_card_is_refused(client: Path, tmp_path: Path, how: str) -> None:
    cwd, cmd, env = _prepare(client, how, tmp_path, f"- deploy key {AWS}")
    head = git(cwd, "rev-parse", "HEAD")
    done = _commit(cwd, *cmd, env=env)
    assert done.returncode != 0
    assert "gitmem: commit refused: a secret (aws-access-key in cards/" in done.stderr
    assert AWS not in done.stderr
    assert git(cwd, "rev-parse", "HEAD") == head
    if how == "merge":  # git keeps the merge waiting, its message in MERGE_MSG
        assert "-e -F" not in done.stderr
        assert (cwd / ".git" / "MERGE_HEAD").exists()


def test_a_commit_refused_after_the_editor_keeps_the_message_for_the_next_try(
    client: Path,
) -> None:
    git(client, "add", _card(client, f"- deploy key {AWS}"))
    editor = {"GIT_EDITOR": "printf 'budget: the Q3 figures\\n\\nas agreed on Tuesday\\n' >"}
    done = _commit(client, "commit", env=editor)
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert line.endswith("(your message is kept: `git commit -e -F .git/COMMIT_EDITMSG`)")
    git(client, "add", _card(client, "- the deploy key is in the vault"))
    again = line[line.rindex("`git ") + 1 : -2].split()  # the command, as the line says it
    done = _commit(client, *again[1:], env={"GIT_EDITOR": "true"})
    assert done.returncode == 0, done.stderr
    assert (
        git(client, "log", "-1", "--format=%B")
        == "budget: the Q3 figures\n\nas agreed on Tuesday\n\n"
    )


@pytest.mark.parametrize("how", PATHS)
def test_a_claimed_session_is_refused(client: Path, tmp_path: Path, how: str) -> None:
    cwd, cmd, env = _prepare(client, how, tmp_path, "- the deploy key is in the vault")
    message = cmd.index("-m") + 1
    cmd[message] += SESSION_CLAIM
    head = git(cwd, "rev-parse", "HEAD")
    done = _commit(cwd, *cmd, env=env)
    assert done.returncode != 0
    assert "Gitmem-Session is written by gitmem only" in done.stderr, done.stderr
    assert git(cwd, "rev-parse", "HEAD") == head
    if how == "merge":  # a refused merge waits for `git commit`: start it again instead
        git(cwd, "merge", "--abort")
    cmd[message] = cmd[message].replace(SESSION_CLAIM, "")
    done = _commit(cwd, *cmd, env=env)
    assert done.returncode == 0, done.stderr


# -- hooks an older gitmem installed -------------------------------------------------------
def _install_old(client: Path) -> Path:
    target = hooks.hooks_dir(client)
    for name in ("commit-msg", "pre-commit", "post-checkout", "post-merge", "post-rewrite"):
        (target / name).write_text(hooks.render_hook(OLD_HOOKS, name))
        (target / name).chmod(0o755)
    return target


def _refuses_secret_and_claim(client: Path, budget: str) -> None:
    git(client, "add", _card(client, f"- deploy key {AWS}"))
    done = _commit(client, "commit", "-q", "-m", "notes")
    assert done.returncode == 1 and "a secret (aws-access-key" in done.stderr, done.stderr
    git(client, "add", _card(client, f"- {budget}"))
    done = _commit(client, "commit", "-q", "-m", "notes" + SESSION_CLAIM)
    assert done.returncode == 1 and "Gitmem-Session is written" in done.stderr, done.stderr
    done = _commit(client, "commit", "-q", "-m", "notes")
    assert done.returncode == 0, done.stderr


def test_old_hooks_keep_working_and_installing_again_upgrades_them(client: Path) -> None:
    target = _install_old(client)
    _refuses_secret_and_claim(client, "30k")  # the old set, with this gitmem's Python
    actions = {a.hook: a.action for a in hooks.install_hooks(client)}
    # the old set's post-* hooks are the ones shipped now: only commit-msg changed
    assert actions == {
        "commit-msg": "updated",
        "post-checkout": "up-to-date",
        "post-merge": "up-to-date",
        "post-rewrite": "up-to-date",
        "pre-commit": "removed",
    }
    assert not (target / "pre-commit").exists()
    assert (target / "commit-msg").read_text() == hooks.render_hook(shipped("hooks"), "commit-msg")
    _refuses_secret_and_claim(client, "40k")
    assert hooks.install_hooks(client) == [hooks.HookAction(h, "up-to-date") for h in hooks.HOOKS]


def test_a_persons_pre_commit_kept_by_old_hooks_is_put_back(client: Path, tmp_path: Path) -> None:
    target = _install_old(client)
    ran = tmp_path / "ran"
    mine = f'#!/bin/sh\necho "mine $*" >> "{ran}"\n'
    (target / "pre-commit.legacy").write_text(mine)
    (target / "pre-commit.legacy").chmod(0o755)
    git(client, "add", _card(client, "- 30k"))
    assert _commit(client, "commit", "-q", "-m", "one").returncode == 0
    assert ran.read_text() == "mine \n"  # run by the old gitmem pre-commit
    actions = {a.hook: a.action for a in hooks.install_hooks(client)}
    assert actions["pre-commit"] == "restored-legacy"
    assert (target / "pre-commit").read_text() == mine
    assert not (target / "pre-commit.legacy").exists()
    git(client, "add", _card(client, "- 40k"))
    assert _commit(client, "commit", "-q", "-m", "two").returncode == 0
    assert ran.read_text() == "mine \nmine \n"  # and now by git itself


def test_a_persons_own_pre_commit_is_left_alone(client: Path) -> None:
    target = hooks.hooks_dir(client)
    mine = "#!/bin/sh\nexit 0\n"
    (target / "pre-commit").write_text(mine)
    actions = [a for a in hooks.install_hooks(client) if a.hook == "pre-commit"]
    assert actions == [] and (target / "pre-commit").read_text() == mine
    assert not (target / "pre-commit.legacy").exists()


def test_gitmem_install_hooks_says_what_it_did_to_old_hooks(client: Path) -> None:
    target = _install_old(client)
    done = gm("-C", str(client), "install-hooks")
    assert done.code == 0, done.err
    assert done.out.splitlines() == [
        "commit-msg: updated",
        "post-checkout: up-to-date",
        "post-merge: up-to-date",
        "post-rewrite: up-to-date",
        "pre-commit: removed",
    ]
    assert not (target / "pre-commit").exists()
    again = gm("-C", str(client), "install-hooks", "--json")
    assert [(a["hook"], a["action"]) for a in json.loads(again.out)] == [
        (h, "up-to-date") for h in hooks.HOOKS
    ]  # nothing left to do: it says so
