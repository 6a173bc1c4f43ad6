"""The review command: agent sessions and the decisions on them."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from ..errors import InvalidInput
from ..wording import visible
from .app import Ctx, cli, emit, json_option, pass_ctx
from .lookup import complete_sessions

if TYPE_CHECKING:
    from gitmem import MemoryRepo

_ASK = "ask"
_HELP = """y - accept this hunk
n - leave this hunk out
a - accept this hunk and all the rest
d - leave out this hunk and all the rest
q - quit; decide nothing, the session stays pending
? - print this help"""


def render(lines: list[tuple[str, str]]) -> str:
    """The lines with ANSI colours (rich) for a terminal, each line's text made visible
    first, so the colours are gitmem's own and what memory says is shown, not obeyed."""
    import io

    from rich.console import Console
    from rich.text import Text

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, highlight=False, soft_wrap=True)
    for text, style in lines:
        console.print(Text(visible(text), style=style or ""))
    return buf.getvalue()


def _print(ctx: Ctx, data: Any, lines: list[tuple[str, str]]) -> None:
    """JSON for --json, colours in a terminal, plain text when piped."""
    from gitmem.review.render import plain

    if sys.stdout.isatty() and "NO_COLOR" not in os.environ:
        emit(ctx, data, lambda: render(lines), styled=True)
    else:
        emit(ctx, data, lambda: plain(lines))


def _numbers(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.replace(" ", ",").split(","):
        if not part:
            continue
        lo, dash, hi = part.partition("-")
        if not (lo.isdigit() and (not dash or hi.isdigit())):
            raise InvalidInput(f"invalid hunk list {spec!r}: use numbers like 1,3 or 2-4")
        out += range(int(lo), int(hi) + 1) if dash else [int(lo)]
    if not out:
        raise InvalidInput("--hunks needs hunk numbers, e.g. --hunks 1,3")
    return out


def _ask(view: Any) -> list[int] | None:
    """Ask about each hunk like `git add -p`; None when the person quits."""
    from gitmem.review.render import entry_line, hunk_lines, plain

    chosen: list[int] = []
    numbered = view.hunks()
    last = None
    for i, h in enumerate(numbered):
        if (h.commit.sha, h.hunk.path) != last:
            last = (h.commit.sha, h.hunk.path)
            click.echo(visible(f"\n{h.hunk.path}  {h.commit.sha[:7]} {h.commit.commit.subject}"))
            click.echo(visible(f"  {entry_line(h.commit.entry())}"))
        click.echo(visible(plain(hunk_lines(h, "  "))), nl=False)
        while True:
            click.echo(f"Accept hunk {h.number}/{len(numbered)} [y,n,a,d,q,?]? ", nl=False)
            answer = sys.stdin.readline()
            if not answer:
                raise InvalidInput(f"no answer for hunk {h.number}; nothing was decided")
            key = answer.strip().lower()[:1]
            if key in ("y", "n", "a", "d", "q"):
                break
            click.echo(_HELP)
        if key == "q":
            return None
        if key in ("y", "a"):
            chosen.append(h.number)
        if key == "a":
            chosen += [x.number for x in numbered[i + 1 :]]
        if key in ("a", "d"):
            break
    return chosen


def _mode(
    session: str | None,
    accept: bool,
    reject: bool,
    commits: tuple[str, ...],
    hunks: str | None,
    push_to: str | None,
    markdown: bool,
) -> str:
    """The one mode a command line asks for (a key of ``_MODES``), or InvalidInput for a
    combination of flags that means none."""
    accept = accept or (hunks == _ASK and not reject)  # a bare --hunks asks, then accepts
    decides = accept or reject or bool(commits) or hunks is not None
    if session is None:
        if decides or push_to:
            raise InvalidInput("name the SESSION to decide on (`gitmem review` lists them)")
        return "list"
    if accept and reject:
        raise InvalidInput("give --accept or --reject, not both")
    if (commits or hunks is not None) and not accept:
        raise InvalidInput("--commit and --hunks choose what --accept lands; add --accept")
    if push_to and decides:
        raise InvalidInput("--push only publishes the session; decide in a separate command")
    if markdown and (decides or push_to):
        raise InvalidInput("--markdown only shows the session; decide in a separate command")
    if push_to:
        return "push"
    if reject:
        return "reject"
    if hunks == _ASK:
        return "ask"
    if accept:
        return "accept"
    return "markdown" if markdown else "show"


@dataclass(frozen=True)
class _Line:
    """What a mode is given: the command line's session and choices."""

    session: str
    show_all: bool
    commits: tuple[str, ...]
    hunks: str | None
    push_to: str | None


def _list(ctx: Ctx, repo: MemoryRepo, line: _Line) -> None:
    from gitmem import list_sessions
    from gitmem.review.render import list_lines

    found = list_sessions(repo, decided=line.show_all)
    _print(ctx, [s.to_json() for s in found], list_lines(found, line.show_all))


def _show(ctx: Ctx, repo: MemoryRepo, line: _Line) -> None:
    """The session, per card and commit, with a consolidation's tokens before and after."""
    from gitmem import is_consolidation, load_session, token_sizes
    from gitmem.review.render import show_lines

    view = load_session(repo, line.session)
    # a consolidation is judged by what it saves: tokens before and after
    sizes = token_sizes(repo, view) if is_consolidation(view.ref.id) else None
    data = view.to_json()
    if sizes is not None:
        data["tokens"] = sizes.to_json()
    _print(ctx, data, show_lines(view, sizes))


def _markdown(ctx: Ctx, repo: MemoryRepo, line: _Line) -> None:
    """The session as its pull request's description."""
    from gitmem import load_session
    from gitmem import session_markdown as as_markdown

    view = load_session(repo, line.session)
    text = as_markdown(repo, view)
    emit(ctx, {**view.to_json(), "markdown": text}, lambda: text)


def _push(ctx: Ctx, repo: MemoryRepo, line: _Line) -> None:
    from gitmem import push_session

    assert line.push_to is not None  # the mode says so
    pushed = push_session(repo, line.session, line.push_to)
    emit(
        ctx,
        pushed.to_json(),
        f"pushed {pushed.branch} ({pushed.commit[:7]}) to {pushed.remote} ({pushed.url}); "
        f"open a pull request from {pushed.branch} into main to review it there\n",
    )


def _reject(ctx: Ctx, repo: MemoryRepo, line: _Line) -> None:
    from gitmem import reject_session
    from gitmem.review.render import decision_text

    done = reject_session(repo, line.session)
    emit(ctx, done.to_json(), lambda: decision_text(done))


def _accept(ctx: Ctx, repo: MemoryRepo, line: _Line) -> None:
    """All of the session, or the commits and hunks the command line names."""
    from gitmem import accept_session
    from gitmem.review.render import decision_text

    numbers = _numbers(line.hunks) if line.hunks is not None else None
    revs = [r for spec in line.commits for r in spec.replace(",", " ").split()]
    done = accept_session(repo, line.session, commits=revs, hunks=numbers)
    emit(ctx, done.to_json(), lambda: decision_text(done))


def _ask_and_accept(ctx: Ctx, repo: MemoryRepo, line: _Line) -> None:
    """Each hunk asked about, then those accepted landed (nothing, when the person quits)."""
    from gitmem import accept_session, pending_session
    from gitmem.review.render import decision_text

    if ctx.json:
        raise InvalidInput("--hunks without numbers asks questions; it cannot go with --json")
    view = pending_session(repo, line.session)
    chosen = _ask(view)
    if chosen is None:
        click.echo(f"nothing decided; session {view.ref.id} is still pending")
        return
    done = accept_session(repo, line.session, hunks=chosen, expect_tip=view.ref.tip)
    emit(ctx, done.to_json(), lambda: decision_text(done))


_MODES: dict[str, Callable[[Ctx, MemoryRepo, _Line], None]] = {
    "list": _list,
    "show": _show,
    "markdown": _markdown,
    "push": _push,
    "reject": _reject,
    "accept": _accept,
    "ask": _ask_and_accept,
}


@cli.command()
@click.argument("session", required=False, shell_complete=complete_sessions)
@click.option("--all", "show_all", is_flag=True, help="List accepted and rejected sessions too.")
@click.option("--accept", is_flag=True, help="Land the session's edits on main.")
@click.option("--reject", is_flag=True, help="Land nothing; keep the session aside.")
@click.option(
    "--commit", "commits", multiple=True, metavar="SHA", help="With --accept: only these commits."
)
@click.option(
    "--hunks",
    is_flag=False,
    flag_value=_ASK,
    default=None,
    metavar="N,N",
    help="With --accept: only these hunks; without numbers, ask about each one.",
)
@click.option("--push", "push_to", metavar="REMOTE", help="Push the session branch to REMOTE.")
@click.option(
    "--markdown", is_flag=True, help="Print SESSION as a pull-request description (Markdown)."
)
@json_option
@pass_ctx
def review(
    ctx: Ctx,
    session: str | None,
    show_all: bool,
    accept: bool,
    reject: bool,
    commits: tuple[str, ...],
    hunks: str | None,
    push_to: str | None,
    markdown: bool,
) -> None:
    """Review agent sessions like pull requests.

    \b
    gitmem review                      sessions waiting for review
    gitmem review ID                   the session: per card, per commit, the diff and index entry
    gitmem review ID --accept          land all of it on main
    gitmem review ID --accept --commit SHA [--commit SHA]
    gitmem review ID --accept --hunks 1,3    only hunks 1 and 3
    gitmem review ID --hunks           asks about each hunk, then lands those accepted
    gitmem review ID --reject
    gitmem review ID --push origin     push gitmem/session/ID to open a pull request
    gitmem review ID --markdown        the pull request's description, to paste into a forge

    Sessions that `gitmem sync` fetched from another machine are listed as `remote`;
    a decision on one is sent to that remote first (the first decision there wins).
    """
    mode = _MODES[_mode(session, accept, reject, commits, hunks, push_to, markdown)]
    line = _Line(session or "", show_all, commits, hunks, push_to)
    with ctx.repo() as repo:
        mode(ctx, repo, line)
