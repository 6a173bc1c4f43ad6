"""Bad input to status, cards, search, edit, clone and log: one line, the right code, nothing changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import gm, snapshot

GOOD = ["--section", "budget", "--keywords", "budget", "--summary", "Budget 30k"]


@pytest.mark.parametrize(
    ("args", "code", "match"),
    [
        (["cards", "--branch", "a..b"], 2, "invalid branch name"),
        (["cards", "--branch", "nope"], 3, "no branch 'nope'"),
        (["search", "budget", "--branch", "nope"], 3, "no branch 'nope'"),
        (["search", "budget", "-n", "0"], 2, "Invalid value for '-n'"),
        (["search"], 2, "Missing argument 'QUERY...'"),
        (["edit", "../etc", "--keywords", "k", "--summary", "s"], 2, "invalid project name"),
        (["edit", "acme", "Bad Id", "--keywords", "k", "--summary", "s"], 2, "invalid section id"),
        (
            ["edit", "acme", "budget", "--keywords", "k", "--summary", "s", "--branch", "nope"],
            3,
            "no branch 'nope'",
        ),
        (["edit", "acme", "budget", "--keywords", "k", "--summary", "line\nbreak"], 2, "summary"),
        (["log", "--branch", "nope"], 3, "no branch 'nope'"),
        (["log", "../x"], 2, "invalid project name"),
        (["clone", "--", "-x", "dest"], 2, "invalid URL"),
        (["clone", "-x", "dest"], 2, "No such option"),  # click 8.1 and 8.2 word the rest apart
    ],
)
def test_refused_with_one_line_and_nothing_changed(
    seeded: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], code: int, match: str
) -> None:
    monkeypatch.setenv("EDITOR", "sed -i s/30k/40k/")
    before = snapshot(seeded)
    res = gm("-C", str(seeded), *args, cwd=seeded)
    assert res.code == code, res.err
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gitmem: error: ") and match in lines[0], res.err
    assert snapshot(seeded) == before


def test_status_outside_a_memory_repo(tmp_path: Path) -> None:
    res = gm("-C", str(tmp_path), "status")
    assert res.code == 3 and res.err.startswith("gitmem: error: not a gitmem memory repo")
