"""What a review decision lands: a Selection of the session's commits, whole or cut to hunks."""

from __future__ import annotations

from gitmem.features.edit import write_card
from gitmem.features.session_live import transcript_file
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.review import session_branches as sessions
from gitmem.review.decision import Selection, plan_all, plan_commits, plan_hunks
from gitmem.review.pending import load_session

SID = "20261130-101200-ab12"


def test_a_selection_keeps_the_transcript_and_what_was_chosen(repo: MemoryRepo) -> None:
    s = sessions.start_session(repo, SID)
    for project in ("acme", "beta"):
        write_card(
            repo,
            project,
            "",
            "## Goals\nShip v2\n\n## Team\nAnn\n",
            IndexEntry.make("goals", ["roadmap"], f"{project} ships v2"),
            session=SID,
            actor="agent",
            branch=s.branch,
        )
    transcript_file(repo, SID).write_text('{"role": "user", "text": "hi"}\n')
    sessions.finish_session(repo, s, "review")
    view = load_session(repo, SID)
    acme, beta = view.edits
    transcript = {c.sha for c in view.commits if c.transcript}
    assert transcript  # the session's transcript commit
    everything: Selection = plan_all(view)
    assert everything == {c.sha: None for c in view.commits}
    one: Selection = plan_commits(view, [beta.sha[:7]])
    assert one == {**dict.fromkeys(transcript), beta.sha: None}
    first_hunk: Selection = plan_hunks(view, [1])
    # acme's edit has one hunk: chosen whole
    assert set(first_hunk) == {*transcript, acme.sha} and first_hunk[acme.sha] is None
