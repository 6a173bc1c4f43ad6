"""``gitmem verify``: every memory commit signed by a trusted key, the working tree as
main, no rollback."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..errors import EXIT_FINDINGS
from ..wording import count
from .app import Ctx, cli, emit, json_option, pass_ctx

if TYPE_CHECKING:
    from gitmem import Verification


@cli.command()
@click.option("--since", metavar="REF", help="Check only the commits after REF.")
@json_option
@pass_ctx
def verify(ctx: Ctx, since: str | None) -> None:
    """Check that memory is what gitmem wrote: exit 0 when it is, 1 naming what is not.

    \b
    gitmem verify
    gitmem verify --since 1a2b3c4 --json

    Every commit on main and on the pending session branches must be signed by a
    key this clone trusts (.git/gitmem/allowed_signers, from the tracked
    allowed_signers) and name this client (Gitmem-Client); a commit that carries
    the agent's trailers without such a signature is a forged edit. The memory files
    in the working tree must be as main has them, and main must still contain the
    commit gitmem last left it at (refs/gitmem/seen/main): otherwise it was rolled
    back or rewritten. One line per finding: the commit or file, card § section,
    what is wrong and what to do. Old repos are checked from their first signed
    commit (--since names another point); with signing off there is nothing to check.
    """
    from gitmem import verify_memory

    with ctx.repo() as repo:
        res = verify_memory(repo, since)
    emit(ctx, res.to_json(), lambda: _text(res))
    if not res.verified:
        raise click.exceptions.Exit(EXIT_FINDINGS)


def _text(res: Verification) -> str:
    if res.off:
        return f"signing is off ({res.off}): nothing to verify\n"
    since = f" from {res.start[:7]}" if res.start else ""
    if res.verified_before:
        since = f" after {res.verified_before[:7]}, verified before"
    head = f"{count(res.checked, 'commit')} checked{since}"
    if res.verified:
        return f"verified: {head}, each signed by a trusted key; working tree as main\n"
    lines = [f.line() for f in res.findings]
    return "\n".join([*lines, f"not verified: {count(len(lines), 'finding')}, {head}"]) + "\n"
