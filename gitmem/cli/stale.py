"""``gitmem stale``: stale entries, unindexed, untouched, wrong-looking and duplicate sections."""

from __future__ import annotations

import click

from .app import Ctx, cli, emit, json_option, pass_ctx


@cli.command()
@click.option(
    "--days",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Untouched means N days or more (default: hygiene.untouched_days, 90).",
)
@json_option
@pass_ctx
def stale(ctx: Ctx, days: int | None) -> None:
    """What in memory may no longer be true, or is there twice (main's tip).

    \b
    gitmem stale                 stale entries, unindexed sections, sections untouched
                                 for 90 days, summaries naming numbers or dates the
                                 section lacks, near-duplicate sections across cards
    gitmem stale --days 30
    gitmem stale --json          {"stale": [...], "unindexed": [...], "untouched": [...],
                                  "numbers": [...], "duplicates": [...]}

    An entry is stale when its section changed after the summary was written (a hand
    edit, a merge, a partial accept). `gitmem consolidate` asks the model to fix these
    as a session that waits for `gitmem review`.
    """
    from gitmem import stale_report

    with ctx.repo() as repo:
        rep = stale_report(repo, days=days)
    emit(ctx, rep.to_json, lambda: "\n".join(rep.lines()))
