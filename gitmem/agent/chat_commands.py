"""What the chat's slash commands do, as plain functions over a running session.

``/undo`` reverts the session's last edit still in effect, on the session's own
branch (one revert commit, like ``gitmem revert``); ``/review``, ``/usage`` and
``/index`` show the session as ``gitmem review``, ``gitmem usage`` and the model see it.
"""

from __future__ import annotations

from dataclasses import dataclass

from gitmem.agent import usage, usage_report
from gitmem.errors import NotFound
from gitmem.features.revert import revert_commit
from gitmem.index import build as index
from gitmem.memory import trailers as T
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops.history import Commit, read_log
from gitmem.review import pending as review
from gitmem.review import render as review_text
from gitmem.review.session_branches import Session

HELP = [
    ("/review", "this session's edits so far, as `gitmem review` shows them"),
    ("/usage", "tokens and cost of this session so far"),
    ("/index", "the memory index as the model sees it"),
    ("/undo", "revert this session's last edit (again: the one before)"),
    ("/end", "end the session (as Ctrl-D does)"),
    ("/help", "this list"),
]


@dataclass(frozen=True)
class Undone:
    card: str
    section: str | None
    reverted: str  # the edit's commit
    commit: str  # the revert's

    @property
    def where(self) -> str:
        return f"{self.card} § {self.section}" if self.section else self.card

    def note(self) -> str:
        """What the model is told with the next turn."""
        return (
            f"The person undid your edit of {self.where} (commit {self.reverted[:7]}) with /undo; "
            "memory no longer has it. Read the card again before relying on it."
        )


def edits_in_effect(repo: MemoryRepo, session: Session) -> list[Commit]:
    """The session's card edits on its branch that no later commit there reverted, oldest first."""
    tip = repo.tip(session.branch)
    if tip is None:
        return []
    log = read_log(repo.git, f"{MAIN}..{tip}", reverse=True, first_parent=True)
    undone = {sha for c in log for sha in c.reverts}
    return [c for c in log if c.get(T.CARD) and not c.reverts and c.sha not in undone]


def undo_last(repo: MemoryRepo, session: Session) -> Undone:
    edits = edits_in_effect(repo, session)
    if not edits:
        raise NotFound(f"session {session.id} has no edit left to undo")
    last = edits[-1]
    done = revert_commit(repo, last.sha, branch=session.branch, actor="cli", session=session.id)
    return Undone(last.get(T.CARD) or "", last.get(T.SECTION), last.sha, done.commit)


def review_lines(repo: MemoryRepo, session: Session) -> list[tuple[str, str]]:
    if not edits_in_effect(repo, session):
        return [(f"session {session.id} has no memory edits in effect", "")]
    return review_text.show_lines(review.load_session(repo, session.id))


def usage_text(repo: MemoryRepo, session: Session) -> str:
    try:
        return usage_report.render(
            usage_report.usage_by_session(usage.load_usage(repo), session.id)
        )
    except NotFound:
        return f"no model usage recorded yet in session {session.id}\n"


def index_text(repo: MemoryRepo, session: Session) -> str:
    return index.refresh(repo, session.branch).render()
