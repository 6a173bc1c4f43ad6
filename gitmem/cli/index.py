"""``gitmem index`` and ``gitmem reindex``: the index as the agent sees it, rebuilt."""

from __future__ import annotations

import click

from .app import Ctx, cli, emit, json_option, pass_ctx
from .lookup import shallow_notice


@cli.command()
@click.option("--branch", default="main", show_default=True)
@click.option(
    "--budget",
    "show_budget",
    is_flag=True,
    help="Print the index's size against limits.index_tokens instead of the index.",
)
@json_option
@pass_ctx
def index(ctx: Ctx, branch: str, show_budget: bool) -> None:
    """Print the index (layer I) exactly as the agent sees it.

    \b
    gitmem index                 the block, sections marked (unindexed) or (stale)
    gitmem index --json          every card and section: summary, keywords, indexed, stale
    gitmem index --budget        its size in tokens against limits.index_tokens

    Above 80 % of the budget a warning goes to stderr; above 100 % the block keeps every
    section and ends with a line telling the agent, and `gitmem consolidate` is suggested.
    """
    from gitmem import read_index, render_index

    with ctx.repo() as repo:
        text, size = render_index(repo, branch)  # an unknown branch is an error
        if show_budget:
            emit(ctx, size.to_json(), f"Index: {size.line()}")
        elif ctx.json:
            emit(ctx, read_index(repo, branch).to_json, "")
        else:
            emit(ctx, None, text)
        shallow_notice(repo)
    warning = size.warning()
    if warning:
        click.echo(f"gitmem: warning: {warning}", err=True)


@cli.command()
@click.option("--branch", default="main", show_default=True)
@json_option
@pass_ctx
def reindex(ctx: Ctx, branch: str) -> None:
    """Rebuild the index from all of history and report any difference from the cache.

    The search index (`gitmem search`) is rebuilt and compared with its cache too.
    """
    from gitmem import reindex as rebuild

    with ctx.repo() as repo:
        res = rebuild(repo, branch)
        shallow_notice(repo)
    emit(ctx, res.to_json(), res.text())
