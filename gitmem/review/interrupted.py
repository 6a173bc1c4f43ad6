"""Decisions a stopped process left half-done (``decision_intent``): finished from the
record it wrote before it began, on the next ``gitmem sync`` (a session claimed on a
remote) or by ``gitmem recover`` (a session of this clone)."""

from __future__ import annotations

from gitmem.git.runner import Sha
from gitmem.memory.repo import MemoryRepo
from gitmem.ops.history import read_log
from gitmem.ops.hunks import commit_diffs
from gitmem.review import decision_intent, team
from gitmem.review.decision import (
    build_chain,
    finish_accept,
    landed_already,
    plan_all,
    plan_commits,
    plan_hunks,
)
from gitmem.review.pending import ReviewCommit, SessionRef, SessionView


def _intended(repo: MemoryRepo, data: dict[str, object]) -> SessionView:
    """The session as it was reviewed: its commits from base to tip, whatever refs say now."""
    s = SessionRef(
        str(data["session"]),
        str(data["state"]),
        str(data["ref"]),
        Sha(str(data["tip"])),
        str(data["remote"]),
    )
    base = str(data["base"])
    commits = read_log(repo.git, f"{base}..{s.tip}", reverse=True, first_parent=True)
    diffs = commit_diffs(repo, Sha(base), s.tip)
    return SessionView(
        s, Sha(base), tuple(ReviewCommit(c, tuple(diffs.get(c.sha, ()))) for c in commits)
    )


def finish_interrupted(repo: MemoryRepo, remote: str) -> list[str]:
    """Finish or drop the decisions a stopped process left for ``remote``
    (``decision_intent``); the sessions finished."""
    done: list[str] = []
    left = decision_intent.left(repo, remote)
    if not left:  # the common case: no git asked (each sync round comes here)
        return done
    theirs, me = team.view(repo, remote), team.machine(repo)
    for data in left:
        sid, action, tip = str(data["session"]), str(data["action"]), str(data["tip"])
        claimed = theirs.decisions.get(sid) == (action, tip) and theirs.decided_on.get(sid) == me
        if not claimed or team.view(repo).decisions.get(sid) is not None:
            decision_intent.clear(repo, sid)  # the claim never reached the remote, or recorded
            continue
        view = _intended(repo, data)
        if action == "rejected":
            team.record(repo, sid, view.ref.tip, action, remote)
            decision_intent.clear(repo, sid)
        else:
            hunks = data.get("hunks")
            commits = data.get("commits") or []
            assert isinstance(commits, list)
            plan = (
                plan_hunks(view, [int(h) for h in hunks])
                if isinstance(hunks, list)
                else plan_commits(view, [str(c) for c in commits])
                if commits
                else plan_all(view)
            )
            chain = (
                []
                if landed_already(repo, sid, str(data["base"]))
                else build_chain(repo, view, plan)
            )
            finish_accept(repo, view, chain, action, [])
        done.append(sid)
    return done


def finish_decisions(repo: MemoryRepo) -> list[str]:
    """Finish the decisions that a stopped process left: an acceptance whose landing
    reached main is recorded (a session a remote has was claimed there before it
    landed); one of this clone's own sessions that never got so far is dropped (the
    session is still pending), one claimed on a remote is left for the next sync, which
    asks the remote. The sessions finished."""
    done = []
    for data in decision_intent.left(repo):
        sid = str(data["session"])
        if data["action"] != "rejected" and landed_already(repo, sid, str(data["base"])):
            finish_accept(repo, _intended(repo, data), [], str(data["action"]), [])
            done.append(sid)
        elif data["remote"] == "":
            decision_intent.clear(repo, sid)
    return done
