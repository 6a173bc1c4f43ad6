"""``gitmem consolidate``: the model proposes a compaction as a session waiting for review."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..wording import count
from .agent import model, simulated_option
from .app import Ctx, cli, emit, json_option, pass_ctx
from .lookup import complete_cards

if TYPE_CHECKING:
    from gitmem import ConsolidateResult


@cli.command()
@click.option(
    "--card",
    metavar="PROJECT",
    shell_complete=complete_cards,
    help="Consolidate this card only (the model may edit only it).",
)
@simulated_option
@json_option
@pass_ctx
def consolidate(ctx: Ctx, card: str | None, simulated: bool) -> None:
    """Ask the model to merge duplicates, compact long sections, resolve contradictions and
    refresh stale summaries, as a session whose edits always wait for review.

    \b
    gitmem consolidate
    gitmem consolidate --card acme-website
    gitmem review ID                   per card and for the index: tokens before and after
    gitmem review ID --accept          nothing lands before this

    Whatever memory.review says, the edits wait on gitmem/session/<id>-consolidate.
    Needs ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL for another endpoint), or --simulated:
    the demo's scripted model, which proposes no edit.
    """
    from gitmem import consolidate as run

    def warn(text: str) -> None:
        click.echo(f"gitmem: warning: {text}", err=True)

    if card is not None:
        from gitmem.memory.names import project

        project(card)
    with model(simulated) as client, ctx.repo() as repo:
        res = run(repo, client=client, card=card, warn=warn)
    by = "(simulated model) " if simulated else ""
    emit(ctx, lambda: {**res.to_json(), "simulated": simulated}, lambda: by + _text(res))


def _text(res: ConsolidateResult) -> str:
    if not res.pending:
        return f"session {res.session}: no edits proposed; memory is unchanged."
    return (
        f"session {res.session}: {count(res.edits, 'edit')} proposed, waiting for "
        f"review: `gitmem review {res.session}` (tokens before and after), then "
        f"`gitmem review {res.session} --accept` or `--reject`"
    )
