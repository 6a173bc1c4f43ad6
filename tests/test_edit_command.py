"""gitmem edit: a card or section in $EDITOR, saved as one edit commit with its index entry."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem.memory.cards import digests

from helpers import git, gm, index_summaries, snapshot

GITMEM = str(Path(sys.executable).with_name("gitmem"))
CARD = "# Acme website\n\n## Budget\nBudget: 30k\n\n## Team\nAnn\n"


@pytest.fixture
def acme(client: Path) -> Path:
    res = gm(
        "-C",
        str(client),
        "write",
        "acme",
        "--old",
        "",
        "--new",
        CARD,
        "--section",
        "budget",
        "--keywords",
        "budget,q3",
        "--summary",
        "Budget set to 30k",
    )
    assert res.code == 0, res.err
    return client


def editor(tmp_path: Path, body: str, name: str = "ed.sh") -> str:
    """A small editor: a shell script that changes the file it is given."""
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\nset -e\n{body}\n")
    path.chmod(0o755)
    return str(path)


def state(root: Path) -> dict[str, str]:
    return {k: v for k, v in snapshot(root).items() if not k.startswith(".git/gitmem/index-")}


def test_saving_a_section_makes_one_edit_commit_with_its_entry(
    acme: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDITOR", editor(tmp_path, "sed -i 's/30k/40k/' \"$1\""))
    before = int(git(acme, "rev-list", "--count", "main"))
    res = gm(
        "-C",
        str(acme),
        "edit",
        "acme",
        "budget",
        "--keywords",
        "budget,q3,invoice",
        "--summary",
        "Budget raised to 40k",
    )
    assert res.code == 0, res.err
    assert res.out.startswith("edited acme § budget in ")
    assert int(git(acme, "rev-list", "--count", "main")) == before + 1
    assert (acme / "cards/acme.md").read_text() == CARD.replace("30k", "40k")
    trailers = git(acme, "log", "-1", "--format=%(trailers:only,unfold)")
    assert (
        "Gitmem-Section: budget\nGitmem-Keywords: budget, q3, invoice\nGitmem-Summary: Budget raised to 40k\n"
        f"Gitmem-Digest: {digests(CARD.replace('30k', '40k'))['budget']}\nGitmem-Actor: cli"
        in trailers
    )
    assert index_summaries_of(acme)["acme/budget"] == "Budget raised to 40k"
    assert git(acme, "status", "--porcelain") == ""


def index_summaries_of(root: Path) -> dict[str, str | None]:
    from gitmem.memory.repo import MemoryRepo

    with MemoryRepo(root) as repo:
        return index_summaries(repo)


def test_a_whole_card_edit_is_indexed_under_the_section_that_changed(
    acme: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "VISUAL", editor(tmp_path, "sed -i 's/^Ann$/Ann designs, Bob builds/' \"$1\"")
    )
    res = gm(
        "-C", str(acme), "edit", "acme", "--keywords", "team", "--summary", "Bob joined", "--json"
    )
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["changed"] is True and data["edit"]["section"] == "team"
    assert "Ann designs, Bob builds" in git(acme, "show", "main:cards/acme.md")
    assert index_summaries_of(acme)["acme/team"] == "Bob joined"


def test_an_unchanged_buffer_changes_nothing(acme: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EDITOR", "true")
    before = state(acme)
    res = gm("-C", str(acme), "edit", "acme", "budget", "--keywords", "x", "--summary", "y")
    assert (res.code, res.out) == (0, "acme § budget: no changes; nothing committed\n")
    assert state(acme) == before


def test_without_a_terminal_the_entry_must_be_given(
    acme: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = tmp_path / "ran"
    monkeypatch.setenv("EDITOR", editor(tmp_path, f"touch {ran}; sed -i 's/30k/40k/' \"$1\""))
    before = state(acme)
    res = gm("-C", str(acme), "edit", "acme", "budget", "--summary", "only a summary")
    assert res.code == 2 and "give --keywords for the index entry; nothing was committed" in res.err
    assert len(res.err.strip().splitlines()) == 1
    assert ran.exists() and state(acme) == before  # the editor ran; nothing was committed
    kept = Path(res.err.strip().rsplit(" ", 1)[1])
    assert "40k" in kept.read_text()  # the edited text is not lost


def test_a_failing_editor_or_a_refused_edit_changes_nothing(
    acme: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = state(acme)
    monkeypatch.setenv("EDITOR", "false")
    res = gm("-C", str(acme), "edit", "acme", "--keywords", "x", "--summary", "y")
    assert res.code == 2 and "the editor (false) exited with 1" in res.err
    assert state(acme) == before
    # A second "## Budget" heading: refused by the same checks as any write; the text is kept.
    monkeypatch.setenv("EDITOR", editor(tmp_path, "printf '\\n## Budget\\nagain\\n' >> \"$1\""))
    res = gm("-C", str(acme), "edit", "acme", "--keywords", "x", "--summary", "y")
    assert res.code == 4 and "has a section 'budget' already" in res.err
    assert len(res.err.strip().splitlines()) == 1
    kept = Path(res.err.split("kept in ")[1].split()[0])
    assert kept.read_text().endswith("## Budget\nagain\n")
    kept.unlink()
    assert state(acme) == before


@pytest.mark.parametrize("how", ["symlink", "uncommitted"])
def test_a_card_the_save_would_refuse_is_refused_before_the_editor_opens(
    acme: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    card = acme / "cards" / "acme.md"
    if how == "symlink":
        outside = tmp_path / "outside.md"
        outside.write_text(CARD)
        card.unlink()
        card.symlink_to(outside)
    else:
        card.write_text(CARD + "a person's line\n")
    before = state(acme)
    opened = tmp_path / "opened"
    monkeypatch.setenv("EDITOR", editor(tmp_path, f'touch {opened}; sed -i s/30k/40k/ "$1"'))
    for args in (["acme"], ["acme", "budget"]):
        res = gm("-C", str(acme), "edit", *args, "--keywords", "x", "--summary", "y")
        assert res.code == 4, res.err
        said = "is a symlink in the working tree" if how == "symlink" else "uncommitted edits"
        assert said in res.err and len(res.err.strip().splitlines()) == 1
        assert not opened.exists()  # the editor never ran
    assert state(acme) == before


def test_a_missing_card_is_created_and_a_missing_section_is_an_error(
    acme: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "EDITOR", editor(tmp_path, "printf '# Beta\\n\\n## Goals\\nShip v2\\n' > \"$1\"")
    )
    res = gm("-C", str(acme), "edit", "beta", "--keywords", "roadmap", "--summary", "Ship v2")
    assert res.code == 0, res.err
    assert res.out.startswith("created beta § goals")
    assert git(acme, "show", "main:cards/beta.md") == "# Beta\n\n## Goals\nShip v2\n"
    res = gm("-C", str(acme), "edit", "acme", "nosuch", "--keywords", "x", "--summary", "y")
    assert res.code == 3 and "no section 'nosuch' in acme" in res.err
    monkeypatch.setenv("EDITOR", "true")  # a new card left as it was shown: nothing is created
    before = state(acme)
    res = gm("-C", str(acme), "edit", "gamma", "--keywords", "x", "--summary", "y")
    assert (res.code, res.out) == (0, "gamma: no changes; nothing committed\n") and state(
        acme
    ) == before


def test_git_s_editor_is_the_last_resort(acme: Path, tmp_path: Path) -> None:
    git(acme, "config", "core.editor", editor(tmp_path, "sed -i 's/30k/35k/' \"$1\""))
    env = {k: v for k, v in os.environ.items() if k not in ("EDITOR", "VISUAL", "GIT_EDITOR")}
    proc = subprocess.run(
        [
            GITMEM,
            "-C",
            str(acme),
            "edit",
            "acme",
            "budget",
            "--keywords",
            "budget",
            "--summary",
            "35k",
        ],
        env=env,
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Budget: 35k" in (acme / "cards/acme.md").read_text()


# -- a person at a real terminal ---------------------------------------------------
@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[list[str]]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (apt-get install tmux): the terminal test needs it")
    base = ["tmux", "-S", str(tmp_path / "tmux.sock")]
    yield base
    subprocess.run([*base, "kill-server"], capture_output=True, check=False)


def screen(tmux: list[str]) -> str:
    return subprocess.run(
        [*tmux, "capture-pane", "-p", "-t", "edit"], capture_output=True, check=True
    ).stdout.decode()


def wait_for(tmux: list[str], text: str, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        shown = screen(tmux)
        if text in shown:
            return shown
        assert time.monotonic() < deadline, f"{text!r} never appeared; the screen:\n{shown}"
        time.sleep(0.05)


def test_in_a_terminal_the_person_types_the_index_entry(
    acme: Path, tmp_path: Path, tmux: list[str]
) -> None:
    ed = editor(tmp_path, "sed -i 's/30k/40k/' \"$1\"")
    keep = (
        "HOME",
        "PATH",
        "GITMEM_HOME",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_DATE",
    )
    env = " ".join(f"{k}={shlex.quote(os.environ[k])}" for k in keep if k in os.environ)
    command = f"env {env} EDITOR={shlex.quote(ed)} {GITMEM} -C {shlex.quote(str(acme))} edit acme budget; echo EXIT=$?"
    subprocess.run(
        [*tmux, "new-session", "-d", "-s", "edit", "-x", "120", "-y", "30", command], check=True
    )
    subprocess.run([*tmux, "set-option", "-t", "edit", "remain-on-exit", "on"], check=True)
    assert "Keywords (comma-separated) [budget, q3]:" in wait_for(tmux, "Keywords")
    subprocess.run([*tmux, "send-keys", "-t", "edit", "-l", "budget, q3, invoice"], check=True)
    subprocess.run([*tmux, "send-keys", "-t", "edit", "Enter"], check=True)
    wait_for(tmux, "Summary (what changed):")
    subprocess.run(
        [*tmux, "send-keys", "-t", "edit", "-l", "Budget raised to 40k on the call"], check=True
    )
    subprocess.run([*tmux, "send-keys", "-t", "edit", "Enter"], check=True)
    shown = wait_for(tmux, "EXIT=")
    assert "EXIT=0" in shown and "edited acme § budget in " in shown and "Section" not in shown
    trailers = git(acme, "log", "-1", "--format=%(trailers:only,unfold)")
    assert (
        "Gitmem-Keywords: budget, q3, invoice\nGitmem-Summary: Budget raised to 40k on the call"
        in trailers
    )
    assert "Budget: 40k" in git(acme, "show", "main:cards/acme.md")
