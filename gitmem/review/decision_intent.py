"""A decision on a session a remote has, interrupted: finished or undone by the next sync.

Such a decision first claims the session on the remote (``team.claim``), then lands
here. Before the claim it writes ``.git/gitmem/decisions/<id>.json`` (what was decided,
on which tip, the commits or hunks chosen); the last step removes it. A file left
behind means the process stopped in between. The next ``gitmem sync`` (after its
fetch, before it takes in decisions) looks at the remote: if it holds this machine's
claim, the decision is finished here (landed unless ``main`` has it already, then
recorded); if not, the claim never reached it and the file goes: nothing happened.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from gitmem.git.runner import Sha
from gitmem.memory import names
from gitmem.memory import trailers as T
from gitmem.memory.history import read_log
from gitmem.memory.hunks import commit_diffs
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.review.pending import ReviewCommit, SessionRef, SessionView


def _path(repo: MemoryRepo, sid: str) -> Path:
    return repo.private_dir("decisions") / f"{names.session(sid)}.json"


def save(
    repo: MemoryRepo,
    view: SessionView,
    action: str,
    commits: Sequence[str],
    hunks: Sequence[int] | None,
    remote: str,
) -> None:
    data = {
        "session": view.ref.id,
        "action": action,
        "tip": view.ref.tip,
        "base": view.base,
        "remote": remote,
        "state": view.ref.state,
        "ref": view.ref.ref,
        "commits": list(commits),
        "hunks": None if hunks is None else list(hunks),
    }
    path = _path(repo, view.ref.id)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def clear(repo: MemoryRepo, sid: str) -> None:
    _path(repo, sid).unlink(missing_ok=True)


def _view(repo: MemoryRepo, data: dict[str, object]) -> SessionView:
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


def _landed(repo: MemoryRepo, sid: str, base: str) -> bool:
    """Whether main has an edit of the session already (the landing ran before the stop)."""
    return any(c.get(T.SESSION) == sid for c in read_log(repo.git, f"{base}..{MAIN}"))


def finish_interrupted(repo: MemoryRepo, remote: str) -> list[str]:
    """Finish or drop the decisions a stopped process left for ``remote``; the sessions finished."""
    from gitmem.review import decision as decide
    from gitmem.review import team

    folder = repo.git_dir / "gitmem" / "decisions"
    if not folder.is_dir():
        return []
    done = []
    theirs, me = team.view(repo, remote), team.machine(repo)
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        sid, action, tip = str(data["session"]), str(data["action"]), str(data["tip"])
        if data.get("remote") != remote:
            continue
        claimed = theirs.decisions.get(sid) == (action, tip) and theirs.decided_on.get(sid) == me
        local = team.view(repo).decisions.get(sid)
        if not claimed or local is not None:
            path.unlink()  # the claim never reached the remote, or the decision was recorded
            continue
        view = _view(repo, data)
        if action == "rejected":
            team.record(repo, sid, view.ref.tip, action, remote)
            path.unlink()
        else:
            hunks = data.get("hunks")
            commits = data.get("commits") or []
            assert isinstance(commits, list)
            plan = (
                decide.plan_hunks(view, [int(h) for h in hunks])
                if isinstance(hunks, list)
                else decide.plan_commits(view, [str(c) for c in commits])
                if commits
                else decide.plan_all(view)
            )
            chain = (
                []
                if _landed(repo, sid, str(data["base"]))
                else decide.build_chain(repo, view, plan)
            )
            decide.finish_accept(repo, view, chain, action, [])
        done.append(sid)
    return done
