"""``gitmem revert SESSION``: undo every accepted edit of a session in one commit.

The session's edits on main are the commits gitmem wrote for it, as recorded in
``.git/gitmem/own-commits`` and carrying its ``Gitmem-Session`` trailer; a commit
that only carries the trailer (a person's, a remote's) is never one of them. Its
transcript stays: it records what was said, not what memory holds.
One commit reverts them all, newest first, and names each in its own
``Gitmem-Reverts`` trailer, so the index replay undoes exactly their entries.
Edits already undone by an earlier revert are left alone.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from gitmem.errors import Conflict, InvalidInput, NotFound
from gitmem.features.revert import revert_tree
from gitmem.git.runner import Sha
from gitmem.index import build as index
from gitmem.memory import names
from gitmem.memory import trailers as T
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops.history import Commit, read_log
from gitmem.ops.publish import PlannedCommit, commit_plan, publish
from gitmem.review.pending import landed_by_session, session_refs
from gitmem.wording import count


@dataclass(frozen=True)
class SessionRevertResult:
    """A session revert's commit, the session's commits it undid, the paths it changed."""

    session: str
    commit: Sha
    reverted: list[str]
    paths: list[str]

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def is_session(repo: MemoryRepo, target: str) -> bool:
    """Whether ``target`` names a session gitmem knows (a decided one, or one with edits on main)."""
    try:
        names.session(target)
    except InvalidInput:
        return False
    found = session_refs(repo).get(target)
    if found is not None:
        return True
    if repo.store.resolve(f"{target}^{{commit}}") is not None:
        return False
    own = repo.own_commits()
    return any(c.get(T.SESSION) == target and c.sha in own for c in _log(repo, MAIN))


def _log(repo: MemoryRepo, branch: str) -> list[Commit]:
    tip = repo.tip(branch)
    return read_log(repo.git, tip, reverse=True) if tip else []


def landed_edits(repo: MemoryRepo, session_id: str, branch: str = MAIN) -> list[Commit]:
    """The session's edits on ``branch`` that are in effect now, oldest first."""
    landed, replay = landed_by_session(repo, branch)
    mine = landed.get(session_id, [])
    return [c for c in mine if c.sha not in replay.inactive and len(c.parents) == 1]


def _message(session_id: str, commits: list[Commit], actor: str) -> str:
    listed = "\n".join(f"  {c.sha[:12]} {c.subject}" for c in reversed(commits))
    trailers = "\n".join(f"{T.REVERTS}: {c.sha}" for c in reversed(commits))
    return (
        f"Revert session {session_id}\n\n"
        f"This reverts {count(len(commits), 'edit')} of session {session_id}:\n{listed}\n\n"
        f"{trailers}\n{T.ACTOR}: {actor}\n"
    )


def revert_session(
    repo: MemoryRepo, session_id: str, *, branch: str = MAIN, actor: str = "cli"
) -> SessionRevertResult:
    """Undo every edit of session ``session_id`` still in effect on ``branch`` in one
    commit (a ``Gitmem-Reverts`` trailer per commit). Returns a ``SessionRevertResult``.
    Raises ``InvalidInput`` (the session still waits for review), ``NotFound`` (no edits
    of it left to revert), ``Conflict`` (a section changed since)."""
    sid, actor = names.session(session_id), names.actor(actor)
    pend = session_refs(repo).get(sid)
    if pend is not None and pend.pending:
        raise InvalidInput(
            f"session {sid} is waiting for review and nothing of it landed; "
            f"`gitmem review {sid} --reject` sets it aside"
        )
    commits = landed_edits(repo, sid, branch)
    if not commits:
        raise NotFound(f"session {sid} has no edits on {branch} left to revert")
    pairs: list[tuple[Sha | None, Sha | None]] = [(c.sha, c.parents[0]) for c in reversed(commits)]
    message = _message(sid, commits, actor)

    def plan(tip: Sha, _root: Sha) -> PlannedCommit:
        try:
            tree, paths = revert_tree(repo, tip, pairs)
        except Conflict as err:
            raise Conflict(f"session {sid} cannot be reverted cleanly: {err}") from None
        return commit_plan(repo, tip, tree, paths, message)

    done = publish(repo, branch, plan, f"gitmem revert session: {sid}")
    assert done is not None
    index.refresh(repo, branch)
    return SessionRevertResult(sid, done.commit, [c.sha for c in commits], done.paths)
