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

    def prompt() -> None:
        if interactive:
            _write("you> ")

    with ctx.repo() as repo:
        res = run_chat(repo, sys.stdin, client=make_client(), write=_write, warn=_warn,
                       resume=resume, session_id=session_id, prompt=prompt)
    _report(ctx, res)


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
        raise ModelError(
            f"no answer in session {res.session}; retry with "
            f"`gitmem ask --resume {res.session} MESSAGE`"
        )


def _report(ctx: Ctx, res: object) -> None:
    from ..chat import ChatResult

    assert isinstance(res, ChatResult)
    state = res.finish.text()
    if ctx.json:
        emit(ctx, res.to_json(), "")
    else:
        click.echo(f"gitmem: session {res.session} ended: {state}", err=True)


@cli.command()
@click.option("--session", "session_id", metavar="ID", help="Only this session.")
@click.option("--cards", "by_card", is_flag=True,
              help="Tokens spent reading each card; sections read most, and never.")
@json_option
@pass_ctx
def usage(ctx: Ctx, session_id: str | None, by_card: bool) -> None:
    """Token and cost report from logs/usage.jsonl, with flags for cache waste.

    \b
    gitmem usage                       per session, then totals and per model
    gitmem usage --session ID          one session
    gitmem usage --json                {"sessions": [...], "total": {...}, "models": [...]}
    gitmem usage --cards               layer E per card across sessions; sections never read
    """
    from .. import usage as usage_mod
    from .. import usage_report

    with ctx.repo() as repo:
        records = usage_mod.load(repo)
        if by_card:
            from .. import index as index_mod
            from ..card_usage import cards_report

            if session_id is not None:
                from ..names import session as check_session

                check_session(session_id)
                records = [r for r in records if r.get("session") == session_id]
            rep = cards_report(records, index_mod.refresh(repo))
            emit(ctx, rep.to_json, rep.render)
            return
    reports = usage_report.report(records, session_id)
    every, models = usage_report.totals(records, session_id)
    emit(
        ctx,
        lambda: {
            "sessions": [r.to_json() for r in reports],
            "total": every.to_json(),
            "models": [m.to_json() for m in models],
        },
        lambda: usage_report.render(reports, (every, models)),
    )


@cli.command()
@click.option("--keep", type=click.Path(file_okay=False), help="Create the demo repo here instead of a temp folder.")
def demo(keep: str | None) -> None:
    """Run a scripted session against a SIMULATED model (no API key): replies, commits, index, usage."""
    from pathlib import Path

    from ..demo import run_demo

    run_demo(_write, Path(keep) if keep else None)
