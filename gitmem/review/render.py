"""What ``gitmem review`` prints for people: lines of text, each with a style name; and
how a session's end, a decision and a session's revert read (the CLI, the UI's notices
and the MCP server's log line say them alike).

The CLI prints the text plainly when piped and colours it (with rich) in a
terminal; keeping the styles beside the text keeps both outputs the same words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitmem.features import session_scope
from gitmem.review.changes import by_path
from gitmem.review.pending import NumberedHunk, SessionSummary, SessionView, TokenSizes
from gitmem.wording import count

if TYPE_CHECKING:  # the results shown; their modules are not loaded to show them
    from gitmem.review.decision import Decision
    from gitmem.review.revert_session import SessionRevertResult
    from gitmem.review.session_branches import FinishResult

Line = tuple[str, str]  # (text, rich style; "" for none)

_LINE_STYLE = {"+": "green", "-": "red", "\\": "dim"}


def _when(date: str | None) -> str:
    return date[:16].replace("T", " ") if date else "-"


def list_lines(found: list[SessionSummary], decided: bool) -> list[Line]:
    if not found:
        return [("No sessions yet." if decided else "No sessions waiting for review.", "")]
    width = max(len("SESSION"), *(len(s.id) for s in found))
    head = f"{'SESSION':<{width}}  {'STARTED':<16}  {'EDITS':>5}  {'STATE':<8}  CARDS"
    out: list[Line] = [(head, "bold")]
    for s in found:
        cards = ", ".join(s.cards) or "-"
        came = f"  (from {s.machine} via {s.remote})" if s.remote else ""
        out.append(
            (
                f"{s.id:<{width}}  {_when(s.started):<16}  {s.edits:>5}  {s.state:<8}  {cards}{came}",
                "",
            )
        )
    return out


def hunk_lines(h: NumberedHunk, indent: str = "    ") -> list[Line]:
    out: list[Line] = [(f"{indent}[{h.number}] {h.hunk.header}", "cyan")]
    for ln in h.hunk.lines:
        out.append((f"{indent}    {ln}", _LINE_STYLE.get(ln[:1], "")))
    return out


def entry_line(entry: dict[str, object] | None) -> str:
    if entry is None:
        return "index: (no index entry: a hand edit)"
    kws = entry.get("keywords") or []
    assert isinstance(kws, list)
    summary = entry.get("summary") or "(no summary: listed as unindexed)"
    return f"index: § {entry.get('section')}  [{', '.join(kws)}]  {summary}"


def size_lines(sizes: TokenSizes) -> list[Line]:
    """Tokens before and after, per card and for the I block (a consolidation's review)."""

    def change(a: int, b: int) -> str:
        pct = f" ({(b - a) / a:+.0%})" if a else ""
        return f"{a:,} -> {b:,}{pct}"

    width = max([len("index (I block)"), *(len(c) for c in sizes.cards)])
    out: list[Line] = [("", ""), ("Tokens before -> after (estimated, 4 bytes a token):", "bold")]
    for card, (a, b) in sizes.cards.items():
        out.append((f"  {card:<{width}}  {change(a, b)}", ""))
    out.append((f"  {'index (I block)':<{width}}  {change(*sizes.index)}", ""))
    return out


def show_lines(view: SessionView, sizes: TokenSizes | None = None) -> list[Line]:
    s = view.ref
    cards = view.cards()
    out: list[Line] = [
        (
            f"Session {s.id} ({s.state}): {count(len(view.edits), 'edit')} to "
            f"{count(len(cards), 'card')}, "
            f"started {_when(view.started)}",
            "bold",
        ),
        (f"{s.ref} at {s.tip[:7]}" + (f", based on {view.base[:7]}" if view.base else ""), ""),
    ]
    if s.state == "remote":
        out.append(
            (f"from {s.machine} via {s.remote}: a decision here is sent to {s.remote} first", "")
        )
    why = (
        session_scope.problem(s.id, [c.commit for c in view.commits], view.changes)
        if s.pending
        else None
    )
    if why is not None:
        out.append((f"cannot be accepted: {why}", "red"))
    files = by_path(view.changes)
    out += [("", ""), (f"Files ({len(files)}):", "bold")]
    out += [(f"  {path}: {done}", "" if plain else "red") for path, done, plain in files]
    kinds = {path: done for path, done, plain in files if not plain}
    total = 0
    for path, commits in view.by_file():
        shown = f"{path} ({kinds[path]}: not a line of text)" if path in kinds else path
        out += [("", ""), (shown, "bold")]
        for c, mine in commits:
            total += len(mine)
            state = view.signed.get(c.sha)
            signed = f"  (signature: {state})" if state else ""
            out.append((f"  {c.sha[:7]} {c.commit.subject}{signed}", "yellow"))
            out.append((f"          {entry_line(c.entry())}", "magenta"))
            for h in mine:
                out += hunk_lines(h)
    for c in view.commits:
        if c.transcript:
            added = sum(h.added for f in c.files for h in f.hunks)
            out += [
                ("", ""),
                (f"Transcript {c.sha[:7]}: {c.commit.subject} (+{count(added, 'line')})", ""),
            ]
    if sizes is not None:
        out += size_lines(sizes)
    if s.pending:
        out += [
            ("", ""),
            (f"{count(total, 'hunk')}. Decide with `gitmem review {s.id}` and:", ""),
            ("  --accept                 land everything on main", ""),
            ("  --accept --commit SHA    land only these commits", ""),
            (
                "  --accept --hunks 1,3     land only these hunks (--hunks alone asks one by one)",
                "",
            ),
            ("  --reject                 land nothing", ""),
        ]
    return out


def plain(lines: list[Line]) -> str:
    return "".join(text + "\n" for text, _ in lines)


def finish_text(done: FinishResult) -> str:
    """What happened to a session's memory edits, counted as `gitmem review` does."""
    if done.dropped:
        return "nothing kept"
    edits = count(done.edits, "memory edit")
    why = f" ({done.reason})" if done.reason else ""
    if done.pending and done.edits:
        waits = "waits" if done.edits == 1 else "wait"
        return f"{edits} {waits} for review: `gitmem review {done.session}`{why}"
    if done.pending:
        return f"waits for `gitmem review {done.session}`{why}"
    if done.landed and done.edits:
        return f"{edits} landed on main"
    return "no memory edits"


def decision_text(d: Decision) -> str:
    landed = count(d.edits_landed, "memory edit")
    what = {
        "accepted": f"accepted: {landed} landed on main",
        "partial": f"accepted in part: {landed} landed on main, "
        f"{count(len(d.left_out), 'edit')} left out or cut down",
        "rejected": "rejected: nothing landed on main",
    }[d.action]
    return f"session {d.session} {what}; kept as {d.archived}\n{d.worktree}\n"


def revert_text(r: SessionRevertResult) -> str:
    return (
        f"reverted session {r.session}: {count(len(r.reverted), 'edit')} undone in "
        f"{r.commit[:7]} ({', '.join(r.paths)})"
    )
