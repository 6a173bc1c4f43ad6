"""gitmem log: memory edits by default, a header, the author, fitted to a terminal."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitmem.agent import synthesis, usage
from gitmem.cli.log_text import render
from gitmem.features.audit import LogEntry, audit_log
from gitmem.features.edit import write_card
from gitmem.features.session_live import transcript_file
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.review import session_branches as sessions

from helpers import git, gm

GITMEM = str(Path(sys.executable).with_name("gitmem"))
EXPECTED = Path(__file__).parent / "expected"
SID = "20261130-101200-ab12"
LONG = "Q3 budget raised to 40k after the call with Ann, Bob and the whole finance team on Friday"


def a_session_with_layers(repo: MemoryRepo) -> None:
    """One agent edit, then the commits a session adds that are not memory edits."""
    s = sessions.start_session(repo, SID)
    write_card(
        repo,
        "acme",
        "30k",
        "40k",
        IndexEntry.make("budget", ["budget"], LONG),
        session=SID,
        actor="agent",
        branch=s.branch,
    )
    synthesis.save(repo, s, "Acme's budget went up.", 1)
    transcript_file(repo, SID).write_text('{"role": "user", "text": "raise it"}\n')
    (usage.live_dir(repo) / f"{SID}.jsonl").write_text(json.dumps({"session": SID}) + "\n")
    sessions.finish_session(repo, s, "auto")
    assert usage.commit_session(repo, SID)


@pytest.fixture
def history(repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch) -> MemoryRepo:
    # The first edit is made with no git identity at all: gitmem's own name stands in.
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(key)
    write_card(
        repo,
        "acme",
        "",
        "# Acme\n\n## Budget\n30k\n",
        IndexEntry.make("budget", ["budget"], "Budget 30k"),
    )
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Person")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Person")
    a_session_with_layers(repo)
    # A person's hand edit with plain git, as Ann.
    card = repo.root / "cards/acme.md"
    card.write_text(card.read_text() + "\n## Risks\nLate\n")
    git(
        repo.root,
        "-c",
        "user.name=Ann",
        "-c",
        "user.email=ann@example.com",
        "commit",
        "-qam",
        "risks noted",
        "--author",
        "Ann <ann@example.com>",
    )
    return repo


def test_log_shows_memory_edits_with_a_header_and_the_author(history: MemoryRepo) -> None:
    root = str(history.root)
    res = gm("-C", root, "log")
    assert res.code == 0, res.err
    lines = res.out.splitlines()
    assert lines[0].split() == [
        "COMMIT",
        "DATE",
        "ACTOR",
        "AUTHOR",
        "SESSION",
        "CARD",
        "§",
        "SECTION",
        "SUMMARY",
    ]
    assert len(lines) == 1 + 4  # init, the first edit, the agent's edit, Ann's hand edit
    assert not any(w in res.out for w in ("transcript", "usage: session", "synthesis:"))
    ann, agent, first, init = lines[1:]
    assert ann.split()[3] == "-" and ann.split()[4] == "Ann" and "risks noted" in ann
    assert "agent  Test Person  20261130-101200-ab12  acme § budget" in agent and LONG in agent
    # no identity: gitmem's stand-in name is not shown as an author
    assert first.split()[3:6] == ["cli", "-", "-"]
    assert "gitmem: new memory" in init

    every = gm("-C", root, "log", "--all")
    assert every.code == 0, every.err
    assert len(every.out.splitlines()) == 1 + 7
    for subject in (
        "session 20261130-101200-ab12: transcript",
        "usage: session",
        "synthesis: through turn 1",
    ):
        assert subject in every.out
    data = json.loads(gm("-C", root, "log", "--all", "--json").out)
    assert [e["layer"] for e in data].count(None) == 4
    assert {e["layer"] for e in data} == {None, "chat", "usage", "synthesis"}
    assert [e["author"] for e in data][-2] == "gitmem"


def test_limit_counts_memory_edits_not_the_commits_skipped(history: MemoryRepo) -> None:
    newest = audit_log(history, limit=2, edits_only=True)
    assert [e.summary for e in newest] == ["risks noted", LONG]
    res = gm("-C", str(history.root), "log", "-n", "2")
    assert len(res.out.splitlines()) == 1 + 2 + 1 and "`gitmem log -n 0` shows all" in res.out


def test_without_any_other_author_the_column_is_left_out(
    repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(key, "gitmem")
    write_card(
        repo, "acme", "", "## Budget\n30k\n", IndexEntry.make("budget", ["budget"], "Budget 30k")
    )
    entries = audit_log(repo, "acme")
    assert render(entries)[0].split() == [
        "COMMIT",
        "DATE",
        "ACTOR",
        "SESSION",
        "CARD",
        "§",
        "SECTION",
        "SUMMARY",
    ]
    unknown = gm("-C", str(repo.root), "log", "beta")
    assert (unknown.code, unknown.err) == (
        3,
        "gitmem: error: no card 'beta' on main; cards: acme\n",
    )


def run_in_terminal(args: list[str], columns: int) -> str:
    """gitmem with its stdout on a pseudo-terminal of ``columns`` columns."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns)}
    proc = subprocess.Popen([GITMEM, *args], stdout=follower, stderr=subprocess.PIPE, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:  # the terminal closed: gitmem is done
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert proc.wait(timeout=60) == 0
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_in_a_terminal_lines_fit_its_width_and_piped_they_are_whole(history: MemoryRepo) -> None:
    args = ["-C", str(history.root), "log"]
    shown = run_in_terminal(args, 100)
    lines = shown.splitlines()
    assert lines[0].startswith("COMMIT") and len(lines) == 5
    assert all(len(line) <= 100 for line in lines)
    assert any(line.endswith("…") for line in lines) and LONG not in shown
    narrow = run_in_terminal(args, 60).splitlines()
    assert all(len(line) <= 60 for line in narrow) and "SESSION" not in narrow[0]
    env = {**os.environ, "COLUMNS": "40"}
    piped = [
        subprocess.run([GITMEM, *args], capture_output=True, env=env, check=True).stdout
        for _ in range(2)
    ]
    assert piped[0] == piped[1] and LONG.encode() in piped[0]
    assert piped[0].decode() == gm(*args).out
    got = gm(*args).out
    normalised = got
    for sha in git(history.root, "log", "--format=%h").split():
        normalised = normalised.replace(sha, "<sha>")
    if os.environ.get("REGEN_EXPECTED"):
        (EXPECTED / "log_edits.txt").write_text(normalised)
    assert normalised == (EXPECTED / "log_edits.txt").read_text()


words = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=90)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(words, st.sampled_from(["agent", "cli", "Ann"]), st.booleans()),
        min_size=1,
        max_size=6,
    ),
    st.integers(min_value=60, max_value=200),
)
def test_fitted_lines_never_exceed_the_width_and_piped_ones_keep_every_word(
    rows: list[tuple[str, str, bool]], width: int
) -> None:
    entries = [
        LogEntry(
            f"{i:040x}",
            "2025-11-30T10:20:00+00:00",
            actor,
            SID if s else None,
            "acme",
            "budget",
            summary,
            None,
            author=actor if actor == "Ann" else "gitmem",
        )
        for i, (summary, actor, s) in enumerate(rows)
    ]
    fitted = render(entries, width)
    assert len(fitted) == len(entries) + 1
    assert all(len(line) <= width for line in fitted)
    whole = render(entries)
    for e, line in zip(entries, whole[1:], strict=True):
        assert line.endswith(e.summary.rstrip()) and e.sha[:7] in line
    assert render(entries) == whole
