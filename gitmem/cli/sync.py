"""The sync command: exchange memory with a git remote."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..errors import EXIT_CONFLICT, InvalidInput
from ..memory.refs import CONFLICT_REMOTE
from ..memory.trust import SIGNERS, shown
from ..wording import count
from .app import Ctx, cli, emit, json_option, pass_ctx

if TYPE_CHECKING:
    from gitmem import SyncResult

SHOWN_UNVERIFIED = 10  # commits listed by name in the text; --json lists them all


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
    emit(ctx, res.to_json(), lambda: _text(res))
    if res.status == "conflict":
        raise click.exceptions.Exit(EXIT_CONFLICT)


def _text(res: SyncResult) -> str:
    r, at = res.remote, (res.main or "")[:7]
    if res.status == "conflict":
        return _conflict(res)
    if res.status == "aborted":
        return f"sync with {r} aborted: main and the working tree are as they were.{res.note}\n"
    if res.status == "up-to-date":
        return f"main is up to date with {r} ({at}).{res.note}\n" + _sessions(res)
    how = ", merged" if res.merged else ""
    return (
        (
            f"synced with {r}: received {count(res.received, 'commit')}, sent {res.sent} "
            f"(main at {at}{how}).{res.note}\n"
        )
        + _sessions(res)
        + _behaviour(res)
        + _held(res)
        + _unverified(res)
    )


def _unverified(res: SyncResult) -> str:
    if not res.unverified:
        return ""
    n = len(res.unverified)
    lines = [
        f"received {count(n, 'commit')} not signed by a key this clone trusts "
        "(`gitmem verify` says what to do):"
    ]
    lines += [
        f"  {u['commit'][:7]} {u['state']}, by {u['author']} on {u['date']}: {u['subject']}"
        for u in res.unverified[:SHOWN_UNVERIFIED]
    ]
    if n > SHOWN_UNVERIFIED:
        lines.append(f"  and {n - SHOWN_UNVERIFIED} more")
    return "\n".join(lines) + "\n"


def _sessions(res: SyncResult) -> str:
    out = ""
    if res.published:
        out += f"published {count(len(res.published), 'pending session')}: {', '.join(res.published)}\n"
    if res.decided:
        out += f"sent the decision on {', '.join(res.decided)}\n"
    if res.settled:
        out += (
            f"decided on another machine, archived here: {', '.join(res.settled)} "
            "(`gitmem review --all`)\n"
        )
    if res.waiting:
        n = len(res.waiting)
        out += (
            f"{count(n, 'session')} from "
            f"{'another machine waits' if n == 1 else 'other machines wait'} "
            f"for review: {', '.join(res.waiting)} (`gitmem review`)\n"
        )
    return out


def _behaviour(res: SyncResult) -> str:
    if not res.behaviour:
        return ""
    paths, files = res.behaviour, " ".join(res.behaviour)
    joined = paths[0] if len(paths) == 1 else f"{', '.join(paths[:-1])} and {paths[-1]}"
    they = "they change" if len(paths) > 1 else "it changes"
    return (
        f"{joined} changed by {res.remote}: {they} how the agent behaves; "
        f"see what changed with `git diff {(res.before or '')[:12]} {(res.main or '')[:12]} "
        f"-- {files}`\n"
    )


def _held(res: SyncResult) -> str:
    out = ""
    for h in res.held:
        proposed = h["proposed"]
        if h["key"] == SIGNERS and isinstance(proposed, list):
            out += (
                f"{res.remote}'s allowed_signers adds {count(len(proposed), 'signer')}, "
                "held: their commits do not verify here until you trust them with "
                "`gitmem trust signers`:\n" + "".join(f"  {k}\n" for k in proposed)
            )
    held = [h for h in res.held if h["key"] != SIGNERS]
    if not held:
        return out
    lines = [
        f"{res.remote}'s gitmem.toml weakens what protects this machine; "
        "this machine keeps its own values until you accept them:"
    ]
    lines += [
        f"  {h['key']} = {shown(h['applies'])} applies ({res.remote} says {shown(h['proposed'])})"
        for h in held
    ]
    lines.append("accept them here with `gitmem trust` (`gitmem trust --help` says more)")
    return out + "\n".join(lines) + "\n"


def _conflict(res: SyncResult) -> str:
    remote = res.remote
    lines = [f"sync with {remote} stopped: the same part of memory was edited here and there:"]
    lines += [f"  {c.label():<40}  {c.path}" for c in res.conflicts]
    lines += [
        f"Both versions are kept: this machine's in main, {remote}'s in {CONFLICT_REMOTE}.",
        res.note.strip() or "main is not checked out: commit the resolution on main.",
        "Keep what you want of both, then run `gitmem sync --continue`;",
        "`gitmem sync --abort` puts everything back as it was.",
    ]
    return "\n".join(lines) + "\n"
