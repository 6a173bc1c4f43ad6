"""Commands that talk to the model: chat, ask, demo; and the usage report."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import click

from ..wording import visible
from .app import Ctx, cli, emit, json_option, pass_ctx
from .lookup import complete_sessions

F = TypeVar("F", bound=Callable[..., Any])


def _write(text: str) -> None:
    sys.stdout.write(visible(text))
    sys.stdout.flush()


def _warn(text: str) -> None:
    click.echo(f"gitmem: warning: {text}", err=True)


class _Loading:
    """The SDK's client, made on a thread from the start of the command: the repo is
    opened and the prompt shown while ``import anthropic`` runs; the first use waits."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._made: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._make, args=(make,), daemon=True)
        self._thread.start()

    def _make(self, make: Callable[[], Any]) -> None:
        try:
            self._made = make()
        except BaseException as exc:  # raised where the client is first used
            self._error = exc

    def __getattr__(self, name: str) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return getattr(self._made, name)


def _client(on_retry: Callable[[str], None] | None = None) -> Any:
    """The model's client, loading in the background (a missing key is said at once)."""
    from gitmem import make_client
    from gitmem.agent.client import require_key

    require_key()
    return _Loading(lambda: make_client(on_retry=on_retry))


SIMULATED_HELP = "Talk to the scripted model the demo uses (no API key, nothing sent out)."


def simulated_option(f: F) -> F:
    return click.option("--simulated", is_flag=True, help=SIMULATED_HELP)(f)


@contextlib.contextmanager
def model(
    simulated: bool, on_retry: Callable[[str], None] | None = None, *, announce: bool = True
) -> Iterator[Any]:
    """The model's client: the SDK's (loading in the background), or with ``simulated``
    one bound to the demo's scripted model, served on 127.0.0.1 while the command runs
    (said on stderr unless the caller shows it: ``announce``)."""
    if not simulated:
        yield _client(on_retry)
        return
    from gitmem.fakeapi import FakeAnthropicServer, RuleModel
    from gitmem.fakeapi.rules import LABEL

    if announce:
        click.echo(f"gitmem: {LABEL}", err=True)
    with FakeAnthropicServer(RuleModel()) as server:

        def make() -> Any:
            import anthropic

            from gitmem.agent.usage import SIMULATED_KEY

            return anthropic.Anthropic(
                api_key=SIMULATED_KEY, base_url=server.base_url, max_retries=0
            )

        yield _Loading(make)


@cli.command()
@click.option(
    "--resume",
    metavar="ID",
    shell_complete=complete_sessions,
    help="Continue session ID (after a crash, or to go on).",
)
@click.option("--session", "session_id", metavar="ID", help="Name the new session ID.")
@simulated_option
@json_option
@pass_ctx
def chat(ctx: Ctx, resume: str | None, session_id: str | None, simulated: bool) -> None:
    """A session with the agent. Reads one user turn per line when stdin is not a terminal.

    Replies stream as they arrive. Memory edits go to the session's branch
    gitmem/session/<id>; when the session ends (end of input, Ctrl-D) they land on
    main (review policy "auto") or wait for `gitmem review` ("review").

    With --simulated the replies come from the demo's scripted model, labelled as such,
    with no key; it understands:

    \b
      remember PROJECT HEADING: TEXT      writes a new section to the card
      update PROJECT SECTION: OLD => NEW  replaces OLD with NEW in one section
      recall PROJECT [SECTION]            reads a card, or one section
      search WORDS                        searches memory, past versions included
      a question ending in ?              reads the sections the index points to and answers
      summarize TEXT                      a short synthesis
    """
    from gitmem import build_search_index
    from gitmem.git import progress
    from gitmem.memory import names

    for given in (resume, session_id):  # a bad id is refused before anything is written
        if given is not None:
            names.session(given)
    # built before the first turn, where the person sees it, not in the agent's first search
    with progress.shown(progress.watched(ctx.json)), ctx.repo() as repo:
        build_search_index(repo)
    with _stop_is_an_interrupt():
        _chat(ctx, resume, session_id, simulated)


@contextlib.contextmanager
def _stop_is_an_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP end a chat as Ctrl-C does: the session ends whole (its edits
    land or wait for review, its transcript is committed), then exit 130."""

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    stops = (signal.SIGTERM, signal.SIGHUP)
    old = {sig: signal.signal(sig, interrupt) for sig in stops}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _chat(ctx: Ctx, resume: str | None, session_id: str | None, simulated: bool) -> None:
    interactive = sys.stdin.isatty()
    if interactive and sys.stdout.isatty() and not ctx.json:
        res = _chat_screen(ctx, resume, session_id, simulated)
        _report(ctx, res, None, 0, simulated=simulated)  # never --json: the repo is not needed
        return

    from gitmem import run_chat
    from gitmem.agent.chat_report import first_turn

    def prompt() -> None:
        if interactive:
            _write("you> ")

    with model(simulated) as client, ctx.repo() as repo:
        start = first_turn(repo, resume)
        res = run_chat(
            repo,
            sys.stdin,
            client=client,
            write=_out(ctx),
            warn=_warn,
            resume=resume,
            session_id=session_id,
            prompt=prompt,
        )
        # every turn failed: nothing was answered, and no next line will answer it
        failed = _unanswered(res, "chat") if res.turns and res.failed_turns == res.turns else None
        _report(ctx, res, repo, start, failed, simulated=simulated)
    _fail(ctx, failed)


def _chat_screen(ctx: Ctx, resume: str | None, session_id: str | None, simulated: bool) -> object:
    """The chat in a terminal: banner, Markdown replies, tool lines, footer, slash commands."""
    retrying: list[Callable[[str], None]] = []  # the screen's, once it is made
    on_retry = lambda why: retrying[0](why) if retrying else None  # noqa: E731
    with model(simulated, on_retry, announce=False) as client:
        from rich.console import Console

        from gitmem import run_chat

        from .chat_screen import Screen, history_file, read_lines

        with ctx.repo() as repo:
            screen = Screen(
                Console(highlight=False), footer=repo.config.chat_footer, simulated=simulated
            )
            retrying.append(screen.retrying)
            try:
                return run_chat(
                    repo,
                    read_lines(history_file(repo)),
                    client=client,
                    write=_write,
                    warn=screen.warn,
                    resume=resume,
                    session_id=session_id,
                    events=screen,
                    command=screen.command,
                    on_start=screen.banner,
                )
            finally:
                screen.close()


@cli.command()
@click.argument("message")
@click.option(
    "--resume", metavar="ID", shell_complete=complete_sessions, help="Ask within session ID."
)
@simulated_option
@json_option
@pass_ctx
def ask(ctx: Ctx, message: str, resume: str | None, simulated: bool) -> None:
    """One turn with the agent, then exit (non-zero if the model could not answer).

    With --simulated the demo's scripted model answers (see `gitmem chat --help`).
    """
    from gitmem import run_chat
    from gitmem.agent.chat_report import first_turn
    from gitmem.memory.names import check_utf8

    check_utf8(message, "message")
    if not message.strip():
        from ..errors import InvalidInput

        raise InvalidInput("the message is empty; give the agent something to answer")
    with _stop_is_an_interrupt(), model(simulated) as client, ctx.repo() as repo:
        start = first_turn(repo, resume)
        res = run_chat(
            repo,
            [message],
            client=client,
            write=_out(ctx),
            warn=_warn,
            resume=resume,
            keep_failed=False,
        )
        failed = _unanswered(res, "ask", _kept(res)) if res.failed_turns else None
        _report(ctx, res, repo, start, failed, simulated=simulated)
    _fail(ctx, failed)


def _kept(res: Any) -> str:
    """What a failed ask left of itself, and how to retry it."""
    sid = res.session
    if res.finish.dropped:
        return "nothing was kept: run the same `gitmem ask MESSAGE` again"
    if res.pending:
        return f"your message is kept in session {sid}; `gitmem chat --resume {sid}` answers it"
    return f"your message was not kept; retry with `gitmem ask --resume {sid} MESSAGE`"


def _unanswered(res: Any, command: str, then: str = "") -> Exception:
    """The model never answered: exit 7, naming the endpoint and how to change it."""
    import os

    from ..errors import ModelError

    where = os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com, the default"
    then = then or f"retry with `gitmem {command} --resume {res.session}`"
    return ModelError(
        f"no answer from the model API ({where}; ANTHROPIC_BASE_URL sets another) in session "
        f"{res.session}; {then}"
    )


def _fail(ctx: Ctx, failed: Exception | None) -> None:
    if failed is None:
        return
    if ctx.json:  # the document already says so: no second one
        click.echo(f"gitmem: error: {failed}", err=True)
        raise click.exceptions.Exit(getattr(failed, "exit_code", 1))
    raise failed


def _out(ctx: Ctx) -> Callable[[str], None]:
    """Where the streamed reply goes: the terminal, or (with --json) only the document."""
    return (lambda _text: None) if ctx.json else _write


def _report(
    ctx: Ctx,
    res: object,
    repo: Any,
    start: int,
    failed: Exception | None = None,
    *,
    simulated: bool = False,
) -> None:
    from gitmem import ChatResult
    from gitmem.agent.chat_report import report
    from gitmem.review.render import finish_text

    assert isinstance(res, ChatResult)
    state = finish_text(res.finish)
    if ctx.json:
        doc = report(repo, res, start)
        if failed is not None:
            doc["error"] = {
                "type": type(failed).__name__,
                "message": str(failed),
                "exit_code": getattr(failed, "exit_code", 1),
            }
        if simulated:
            doc["simulated"] = True
        emit(ctx, doc, "")
    else:
        by = " (simulated model)" if simulated else ""
        click.echo(f"gitmem: session {res.session}{by} ended: {state}", err=True)


@cli.command()
@click.option(
    "--session",
    "session_id",
    metavar="ID",
    shell_complete=complete_sessions,
    help="Only this session.",
)
@click.option(
    "--cards",
    "by_card",
    is_flag=True,
    help="Tokens spent reading each card; sections read most, and never.",
)
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
    from gitmem import load_usage, usage_by_session, usage_totals
    from gitmem.agent.usage_report import render

    with ctx.repo() as repo:
        records = load_usage(repo)
        if by_card:
            from gitmem import card_usage, read_index

            if session_id is not None:
                from gitmem.memory.names import session as check_session

                check_session(session_id)
                records = [r for r in records if r.get("session") == session_id]
            rep = card_usage(records, read_index(repo))
            emit(ctx, rep.to_json, rep.render)
            return
    reports = usage_by_session(records, session_id)
    every, models = usage_totals(records, session_id)
    emit(
        ctx,
        lambda: {
            "sessions": [r.to_json() for r in reports],
            "total": every.to_json(),
            "models": [m.to_json() for m in models],
        },
        lambda: render(reports, (every, models)),
    )


@cli.command()
@click.option(
    "--keep",
    type=click.Path(file_okay=False),
    help="Create the demo repo here instead of a temp folder.",
)
def demo(keep: str | None) -> None:
    """Run a scripted session against a SIMULATED model (no API key): replies, commits, index, usage."""
    from pathlib import Path

    from gitmem import run_demo

    run_demo(_write, Path(keep) if keep else None)
