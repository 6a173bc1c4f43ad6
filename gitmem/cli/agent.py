"""Commands that talk to the model: chat, ask, demo; and the usage report."""

from __future__ import annotations

import sys

import click

from . import Ctx, cli, emit, json_option, pass_ctx


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _warn(text: str) -> None:
    click.echo(f"gitmem: warning: {text}", err=True)


@cli.command()
@click.option("--resume", metavar="ID", help="Continue session ID (after a crash, or to go on).")
@click.option("--session", "session_id", metavar="ID", help="Name the new session ID.")
@json_option
@pass_ctx
def chat(ctx: Ctx, resume: str | None, session_id: str | None) -> None:
    """A session with the agent. Reads one user turn per line when stdin is not a terminal.

    Replies stream as they arrive. Memory edits go to the session's branch
    gitmem/session/<id>; when the session ends (end of input, Ctrl-D) they land on
    main (review policy "auto") or wait for `gitmem review` ("review").
    """
    from ..agent import make_client
    from ..chat import run_chat

    interactive = sys.stdin.isatty()
    if interactive and sys.stdout.isatty() and not ctx.json:
        res = _chat_screen(ctx, resume, session_id)
        _report(ctx, res)
        return

    def prompt() -> None:
        if interactive:
            _write("you> ")

    with ctx.repo() as repo:
        res = run_chat(repo, sys.stdin, client=make_client(), write=_write, warn=_warn,
                       resume=resume, session_id=session_id, prompt=prompt)
    _report(ctx, res)


def _chat_screen(ctx: Ctx, resume: str | None, session_id: str | None) -> object:
    """The chat in a terminal: banner, Markdown replies, tool lines, footer, slash commands."""
    from rich.console import Console

    from ..agent import make_client
    from ..chat import run_chat
    from .chat_screen import Screen, history_file, read_lines

    with ctx.repo() as repo:
        screen = Screen(Console(highlight=False), footer=repo.config.chat_footer)
        client = make_client(on_retry=screen.retrying)
        try:
            return run_chat(
                repo, read_lines(history_file(repo)), client=client, write=_write,
                warn=screen.warn, resume=resume, session_id=session_id, events=screen,
                command=screen.command, on_start=screen.banner,
            )
        finally:
            screen.close()


@cli.command()
@click.argument("message")
@click.option("--resume", metavar="ID", help="Ask within session ID.")
@json_option
@pass_ctx
def ask(ctx: Ctx, message: str, resume: str | None) -> None:
    """One turn with the agent, then exit (non-zero if the model could not answer)."""
    from ..agent import make_client
    from ..chat import run_chat
    from ..errors import ModelError
    from ..names import check_utf8

    check_utf8(message, "message")
    with ctx.repo() as repo:
        res = run_chat(repo, [message], client=make_client(), write=_write, warn=_warn, resume=resume)
    _report(ctx, res)
    if res.failed_turns:
        raise ModelError(f"no answer in session {res.session}; retry with --resume {res.session}")


def _report(ctx: Ctx, res: object) -> None:
    from ..chat import ChatResult

    assert isinstance(res, ChatResult)
    fin = res.finish
    if fin.landed:
        state = f"{len(fin.landed)} commit(s) landed on main"
    elif fin.pending:
        state = f"{fin.commits} commit(s) wait for `gitmem review {res.session}`"
        if fin.reason:
            state += f" ({fin.reason})"
    else:
        state = "no memory changes"
    if ctx.json:
        emit(ctx, res.to_json(), "")
    else:
        click.echo(f"gitmem: session {res.session} ended: {state}", err=True)


@cli.command()
@click.option("--session", "session_id", metavar="ID", help="Only this session.")
@json_option
@pass_ctx
def usage(ctx: Ctx, session_id: str | None) -> None:
    """Token and cost report from logs/usage.jsonl, with flags for cache waste."""
    from .. import usage as usage_mod
    from .. import usage_report

    with ctx.repo() as repo:
        reports = usage_report.report(usage_mod.load(repo), session_id)
    emit(ctx, [r.to_json() for r in reports], lambda: usage_report.render(reports))


@cli.command()
@click.option("--keep", type=click.Path(file_okay=False), help="Create the demo repo here instead of a temp folder.")
def demo(keep: str | None) -> None:
    """Run a scripted session against a SIMULATED model (no API key): replies, commits, index, usage."""
    from pathlib import Path

    from ..demo import run_demo

    run_demo(_write, Path(keep) if keep else None)
