"""The sync command: exchange memory with a git remote."""

from __future__ import annotations

import click

from ..errors import EXIT_CONFLICT, InvalidInput
from .app import Ctx, cli, emit, json_option, pass_ctx


@cli.command()
@click.argument("remote", required=False, default="origin")
@click.option("--continue", "cont", is_flag=True, help="Finish a sync stopped at a conflict.")
@click.option("--abort", "abort", is_flag=True, help="Undo a sync stopped at a conflict.")
@click.option(
    "--accept-redaction",
    "accept_redaction",
    is_flag=True,
    help="Take the remote's history rewritten by `gitmem redact` (local commits re-made on it).",
)
@json_option
@pass_ctx
def sync(ctx: Ctx, remote: str, cont: bool, abort: bool, accept_redaction: bool) -> None:
    """Exchange memory with a git remote (default: origin): fetch, integrate, push.

    Never force-pushes and never drops a local commit. Edits to different cards or
    sections merge silently; the same section edited on both sides stops with a
    report, both versions kept, until `--continue` (after you settle it) or `--abort`.
    Pending sessions travel too: this machine's are published, other machines' are
    listed by `gitmem review` as `remote`, and decisions on them come back. A push
    lost to another machine is retried (fetch, merge, push) a bounded number of times.

    \b
    gitmem sync                 with origin
    gitmem sync backup --json   with the remote named backup, as JSON
    git config gitmem.machine laptop   the name other machines see this one by
    """
    from gitmem.git import progress

    if cont and abort:
        raise InvalidInput("give --continue or --abort, not both")
    with ctx.repo() as repo, progress.shown(progress.watched(ctx.json)):
        if cont:
            from gitmem import continue_sync

            res = continue_sync(repo)
        elif abort:
            from gitmem import abort_sync

            res = abort_sync(repo)
        else:
            from gitmem import sync_repo

            res = sync_repo(repo, remote, accept_redaction=accept_redaction)
    emit(ctx, res.to_json(), res.text)
    if res.status == "conflict":
        raise click.exceptions.Exit(EXIT_CONFLICT)
