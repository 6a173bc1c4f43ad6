"""While `gitmem sync` is stopped at a conflict, main waits for it: a person's `git commit`
there (`-a` would take the conflict markers) is refused by the installed hook, naming
`gitmem sync --continue` and `--abort`; and conflict markers in a memory file are never
committed by a person, stopped sync or not."""

from __future__ import annotations

import subprocess
from pathlib import Path

from test_sync import CARDS, make_pair, sync

from helpers import git, gm, write_sha


def commit(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "commit", "-q", *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def stopped(tmp_path: Path) -> Path:
    """The desktop (a clone with gitmem's hooks) whose sync stopped at a conflict."""
    _, laptop, desktop = make_pair(tmp_path)
    assert gm("-C", str(desktop), "install-hooks").code == 0
    write_sha(laptop, "acme-website", "30k", "40k", "budget", "Budget 40k")
    assert sync(laptop)[0] == 0
    write_sha(desktop, "acme-website", "30k", "50k", "budget", "Budget 50k")
    assert sync(desktop)[0] == 4
    assert "<<<<<<< " in (desktop / "cards/acme-website.md").read_text()
    return desktop


def test_a_commit_during_a_stopped_sync_is_refused_naming_the_way_out(tmp_path: Path) -> None:
    desktop = stopped(tmp_path)
    main = git(desktop, "rev-parse", "main")
    (desktop / "notes.txt").write_text("mine\n")
    git(desktop, "add", "notes.txt")
    for args in (["-am", "my notes"], ["-m", "my notes"]):
        done = commit(desktop, *args)
        assert done.returncode == 1, done.stderr
        line = done.stderr.strip()
        assert "\n" not in line and "a sync is stopped at a conflict" in line
        assert "`gitmem sync --continue`" in line and "`gitmem sync --abort`" in line
        assert git(desktop, "rev-parse", "main") == main
    (desktop / "cards/acme-website.md").write_text(CARDS["acme-website"].replace("30k", "45k"))
    code, _, err = sync(desktop, "--continue")
    assert code == 0, err
    assert commit(desktop, "-m", "my notes").returncode == 0  # the sync is done: main is free
    assert "45k" in git(desktop, "show", "main:cards/acme-website.md")


def test_conflict_markers_in_a_card_are_never_committed_by_a_person(tmp_path: Path) -> None:
    desktop = stopped(tmp_path)
    marked = (desktop / "cards/acme-website.md").read_text()
    code, _, err = sync(desktop, "--abort")
    assert code == 0, err
    (desktop / "cards/acme-website.md").write_text(marked)  # pasted back, say
    main = git(desktop, "rev-parse", "main")
    done = commit(desktop, "-am", "budget")
    assert done.returncode == 1
    assert "cards/acme-website.md has conflict markers" in done.stderr
    assert git(desktop, "rev-parse", "main") == main
