"""The review pages: a pending session like a pull request, and the decision on it made
by the same functions `gitmem review` calls."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gitmem.agent.usage import load_usage
from gitmem.errors import GitmemError, InvalidInput
from gitmem.memory import trailers as T
from gitmem.review.decision import accept_session, pending_session, reject_session
from gitmem.review.markdown import entries_before, session_markdown
from gitmem.review.pending import load_session
from gitmem.wording import visible

if TYPE_CHECKING:
    from gitmem import MemoryRepo
    from gitmem.ops.hunks import Hunk
    from gitmem.review.decision import Decision
    from gitmem.review.pending import ReviewCommit, SessionView


@dataclass(frozen=True)
class Session:
    """What the page shows of a pending session: the view `gitmem review` shows, what the
    session was asked first, each commit's index entry before and after it, and the
    `--markdown` description as that prints it; the models its requests went to (from the usage log); and
    why no decision can be made on it now (the CLI's one-line reason), if so."""

    view: SessionView
    asked: str | None
    before: dict[str, list[str] | None]  # commit sha -> its section's entry before it
    description: str
    models: list[str]
    refusal: str | None


def session(repo: MemoryRepo, sid: str) -> Session:
    refusal = None
    try:  # the check `gitmem review --accept` makes first
        view = pending_session(repo, sid)
    except GitmemError as err:  # a live or decided session is still shown, as the CLI does
        view, refusal = load_session(repo, sid), str(err)
    entry_of = entries_before(repo, view)
    before: dict[str, list[str] | None] = {}
    for c in view.edits:
        key = f"{c.commit.get(T.CARD) or '-'}/{c.commit.get(T.SECTION) or '-'}"
        before[c.sha] = entry_of(key)
    used = [r for r in load_usage(repo) if r.get("session") == view.ref.id]
    models = sorted({str(r["model"]) for r in used if r.get("model")})
    return Session(view, _asked(repo, view), before, _printed(repo, view), models, refusal)


def _printed(repo: MemoryRepo, view: SessionView) -> str:
    """What `gitmem review SESSION --markdown` prints: its text made visible, one newline."""
    text = visible(session_markdown(repo, view))
    return text if text.endswith("\n") else text + "\n"


def _asked(repo: MemoryRepo, view: SessionView) -> str | None:
    """The session's first user message, from its transcript (layer C) commit."""
    saved: list[ReviewCommit] = [c for c in view.commits if c.transcript]
    for c in saved:
        for f in c.files:
            raw = repo.store.read_blob(f"{c.sha}:{f.path}")
            for line in (raw or b"").decode("utf-8", "replace").splitlines():
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if isinstance(rec, dict) and rec.get("role") == "user":
                    return str(rec.get("text") or "")
    return None


def decide(
    repo: MemoryRepo, sid: str, action: str, hunks: list[str], commits: list[str], tip: str
) -> Decision:
    """Accept the ticked hunks or commits (all when none is ticked) or reject the session;
    a refusal is the CLI's one-line GitmemError."""
    if action == "reject":
        return reject_session(repo, sid)
    if action != "accept":
        raise InvalidInput(f"unknown action {action!r}: accept or reject")
    try:
        numbers = [int(n) for n in hunks]
    except ValueError:
        raise InvalidInput("hunk numbers are whole numbers") from None
    return accept_session(repo, sid, commits=commits, hunks=numbers or None, expect_tip=tip or None)


def rows(h: Hunk) -> list[tuple[str, str, str]]:
    """A hunk's lines as a forge shows them: old line number, new line number, the line."""
    old, new, out = h.source_start, h.target_start, []
    for line in h.lines:
        sign = line[:1]
        if sign == "\\":
            out.append(("", "", line))
            continue
        out.append((str(old) if sign != "+" else "", str(new) if sign != "-" else "", line))
        old += sign != "+"
        new += sign != "-"
    return out


Side = tuple[str, str, str]  # line number, text, kind ("ctx", "del", "add" or "" for none)


def split_rows(h: Hunk) -> list[tuple[Side, Side]]:
    """A hunk side by side: context on both sides, each run of removed lines beside the
    added lines that replace it, row by row."""
    out: list[tuple[Side, Side]] = []
    dels: list[Side] = []
    adds: list[Side] = []

    def flush() -> None:
        blank: Side = ("", "", "")
        for n in range(max(len(dels), len(adds))):
            out.append((dels[n] if n < len(dels) else blank, adds[n] if n < len(adds) else blank))
        dels.clear()
        adds.clear()

    for n_old, n_new, line in rows(h):
        sign, text = line[:1], line[1:]
        if sign == "-":
            dels.append((n_old, text, "del"))
        elif sign == "+":
            adds.append((n_new, text, "add"))
        else:
            flush()
            kind = "ctx" if sign == " " else "note"
            out.append(((n_old, text, kind), (n_new, text, kind)))
    flush()
    return out
