"""The review pages: a pending session like a pull request, and the decision on it made
by the same functions `gitmem review` calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitmem.errors import InvalidInput
from gitmem.review.decision import accept, pending, reject

if TYPE_CHECKING:
    from gitmem import MemoryRepo
    from gitmem.review.decision import Decision
    from gitmem.review.pending import SessionView


def session(repo: MemoryRepo, sid: str) -> SessionView:
    return pending(repo, sid)


def decide(repo: MemoryRepo, sid: str, action: str, hunks: list[str], tip: str) -> Decision:
    """Accept the chosen hunks (all when none is chosen) or reject the session; a refusal
    is the CLI's one-line GitmemError."""
    if action == "reject":
        return reject(repo, sid)
    if action != "accept":
        raise InvalidInput(f"unknown action {action!r}: accept or reject")
    try:
        numbers = [int(n) for n in hunks]
    except ValueError:
        raise InvalidInput("hunk numbers are whole numbers") from None
    return accept(repo, sid, hunks=numbers or None, expect_tip=tip or None)
