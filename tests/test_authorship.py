"""Trailers are claims: who made an edit, and in which session, is trusted only for the
commits gitmem wrote itself. A person's commit cannot claim the agent or a session
(the commit-msg hook), and a forged one -- made with --no-verify, or by a hostile
remote -- shows its git author in `gitmem log` and is never reverted with a session."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from test_sync import make_pair, sync

from gitmem.features.edit import write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.review import session_branches as sessions

from helpers import git, gm, index_summaries

SID = "20261130-101200-ab12"
CARD = "# Acme website\n\n## Budget\n30k\n\n## Team\nAnn\n\n## Next steps\nCall Bob\n"


def run_session(repo: MemoryRepo, sid: str = SID) -> None:
    """A session of two agent edits, landed on main by the auto policy."""
    s = sessions.start_session(repo, sid)
    for old, new, section in (
        ("30k", "40k", "budget"),
        ("Call Bob", "Call Bob on Monday", "next-steps"),
    ):
        write_card(
            repo,
            "acme-website",
            old,
            new,
            IndexEntry.make(section, ["kw"], f"{section} edited"),
            session=sid,
            actor="agent",
            branch=s.branch,
        )
    assert sessions.finish_session(repo, s, "auto").landed


def forged_message(card: str, section: str, summary: str, *, actor: str = "agent") -> str:
    return (
        f"{card}: {summary}\n\n"
        f"Gitmem-Card: {card}\nGitmem-Section: {section}\nGitmem-Keywords: {section}\n"
        f"Gitmem-Summary: {summary}\nGitmem-Session: {SID}\nGitmem-Actor: {actor}\n"
    )


def commit_as(
    path: Path, who: str, message: str, *extra: str
) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "GIT_AUTHOR_NAME": who, "GIT_COMMITTER_NAME": who}
    return subprocess.run(
        ["git", "commit", "-q", "-a", "-F", "-", *extra],
        cwd=path,
        env=env,
        input=message.encode(),
        capture_output=True,
        check=False,
    )


@pytest.mark.parametrize(
    ("trailers", "refused"),
    [
        (f"Gitmem-Session: {SID}\n", "Gitmem-Session is written by gitmem only"),
        ("Gitmem-Actor: agent\n", "Gitmem-Actor: agent is gitmem's own"),
        ("Gitmem-Actor: Agent\n", "Gitmem-Actor: Agent is gitmem's own"),
        ("Gitmem-Actor: mcp\n", "Gitmem-Actor: mcp is gitmem's own"),
        ("Gitmem-Actor: memory-tool\n", "Gitmem-Actor: memory-tool is gitmem's own"),
        (f"Gitmem-Actor: ann\nGitmem-Session: {SID}\n", "cannot claim a session"),
    ],
)
def test_the_hook_refuses_a_person_claiming_the_agent_or_a_session(
    repo: MemoryRepo, client: Path, trailers: str, refused: str
) -> None:
    write_card(repo, "acme-website", "", CARD, IndexEntry.make("budget", ["budget"], "Budget 30k"))
    head = git(client, "rev-parse", "HEAD")
    (client / "cards/acme-website.md").write_text(CARD.replace("Ann", "Ann, Bob"))
    message = (
        "team: Bob joined\n\nGitmem-Card: acme-website\nGitmem-Section: team\n"
        "Gitmem-Keywords: team\nGitmem-Summary: Bob joined\n" + trailers
    )
    proc = commit_as(client, "Test Person", message)
    assert proc.returncode == 1 and refused in proc.stderr.decode(), proc.stderr
    assert git(client, "rev-parse", "HEAD") == head
    # naming the person (or no actor at all) is how a hand edit describes itself
    ok = commit_as(client, "Test Person", message.replace(trailers, "Gitmem-Actor: ann\n"))
    assert ok.returncode == 0, ok.stderr
    assert index_summaries(repo)["acme-website/team"] == "Bob joined"


def log_of(client: Path) -> list[dict[str, object]]:
    res = gm("-C", str(client), "log", "--json")
    assert res.code == 0, res.err
    data: list[dict[str, object]] = json.loads(res.out)
    return data


def test_a_forged_commit_shows_its_author_and_is_left_out_of_a_session_revert(
    repo: MemoryRepo, client: Path
) -> None:
    write_card(repo, "acme-website", "", CARD, IndexEntry.make("budget", ["budget"], "Budget 30k"))
    run_session(repo)
    (client / "cards/acme-website.md").write_text(
        (client / "cards/acme-website.md").read_text().replace("Ann", "Ann\nZed")
    )
    proc = commit_as(
        client, "Mallory", forged_message("acme-website", "team", "Zed joined"), "--no-verify"
    )
    assert proc.returncode == 0, proc.stderr
    forged = git(client, "rev-parse", "HEAD").strip()

    entries = {e["sha"]: e for e in log_of(client)}
    assert entries[forged]["actor"] == "Mallory" and entries[forged]["session"] is None
    assert entries[forged]["own"] is False and entries[forged]["author"] == "Mallory"
    agents = [e for e in entries.values() if e["actor"] == "agent"]
    assert len(agents) == 2 and all(e["session"] == SID and e["own"] for e in agents)
    line = next(ln for ln in gm("-C", str(client), "log").out.splitlines() if forged[:7] in ln)
    assert "Mallory" in line and SID not in line and "agent" not in line

    res = gm("-C", str(client), "revert", SID, "--json")
    assert res.code == 0, res.err
    reverted = json.loads(res.out)["reverted"]
    assert len(reverted) == 2 and forged not in reverted
    text = (client / "cards/acme-website.md").read_text()
    assert "Zed" in text and "30k" in text and "Call Bob on Monday" not in text
    assert index_summaries(repo)["acme-website/team"] == "Zed joined"
    again = gm("-C", str(client), "revert", SID)
    assert again.code == 3 and "no edits on main left to revert" in again.err


def test_a_session_known_only_from_forged_trailers_is_no_session(
    repo: MemoryRepo, client: Path
) -> None:
    write_card(repo, "acme-website", "", CARD, IndexEntry.make("budget", ["budget"], "Budget 30k"))
    (client / "cards/acme-website.md").write_text(CARD.replace("Ann", "Ann\nZed"))
    assert (
        commit_as(
            client, "Mallory", forged_message("acme-website", "team", "Zed joined"), "--no-verify"
        ).returncode
        == 0
    )
    main = git(client, "rev-parse", "main")
    res = gm("-C", str(client), "revert", SID)
    assert res.code == 3 and res.err.count("\n") == 1
    assert git(client, "rev-parse", "main") == main


def test_a_hostile_remote_cannot_pass_its_commit_off_as_our_session(tmp_path: Path) -> None:
    bare, laptop, _desktop = make_pair(tmp_path)
    with MemoryRepo(laptop) as repo:
        run_session(repo)
    assert sync(laptop)[0] == 0
    other = tmp_path / "mallory"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    (other / "cards/beta.md").write_text(
        (other / "cards/beta.md").read_text().replace("Ship v2", "Ship v9")
    )
    proc = commit_as(other, "Mallory", forged_message("beta", "goals", "Ship v9 now"))
    assert proc.returncode == 0, proc.stderr  # a plain clone has no gitmem hook
    git(other, "push", "-q", "origin", "main")
    forged = git(other, "rev-parse", "HEAD").strip()

    code, out, err = sync(laptop)
    assert code == 0 and "received 1 commit" in out, err
    entry = next(e for e in log_of(laptop) if e["sha"] == forged)
    assert (entry["actor"], entry["session"], entry["own"]) == ("Mallory", None, False)

    res = gm("-C", str(laptop), "revert", SID, "--json")
    assert res.code == 0, res.err
    assert (
        forged not in json.loads(res.out)["reverted"] and len(json.loads(res.out)["reverted"]) == 2
    )
    assert "Ship v9" in (laptop / "cards/beta.md").read_text()
    assert "30k" in (laptop / "cards/acme-website.md").read_text()
    with MemoryRepo(laptop) as repo:
        assert index_summaries(repo)["beta/goals"] == "Ship v9 now"
