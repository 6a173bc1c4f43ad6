"""``gitmem scan`` and ``gitmem redact``: secrets in memory and in its history."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..errors import EXIT_FINDINGS
from .app import Ctx, cli, emit, json_option, pass_ctx

if TYPE_CHECKING:
    from gitmem import Redaction, ScanResult


@cli.command()
@click.option("--history", is_flag=True, help="Scan what every commit added, on every ref.")
@json_option
@pass_ctx
def scan(ctx: Ctx, history: bool) -> None:
    """Find secrets (API keys, tokens, private keys, passwords) in memory.

    Without --history: the cards, persona, synthesis and transcripts on main.
    With --history: every commit of every branch and session ref (what it adds,
    the names of files it creates, its message), each finding named by commit,
    card, section and kind (never the secret itself, not even in a file's name).
    Exits 1 when something is found, 0 when nothing is, so scripts can rely on it.

    Example: gitmem scan --history --json
    """
    from gitmem import scan_secrets as run

    with ctx.repo() as repo:
        res = run(repo, history=history)
    emit(ctx, res.to_json(), lambda: _scanned(res))
    if res.hits:
        raise click.exceptions.Exit(EXIT_FINDINGS)


@cli.command()
@click.option(
    "--push", "push", metavar="REMOTE", help="Publish the redacted main (force-with-lease)."
)
@json_option
@pass_ctx
def redact(ctx: Ctx, push: str | None) -> None:
    """Rewrite history so every secret `gitmem scan --history` finds becomes [REDACTED:<kind>].

    Refused while anything is uncommitted (nothing is rewritten: commit or stash
    first), and while a session is running (`gitmem mcp`, a chat: end it first).
    Each secret is replaced whole, in every file, commit message and file
    name (a card named by a secret becomes redacted-<kind>-<n>), on main and the
    session refs, by git-filter-repo in a scratch repository; the result is scanned
    again before any ref moves. Trailers, the index and gitmem's record of its own
    commits are kept. What was redacted is recorded under refs/gitmem/redactions/<n>
    and as a note on the new tip. Interrupted, `gitmem recover` rolls it back or
    finishes it. Nothing leaves this machine until --push REMOTE, which pushes main
    with --force-with-lease on the tip last synced; other clones then run
    `gitmem sync --accept-redaction`.

    Example: gitmem redact && gitmem redact --push origin
    """
    from gitmem import redact_secrets as run

    with ctx.repo() as repo:
        res = run(repo, push=push)
    emit(ctx, res.to_json(), lambda: _redacted(res))


def _scanned(res: ScanResult) -> str:
    if not res.hits:
        return f"no secrets found in {'history' if res.history else 'main'}.\n"
    lines = []
    for h in res.hits:
        at = f"{h.commit[:7]} " if h.commit else ""
        sec = f" § {h.section}" if h.section else ""
        where = f"line {h.line}" if h.line else "in its name"
        lines.append(f"{at}{h.path}{sec} {where}: {h.kind}")
    lines.append(
        f"{len(res.hits)} finding(s); remove them from history with `gitmem redact`"
        if res.history
        else f"{len(res.hits)} finding(s); edit them out, then `gitmem scan --history`"
    )
    return "\n".join(lines) + "\n"


def _redacted(res: Redaction) -> str:
    first = "".join(f"{n}.\n" for n in res.notes)
    if res.record is None:
        return first + "no secrets found in history: nothing to redact.\n"
    kinds = sorted({str(f["kind"]) for f in res.findings})
    out = first + (
        f"redacted {len(res.findings)} finding(s) ({', '.join(kinds)}); main "
        f"{(res.main_before or '')[:7]} -> {(res.main_after or '')[:7]}; "
        f"recorded in {res.record}.\n"
    )
    if res.pushed:
        return out + (
            f"pushed to {res.pushed} (force-with-lease); "
            "other clones run `gitmem sync --accept-redaction`.\n"
        )
    return out + "nothing was pushed: publish with `gitmem redact --push REMOTE`.\n"
