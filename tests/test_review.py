"""gitmem review: pending sessions shown like pull requests; accept all, some commits, some hunks; reject."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.cli.review import render
from gitmem.features.edit import write_card
from gitmem.features.session_live import transcript_file
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.ops.hunks import apply as apply_hunks
from gitmem.ops.hunks import parse as parse_diff
from gitmem.review import session_branches as sessions
from gitmem.review.pending import load_session
from gitmem.review.render import plain as plain_text
from gitmem.review.render import show_lines

from helpers import git, gm, index_summaries, snapshot

EXPECTED = Path(__file__).parent / "expected"
SID = "20261130-101200-ab12"
OTHER = "20261130-140000-cd34"

CARD = """# Acme website

## Budget
Budget: 30k
Owner: Ann

## Team
Ann designs
Bob builds
Cy tests
Dee writes
Eve ships
Fay sells

## Next steps
Call Bob
"""


def person_writes(repo: MemoryRepo) -> None:
    write_card(
        repo, "acme-website", "", CARD, IndexEntry.make("budget", ["budget"], "Budget set to 30k")
    )


def agent_session(repo: MemoryRepo, sid: str = SID, *, policy: str = "review") -> None:
    """A session with four hunks: [1] budget, [2]+[3] one commit in two places, [4] a new card."""
    s = sessions.start_session(repo, sid)

    def w(project: str, old: str, new: str, section: str, kws: list[str], summary: str) -> None:
        write_card(
            repo,
            project,
            old,
            new,
            IndexEntry.make(section, kws, summary),
            session=sid,
            actor="agent",
            branch=s.branch,
        )

    w(
        "acme-website",
        "Budget: 30k",
        "Budget: 40k",
        "budget",
        ["budget", "q3"],
        "Q3 budget raised to 40k",
    )
    team = CARD[CARD.index("Owner: Ann") : CARD.index("Call Bob") + len("Call Bob")]
    w(
        "acme-website",
        team,
        team.replace("Owner: Ann", "Owner: Bob").replace("Call Bob", "Call Bob on Monday"),
        "next-steps",
        ["bob", "call"],
        "Call Bob on Monday; Bob owns the budget",
    )
    w("beta", "", "## Goals\nShip v2\n", "goals", ["roadmap"], "Ship v2 by March")
    line = {"at": "2025-11-30T10:20:00Z", "role": "user", "text": "raise the budget", "content": []}
    transcript_file(repo, sid).write_text(json.dumps(line) + "\n")
    sessions.finish_session(repo, s, policy)


entries = index_summaries


def normalise(repo_path: Path, text: str) -> str:
    """Commit shas become <1>, <2>, ... in order of first appearance (dates are fixed already)."""
    known = git(repo_path, "log", "--all", "--format=%H").split()
    names: dict[str, str] = {}

    def name(m: re.Match[str]) -> str:
        tok = m.group(0)
        full = next((k for k in known if k.startswith(tok)), None)
        if full is None:
            return tok
        return names.setdefault(full, f"<{len(names) + 1}>")

    return re.sub(r"\b[0-9a-f]{7,40}\b", name, text)


def check_expected(repo_path: Path, name: str, got: str) -> None:
    got = normalise(repo_path, got)
    if os.environ.get("REGEN_EXPECTED"):
        (EXPECTED / name).write_text(got)
    assert got == (EXPECTED / name).read_text()


@pytest.fixture
def pending(repo: MemoryRepo) -> MemoryRepo:
    person_writes(repo)
    agent_session(repo)
    return repo


def test_list_show_and_log_views_match_expected_files(pending: MemoryRepo, client: Path) -> None:
    agent_session(pending, OTHER)
    listed = gm("-C", str(client), "review")
    assert listed.code == 0, listed.err
    check_expected(client, "review_list.txt", listed.out)
    shown = gm("-C", str(client), "review", SID)
    assert shown.code == 0, shown.err
    assert "\x1b[" not in shown.out  # piped: plain text
    check_expected(client, "review_show.txt", shown.out)
    assert gm("-C", str(client), "review", SID, "--accept", "--hunks", "1,3").code == 0
    assert gm("-C", str(client), "review", OTHER, "--reject").code == 0
    check_expected(client, "review_all.txt", gm("-C", str(client), "review", "--all").out)
    check_expected(client, "review_log.txt", gm("-C", str(client), "log").out)


def test_show_json_gives_files_commits_entries_and_hunks(pending: MemoryRepo, client: Path) -> None:
    data = json.loads(gm("-C", str(client), "review", SID, "--json").out)
    assert data["state"] == "pending" and data["edits"] == 3 and data["hunks"] == 4
    assert data["cards"] == ["acme-website", "beta"]
    acme, beta = data["files"]
    assert acme["path"] == "cards/acme-website.md" and beta["path"] == "cards/beta.md"
    first, second = acme["commits"]
    assert first["entry"] == {
        "card": "acme-website",
        "section": "budget",
        "keywords": ["budget", "q3"],
        "summary": "Q3 budget raised to 40k",
    }
    assert [h["number"] for h in second["hunks"]] == [2, 3]
    assert (
        "-Owner: Ann" in second["hunks"][0]["lines"]
        and "+Call Bob on Monday" in second["hunks"][1]["lines"]
    )
    assert len(data["transcript"]) == 1


def test_colour_in_a_terminal_plain_when_piped(pending: MemoryRepo) -> None:
    lines = show_lines(load_session(pending, SID))
    coloured, plain = render(lines), plain_text(lines)
    assert "\x1b[" in coloured and "\x1b[" not in plain
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain


def test_an_edit_without_a_summary_says_so(client: Path) -> None:
    repo = MemoryRepo(client)
    s = sessions.start_session(repo, SID)
    entry = IndexEntry.unsummarised("goals", ["roadmap"])
    write_card(
        repo, "beta", "", "## Goals\nShip v2\n", entry, session=SID, actor="agent", branch=s.branch
    )
    sessions.finish_session(repo, s, "review")
    shown = gm("-C", str(client), "review", SID).out
    assert "index: § goals  [roadmap]  (no summary: listed as unindexed)" in shown, shown
    assert "None" not in shown


def test_accept_all_lands_every_commit_with_its_trailers(pending: MemoryRepo, client: Path) -> None:
    before = git(client, "rev-parse", "main").strip()
    tip = git(client, "rev-parse", f"gitmem/session/{SID}").strip()
    res = gm("-C", str(client), "review", SID, "--accept")
    assert res.code == 0, res.err
    assert "accepted" in res.out and "working tree follows" in res.out
    # main had not moved: a fast-forward, the very same commits
    assert git(client, "rev-parse", "main").strip() == tip
    assert git(client, "rev-list", "--count", f"{before}..main").strip() == "4"
    assert git(client, "rev-parse", f"refs/gitmem/archive/{SID}").strip() == tip
    assert git(client, "branch", "--list", f"gitmem/session/{SID}") == ""
    got = entries(pending)
    assert got["acme-website/budget"] == "Q3 budget raised to 40k"
    assert got["acme-website/next-steps"] == "Call Bob on Monday; Bob owns the budget"
    assert got["beta/goals"] == "Ship v2 by March"
    assert "Budget: 40k" in (client / "cards/acme-website.md").read_text()
    assert (client / "cards/beta.md").exists() and (client / f"sessions/{SID}.jsonl").exists()
    assert git(client, "status", "--porcelain") == ""
    assert gm("-C", str(client), "review").out == "No sessions waiting for review.\n"
    shown = gm("-C", str(client), "review", SID).out  # still shown, from its archive ref
    assert shown.startswith(f"Session {SID} (accepted): 3 edits to 2 cards") and "[4] @@" in shown
    assert "--accept" not in shown


def test_accept_after_main_moved_recreates_commits_on_top(
    pending: MemoryRepo, client: Path
) -> None:
    write_card(
        pending,
        "acme-website",
        "Fay sells",
        "Fay sells a lot",
        IndexEntry.make("team", ["sales"], "Fay sells"),
    )
    res = gm("-C", str(client), "review", SID, "--accept")
    assert res.code == 0, res.err
    text = (client / "cards/acme-website.md").read_text()
    assert "Fay sells a lot" in text and "Budget: 40k" in text and "Call Bob on Monday" in text
    subjects = git(client, "log", "--format=%s", "-5", "main").splitlines()
    assert subjects[:4] == [
        "session 20261130-101200-ab12: transcript",
        "beta: Ship v2 by March",
        "acme-website: Call Bob on Monday; Bob owns the budget",
        "acme-website: Q3 budget raised to 40k",
    ]
    assert entries(pending)["acme-website/team"] == "Fay sells"
    assert git(client, "status", "--porcelain") == ""


def test_accept_some_commits(pending: MemoryRepo, client: Path) -> None:
    view = load_session(pending, SID)
    beta = view.edits[2].sha
    res = gm("-C", str(client), "review", SID, "--accept", "--commit", beta[:10])
    assert res.code == 0, res.err
    assert "accepted in part" in res.out
    got = entries(pending)
    assert got["beta/goals"] == "Ship v2 by March"
    assert (
        got["acme-website/budget"] == "Budget set to 30k"
    )  # the left-out entries never reach the index
    assert got["acme-website/next-steps"] is None
    assert (client / "cards/acme-website.md").read_text() == CARD
    assert git(client, "rev-parse", f"refs/gitmem/partial/{SID}").strip() == view.ref.tip
    assert "partial" in gm("-C", str(client), "review", "--all").out


def test_accept_some_hunks_keeps_their_commit_entry(pending: MemoryRepo, client: Path) -> None:
    res = gm("-C", str(client), "review", SID, "--accept", "--hunks", "1,3")
    assert res.code == 0, res.err
    text = (client / "cards/acme-website.md").read_text()
    assert "Budget: 40k" in text and "Call Bob on Monday" in text
    assert (
        "Owner: Ann" in text and not (client / "cards/beta.md").exists()
    )  # hunks 2 and 4 left out
    got = entries(pending)
    assert got["acme-website/budget"] == "Q3 budget raised to 40k"
    assert got["acme-website/next-steps"] == "Call Bob on Monday; Bob owns the budget"
    assert "beta/goals" not in got
    # the cut-down commit says so in its body and keeps every trailer
    sha = git(client, "log", "--format=%H", "--grep=Call Bob on Monday", "main").split()[0]
    body = git(client, "log", "-1", "--format=%B", sha)
    assert "Accepted in part in review: 1 of 2 hunks." in body
    parsed = git(client, "interpret-trailers", "--parse", input=body.encode())
    assert "Gitmem-Section: next-steps" in parsed and f"Gitmem-Session: {SID}" in parsed
    assert "Gitmem-Summary: Call Bob on Monday; Bob owns the budget" in parsed


def test_hunks_one_at_a_time_like_add_p(pending: MemoryRepo, client: Path) -> None:
    res = gm("-C", str(client), "review", SID, "--accept", "--hunks", stdin="y\nn\n?\ny\nn\n")
    assert res.code == 0, res.err
    assert res.out.count("Accept hunk") == 5 and "leave out this hunk and all the rest" in res.out
    text = (client / "cards/acme-website.md").read_text()
    assert "Budget: 40k" in text and "Call Bob on Monday" in text and "Owner: Ann" in text
    assert not (client / "cards/beta.md").exists()


def test_quitting_the_questions_decides_nothing(pending: MemoryRepo, client: Path) -> None:
    before = snapshot(client)
    res = gm("-C", str(client), "review", SID, "--accept", "--hunks", stdin="y\nq\n")
    assert res.code == 0 and "still pending" in res.out
    assert snapshot(client) == before
    eof = gm("-C", str(client), "review", SID, "--accept", "--hunks", stdin="y\n")
    assert eof.code == 2 and eof.err.count("\n") == 1 and "no answer for hunk 2" in eof.err
    assert snapshot(client) == before


def test_a_hunk_that_needs_a_left_out_one_is_refused(repo: MemoryRepo, client: Path) -> None:
    person_writes(repo)
    s = sessions.start_session(repo, SID)
    for old, new in (("Budget: 30k", "Budget: 40k"), ("Budget: 40k", "Budget: 50k")):
        write_card(
            repo,
            "acme-website",
            old,
            new,
            IndexEntry.make("budget", ["budget"], new),
            session=SID,
            actor="agent",
            branch=s.branch,
        )
    sessions.finish_session(repo, s, "review")
    before = git(client, "rev-parse", "main")
    res = gm("-C", str(client), "review", SID, "--accept", "--hunks", "2")
    assert res.code == 4 and res.err.count("\n") == 1 and "accept both or neither" in res.err
    assert git(client, "rev-parse", "main") == before and load_session(repo, SID).ref.pending


def test_a_hunk_whose_context_a_left_out_commit_changed_lands_with_fuzz(
    repo: MemoryRepo, client: Path
) -> None:
    """The first commit changes "Owner: Ann" (line 5); the second changes "Ann designs"
    (line 8) and "Call Bob" (line 16), two hunks. The hunk at line 8 has "Owner: Bob" as its
    first line of context: accepted without the first commit, that context is not in the
    file, and the hunk lands only by leaving that outer context line out, as `patch` does."""
    person_writes(repo)
    s = sessions.start_session(repo, SID)
    write_card(
        repo,
        "acme-website",
        "Owner: Ann",
        "Owner: Bob",
        IndexEntry.make("budget", ["owner"], "Bob owns it"),
        session=SID,
        actor="agent",
        branch=s.branch,
    )
    team = CARD[CARD.index("Ann designs") :]
    write_card(
        repo,
        "acme-website",
        team,
        team.replace("Ann designs", "Ann leads design").replace("Call Bob", "Call Bob on Monday"),
        IndexEntry.make("team", ["ann", "design"], "Ann leads design"),
        session=SID,
        actor="agent",
        branch=s.branch,
    )
    sessions.finish_session(repo, s, "review")
    shown = json.loads(gm("-C", str(client), "review", SID, "--json").out)
    first, second = shown["files"][0]["commits"]
    assert len(first["hunks"]) == 1 and len(second["hunks"]) == 2
    design = second["hunks"][0]
    assert design["lines"][:4] == [
        " Owner: Bob",
        " ",
        " ## Team",
        "-Ann designs",
    ]  # context from commit 1

    res = gm("-C", str(client), "review", SID, "--accept", "--hunks", str(design["number"]))
    assert res.code == 0, res.err
    assert (client / "cards/acme-website.md").read_text() == CARD.replace(
        "Ann designs", "Ann leads design"
    )
    assert git(client, "show", "main:cards/acme-website.md") == CARD.replace(
        "Ann designs", "Ann leads design"
    )
    got = entries(repo)
    assert got["acme-website/team"] == "Ann leads design"
    assert (
        got["acme-website/budget"] == "Budget set to 30k"
    )  # the left-out commit's entry stays out
    body = git(client, "log", "-1", "--format=%B", "main")
    assert "Accepted in part in review: 1 of 2 hunks." in body


def test_reject_lands_nothing_and_keeps_the_session(pending: MemoryRepo, client: Path) -> None:
    index_before = entries(pending)
    main_before = git(client, "rev-parse", "main")
    tip = git(client, "rev-parse", f"gitmem/session/{SID}").strip()
    res = gm("-C", str(client), "review", SID, "--reject")
    assert res.code == 0 and "rejected" in res.out
    assert git(client, "rev-parse", "main") == main_before
    assert entries(pending) == index_before
    assert git(client, "rev-parse", f"refs/gitmem/rejected/{SID}").strip() == tip
    assert gm("-C", str(client), "review").out == "No sessions waiting for review.\n"
    assert f"{SID}" in gm("-C", str(client), "review", "--all").out
    again = gm("-C", str(client), "review", SID, "--accept")
    assert again.code == 2 and "rejected already" in again.err


def test_main_checked_out_elsewhere_is_left_alone_and_said(
    pending: MemoryRepo, client: Path
) -> None:
    git(client, "checkout", "-q", "-b", "notes")
    res = gm("-C", str(client), "review", SID, "--accept")
    assert res.code == 0, res.err
    assert "your working tree is on branch notes and was left alone" in res.out
    assert (client / "cards/acme-website.md").read_text() == CARD
    assert "Budget: 40k" in git(client, "show", "main:cards/acme-website.md")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["review", "nope-1"], 3, "no session 'nope-1'"),
        (["review", "nope-1", "--accept"], 3, "no session 'nope-1'"),
        (["review", SID, "--accept", "--hunks", "0,5"], 2, "hunk 0, 5 out of range"),
        (["review", SID, "--accept", "--hunks", "x"], 2, "invalid hunk list"),
        (["review", SID, "--accept", "--commit", "abcdef12"], 2, "is not an edit"),
        (["review", SID, "--accept", "--reject"], 2, "not both"),
        (["review", SID, "--hunks", "1"], 2, "add --accept"),
        (["review", "--accept"], 2, "name the SESSION"),
        (["review", "--push", "origin"], 2, "name the SESSION"),
        (["review", SID, "--reject", "--hunks"], 2, "add --accept"),
        (["review", SID, "--accept", "--push", "origin"], 2, "--push only publishes"),
        (["review", SID, "--reject", "--markdown"], 2, "--markdown only shows"),
        (["review", SID, "--markdown", "--push", "origin"], 2, "--markdown only shows"),
        (["review", SID, "--hunks", "--json"], 2, "cannot go with --json"),
        (["review", SID, "--push", "nowhere"], 3, "no remote 'nowhere'"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(
    pending: MemoryRepo, client: Path, args: list[str], code: int, message: str
) -> None:
    before = snapshot(client)
    res = gm("-C", str(client), *args)
    assert res.code == code, res.err
    assert res.err.count("\n") == 1 and message in res.err
    assert snapshot(client) == before


def test_uncommitted_edits_to_a_touched_card_refuse_accept(
    pending: MemoryRepo, client: Path
) -> None:
    (client / "cards/acme-website.md").write_text(CARD + "\nmy own note\n")
    before = snapshot(client)
    res = gm("-C", str(client), "review", SID, "--accept", "--hunks", "1")
    assert res.code == 4 and res.err.count("\n") == 1
    assert "uncommitted edits to cards/acme-website.md" in res.err
    assert snapshot(client) == before
    # a card the accepted part does not touch may be dirty
    ok = gm("-C", str(client), "review", SID, "--accept", "--hunks", "4")
    assert ok.code == 0, ok.err
    assert (client / "cards/acme-website.md").read_text().endswith("my own note\n")


def test_push_a_session_for_a_forge_pull_request(
    pending: MemoryRepo, client: Path, tmp_path: Path
) -> None:
    bare = tmp_path / "forge.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(client, "remote", "add", "forge", str(bare))
    res = gm("-C", str(client), "review", SID, "--push", "forge")
    assert res.code == 0, res.err
    assert f"open a pull request from gitmem/session/{SID} into main" in res.out
    tip = git(client, "rev-parse", f"gitmem/session/{SID}").strip()
    assert git(bare, "rev-parse", f"refs/heads/gitmem/session/{SID}").strip() == tip
    # the commit messages are the PR description: subject, then the index entry
    assert "Gitmem-Summary: Ship v2 by March" in git(
        bare, "log", "--format=%B", f"gitmem/session/{SID}"
    )
    assert "pushed" in gm("-C", str(client), "review").out
    again = gm("-C", str(client), "review", SID, "--push", "forge")
    assert again.code == 0, again.err


lines_st = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "## H\n", "\n", "x\n"]), max_size=25)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    old=lines_st,
    new=lines_st,
    ends=st.sampled_from(["", "", "z", "a"]),
    subset=st.lists(st.booleans(), min_size=30, max_size=30),
)
def test_hunks_apply_like_the_diff_they_come_from(
    tmp_path: Path, old: list[str], new: list[str], ends: str, subset: list[bool]
) -> None:
    old, new = (
        [*old, ends] if len(old) % 2 else old,
        [*new, ends] if len(new) % 3 else new,
    )  # "\ No newline"
    a, b = tmp_path / "a.md", tmp_path / "b.md"
    a.write_text("".join(old))
    b.write_text("".join(new))
    proc = subprocess.run(
        ["git", "diff", "--no-index", "--no-color", "a.md", "b.md"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    files = parse_diff(proc.stdout)
    hunks = [h for f in files for h in f.hunks]
    assert apply_hunks("".join(old), hunks) == "".join(new)
    # shifted by lines above them, hunks anchored by some old line still land where they belong
    if all(h.old for h in hunks):
        assert apply_hunks("top\n" * 3 + "".join(old), hunks) == "top\n" * 3 + "".join(new)
    # any subset applies to the original (each hunk's context comes from it)
    chosen = [h for h, keep in zip(hunks, subset, strict=False) if keep]
    apply_hunks("".join(old), chosen)


def test_a_hunk_at_the_end_of_a_file_of_repeated_lines_lands_at_the_end(tmp_path: Path) -> None:
    """No trailing context: the hunk was made at the end of the file, as `git apply` reads
    it; with the same lines above ("a" four times) only that anchor places it right."""
    (tmp_path / "a.md").write_text("a\na\na\na\n")
    (tmp_path / "b.md").write_text("a\na\na\na\nz")
    proc = subprocess.run(
        ["git", "diff", "--no-index", "--no-color", "a.md", "b.md"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    hunks = [h for f in parse_diff(proc.stdout) for h in f.hunks]
    shifted = "top\n" * 3 + "a\na\na\na\n"
    assert apply_hunks(shifted, hunks) == "top\n" * 3 + "a\na\na\na\nz"
    # a hunk at line 1 stays at the beginning
    (tmp_path / "c.md").write_text("z\na\na\na\na\n")
    proc = subprocess.run(
        ["git", "diff", "--no-index", "--no-color", "a.md", "c.md"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    hunks = [h for f in parse_diff(proc.stdout) for h in f.hunks]
    assert apply_hunks("a\na\na\na\na\na\n", hunks) == "z\na\na\na\na\na\na\n"
