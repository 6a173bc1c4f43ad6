"""The ``gitmem`` command's click application. Only parsing and printing live here; every command calls a
plain function that takes values and returns a result. A command's module is imported
only when it runs, and heavy modules inside the commands that need them, so ``gitmem
index`` starts fast.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..errors import (
    EXIT_BUG,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    GitmemError,
    InvalidInput,
    from_os_error,
)
from ..wording import visible
from .lookup import complete_clients

if TYPE_CHECKING:
    from gitmem import MemoryRepo

EXIT_CLOSED_STDOUT = 141  # as a shell reports git killed by SIGPIPE
COMPLETE_VAR = "_GITMEM_COMPLETE"  # set by the shell asking for completions
F = TypeVar("F", bound=Callable[..., Any])


class Ctx:
    def __init__(self, path: str | None = None, client: str | None = None) -> None:
        self.path = path
        self.client = client
        self.json = False

    def repo_root(self) -> Path:
        from gitmem import find_repo

        from ..errors import NotARepo, NotFound
        from .lookup import client_names, named

        if self.path and self.client:
            raise InvalidInput("give either -C PATH or --client NAME, not both")
        try:
            return find_repo(self.path or None, client=self.client)
        except NotARepo as err:
            if self.client:
                raise
            raise NotARepo(
                f"{err}; `gitmem init PATH` makes one, -C PATH or --client NAME picks one "
                f"(`gitmem clients` lists the clients)"
            ) from None
        except NotFound as err:
            if not self.client:
                raise
            raise NotFound(f"{err}; {named('clients', client_names())}") from None

    def repo_open(self) -> MemoryRepo:
        """The repo as it is on disk, opened as the API opens it."""
        from gitmem import open_repo

        return open_repo(self.repo_root(), finish_interrupted=False)

    def repo(self) -> MemoryRepo:
        """The repo, with any follow a crash interrupted finished first (see worktree.py)."""
        from gitmem import recover

        repo = self.repo_open()
        done = recover(repo)
        if done:
            click.echo(f"gitmem: finished an interrupted update of {', '.join(done)}", err=True)
        return repo


def json_option(f: F) -> F:
    def set_json(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
        if value:
            ctx.find_object(Ctx).json = True  # type: ignore[union-attr]
        return value

    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        expose_value=False,
        callback=set_json,
        is_eager=True,
        help="Print machine-readable JSON instead of text.",
    )(f)


def emit(ctx: Ctx, data: Any, text: str | Callable[[], str], styled: bool = False) -> None:
    """Print ``text`` for people, or ``data`` as JSON with --json (either may be a callable,
    so the form that is not printed is never built). The text is made visible (a synced
    card's text must not drive a terminal or a pager) unless ``styled``: gitmem's own
    colours around text already made visible (``wording.visible``)."""
    if ctx.json:
        payload = data() if callable(data) else data
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False, sort_keys=True))
    else:
        out = text() if callable(text) else text
        if out:
            out = out if styled else visible(out)
            click.echo(out, nl=not out.endswith("\n"))


pass_ctx = click.make_pass_decorator(Ctx)


def _repo_options(cmd: click.Command) -> None:
    """-C PATH and --client NAME after the subcommand too (`gitmem mcp -C PATH`), as
    before it; a command that has its own option of that name keeps it."""

    def setter(attr: str) -> Callable[[click.Context, click.Parameter, str | None], None]:
        def store(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
            state = ctx.find_object(Ctx)
            if value is not None and state is not None:
                setattr(state, attr, value)

        return store

    taken = {opt for p in cmd.params for opt in getattr(p, "opts", [])}
    if "-C" not in taken:
        cmd.params.append(
            click.Option(
                ["-C", "path_opt"],
                metavar="PATH",
                type=click.Path(file_okay=False),
                expose_value=False,
                callback=setter("path"),
                help="The client memory repo (default: the current directory).",
            )
        )
    if "--client" not in taken:
        cmd.params.append(
            click.Option(
                ["--client", "client_name"],
                metavar="NAME",
                expose_value=False,
                callback=setter("client"),
                shell_complete=complete_clients,
                help="A client in the workspace ($GITMEM_HOME).",
            )
        )


# Which module defines each command, imported when the command runs (or help lists them
# all): `gitmem index` starts within its budget of 3x `import click` (issue 21).
COMMANDS = {
    "ask": "agent",
    "chat": "agent",
    "demo": "agent",
    "usage": "agent",
    "mcp": "bridges",
    "cards": "cards",
    "show": "cards",
    "clients": "clients",
    "clone": "clone",
    "completion": "completion",
    "consolidate": "consolidate",
    "edit": "edit",
    "index": "index",
    "reindex": "index",
    "init": "init",
    "install-hooks": "init",
    "log": "log",
    "revert": "revert",
    "export": "notes",
    "import": "notes",
    "recover": "recover",
    "review": "review",
    "search": "search",
    "sync": "sync",
    "redact": "secrets",
    "scan": "secrets",
    "stale": "stale",
    "status": "status",
    "trust": "trust",
    "ui": "ui",
    "verify": "verify",
    "write": "write",
}


class _Group(click.Group):
    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        _repo_options(cmd)
        super().add_command(cmd, name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(f"gitmem.cli.{COMMANDS[cmd_name]}")  # registers it
        return self.commands.get(cmd_name)


def all_commands() -> dict[str, click.Command]:
    """Every command by name, each one's module imported (help, completion, tests)."""
    ctx = click.Context(cli)
    found = {name: cli.get_command(ctx, name) for name in cli.list_commands(ctx)}
    return {name: cmd for name, cmd in found.items() if cmd is not None}


@click.group(
    cls=_Group,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "-C", "path", metavar="PATH", help="The client memory repo (default: the current directory)."
)
@click.option(
    "--client",
    metavar="NAME",
    shell_complete=complete_clients,
    help="A client in the workspace ($GITMEM_HOME, default ~/gitmem).",
)
@click.version_option(package_name="vibrating-memory", prog_name="gitmem")
@click.pass_context
def cli(ctx: click.Context, path: str | None, client: str | None) -> None:
    """Long-term memory for Claude agents, kept as Markdown cards in git.

    Every edit to memory is one commit whose trailers carry the index entry for
    what changed. Start with `gitmem init PATH`, then `gitmem write`, `gitmem index`
    and `gitmem log`. Every command takes -C PATH (or --client NAME) and --json.
    """
    state = ctx.ensure_object(Ctx)
    state.path, state.client = path, client
    if ctx.invoked_subcommand is None:  # bare `gitmem`: the help, and success
        click.echo(ctx.get_help())


def _report_bug(exc: BaseException, args: list[str] | None = None) -> str:
    """Keep the traceback in the user's own crash log; where it is, for the message."""
    from ..crash import write_report
    from .command_words import command_words

    words = command_words(cli, list(sys.argv[1:] if args is None else args))
    path = write_report(words, exc)
    return str(path) if path else "no crash log: the cache directory is not writable"


def _json_error(kind: str, message: str, exit_code: int, hint: str | None) -> None:
    """The one JSON document a --json command prints on stdout when it fails."""
    error = {"type": kind, "message": message, "exit_code": exit_code, "hint": hint}
    click.echo(json.dumps({"error": error}, sort_keys=True))


def _asks_json(args: list[str]) -> bool:
    """Whether the command line asks for --json (before any ``--``), for an error found
    while it is parsed, before the command has read its options."""
    return "--json" in (args[: args.index("--")] if "--" in args else args)


def _fail(state: Ctx, err: GitmemError) -> int:
    if state.json:
        _json_error(type(err).__name__, str(err), err.exit_code, err.hint)
    click.echo(f"gitmem: error: {visible(str(err))}", err=True)
    if err.hint and sys.stderr.isatty():
        click.echo(f"hint: {visible(err.hint)}", err=True)
    return err.exit_code


def main(argv: list[str] | None = None) -> None:
    """Entry point: the one place that maps errors to exit codes and one-line messages."""
    state = Ctx(None, None)
    instruction = os.environ.get(COMPLETE_VAR)
    if instruction:  # the shell asking for completions (see `gitmem completion`)
        from click.shell_completion import shell_complete

        sys.exit(shell_complete(cli, {"obj": state}, "gitmem", COMPLETE_VAR, instruction))
    args = list(sys.argv[1:] if argv is None else argv)
    before = _ctrl_c_raises()
    try:
        with cli.make_context("gitmem", list(args), obj=state) as ctx:
            cli.invoke(ctx)
        sys.stdout.flush()  # a closed stdout is seen here, not in the interpreter's exit
        code = 0
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.UsageError as exc:  # one line, like every other error
        where = exc.ctx.command_path if exc.ctx else "gitmem"
        if state.json or _asks_json(args):
            _json_error("UsageError", exc.format_message(), exc.exit_code, f"see `{where} --help`")
        click.echo(f"gitmem: error: {exc.format_message()} (see `{where} --help`)", err=True)
        code = exc.exit_code
    except click.ClickException as exc:
        click.echo(f"gitmem: error: {exc.format_message()}", err=True)
        code = exc.exit_code
    except (KeyboardInterrupt, click.exceptions.Abort):
        _restore(before)  # a second Ctrl-C now ends the process at once
        click.echo("gitmem: interrupted", err=True)
        code = EXIT_INTERRUPTED
    except GitmemError as err:
        code = _fail(state, err)
    except Exception as exc:
        known = from_os_error(exc)
        if known is not None:
            code = _fail(state, known)
        elif isinstance(exc, BrokenPipeError) and _stdout_closed():
            code = _quiet_exit()
        else:  # a bug: say so, keep the traceback for the report
            where = _report_bug(exc, args)
            click.echo(
                f"gitmem: unexpected error: {type(exc).__name__}: {exc} (details in {where})",
                err=True,
            )
            code = EXIT_BUG
    finally:
        _restore(before)
    sys.exit(code)


def _ctrl_c_raises() -> Any:
    """Ctrl-C raises KeyboardInterrupt while the command runs, so what it holds (locks,
    a session's branch) is released as it unwinds; the handler before is returned."""
    try:
        before = signal.getsignal(signal.SIGINT)
        if before is not signal.SIG_IGN:  # started with Ctrl-C ignored (nohup, `&`): kept
            signal.signal(signal.SIGINT, signal.default_int_handler)
        return before
    except ValueError:  # not the main thread: signals are the program's business
        return None


def _restore(before: Any) -> None:
    if before is not None:
        signal.signal(signal.SIGINT, before)


def _stdout_closed() -> bool:
    """Whether the reader of stdout has gone (`gitmem log | head -1`)."""
    import select

    try:
        fd = sys.stdout.fileno()
        poll = select.poll()
        poll.register(fd, select.POLLOUT)
        return any(ev & select.POLLERR for _fd, ev in poll.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _quiet_exit() -> int:
    """End as git does when its reader goes: no message, exit 141 (128 + SIGPIPE). What
    is still buffered for stdout is dropped, so the interpreter's exit does not fail on it."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_CLOSED_STDOUT


__all__ = ["EXIT_USAGE", "Ctx", "cli", "emit", "json_option", "main", "pass_ctx"]
