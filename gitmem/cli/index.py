"""``gitmem index`` and ``gitmem reindex``: the index as the agent sees it, rebuilt."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..errors import InvalidInput
from ..wording import count
from .app import Ctx, cli, emit, json_option, pass_ctx
from .lookup import shallow_notice

if TYPE_CHECKING:
    from gitmem import ReindexResult


@cli.command()
@click.option("--branch", default="main", show_default=True)
@click.option(
    "--budget",
    "show_budget",
    is_flag=True,
    help="Print the index's size against limits.index_tokens and how it is folded.",
)
@click.option("--full", is_flag=True, help="Print every section, folded or not.")
@json_option
@pass_ctx
def index(ctx: Ctx, branch: str, show_budget: bool, full: bool) -> None:
    """Print the index (layer I) exactly as the agent sees it.

    \b
    gitmem index                 the block, sections marked (unindexed) or (stale)
    gitmem index --full          every card with every section, as within budget
    gitmem index --json          every card and section: summary, keywords, indexed, stale
    gitmem index --budget        its size in tokens against limits.index_tokens, and the
                                 split: cards listed in full, cards and sections folded

    Over the budget the block is folded to fit: every card keeps a line (or its name),
    the most recently changed cards list their sections. Above 80 % of the budget a
    warning goes to stderr; when even the names do not fit, the block keeps them all and
    ends with a line telling the agent, and `gitmem consolidate` is suggested.
    """
    if show_budget and full:
        raise InvalidInput("--budget and --full print different things; give one of them")
    from gitmem import read_index, render_index

    with ctx.repo() as repo:
        text, size = render_index(repo, branch)  # an unknown branch is an error
        if show_budget:
            split = f"\nSplit: {size.split.line()}" if size.split else ""
            emit(ctx, size.to_json(), f"Index: {size.line()}{split}")
        elif ctx.json:
            emit(ctx, read_index(repo, branch).to_json, "")
        elif full:
            emit(ctx, None, read_index(repo, branch).render())
        else:
            emit(ctx, None, text)
        shallow_notice(repo)
    warning = size.warning()
    if warning and not full:
        click.echo(f"gitmem: warning: {warning}", err=True)


@cli.command()
@click.option("--branch", default="main", show_default=True)
@json_option
@pass_ctx
def reindex(ctx: Ctx, branch: str) -> None:
    """Rebuild the index from all of history and report any difference from the cache.

    The search index (`gitmem search`) is rebuilt and compared with its cache too,
    with progress on a terminal.
    """
    from gitmem import reindex as rebuild
    from gitmem.git import progress

    with progress.shown(progress.watched(ctx.json)), ctx.repo() as repo:
        res = rebuild(repo, branch)
        shallow_notice(repo)
    emit(ctx, res.to_json(), _reindexed(res))


def _reindexed(res: ReindexResult) -> str:
    msg = f"Reindexed {count(res.cards, 'card')}, {count(res.sections, 'section')}: "
    if res.matches_cache:
        said = "cache matched" if res.had_cache else "no cache before"
        if res.search_index != ("matched" if res.had_cache else "no cache before"):
            said += f"; search index: {res.search_index}"  # the two caches differ
        return msg + said + "."
    return msg + "cache differed and was replaced:\n" + "\n".join(f"  {d}" for d in res.differences)
