"""``gitmem search QUERY``: what the agent's search_history tool sees."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

import click

from ..errors import InvalidInput
from .app import Ctx, cli, emit, json_option, pass_ctx

if TYPE_CHECKING:
    from gitmem import MemoryRepo


@cli.command()
@click.argument("query", nargs=-1, required=True)
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(1, 50),
    default=10,
    show_default=True,
    help="At most N hits.",
)
@click.option("--branch", default="main", show_default=True)
@click.option(
    "--as-of",
    callback=lambda _ctx, _param, value: _day(value),  # refused before any index is built
    metavar="YYYY-MM-DD",
    help="Search what memory held on that day: the sections as they were then.",
)
@json_option
@pass_ctx
def search(ctx: Ctx, query: tuple[str, ...], limit: int, branch: str, as_of: str | None) -> None:
    """Search memory as the agent's search_history tool does: card § section with a snippet.

    \b
    gitmem search budget
    gitmem search acme invoice -n 5
    gitmem search "call bob" --json
    gitmem search acme hosting --as-of 2025-06-01

    The hits are the ones the tool returns, in its order: card sections (current or
    past, with the commit that wrote them) and turns of past sessions (session, turn,
    speaker). A past value's or a turn's ref opens it whole: the agent's
    read_memory_card(ref=...). Dates in the words ("in June", "last week") are matched
    against when things were said or written.
    """
    from gitmem import search_history as run
    from gitmem.git import progress
    from gitmem.memory.names import check_utf8
    from gitmem.search.snippets import lines

    text = " ".join(query)
    check_utf8(text, "query")
    if not text.strip():
        raise InvalidInput("the query is empty; give words to search for")
    with progress.shown(progress.watched(ctx.json)), ctx.repo() as repo:
        _first_build_said(ctx, repo, branch)
        hits = run(repo, text, limit, branch=branch, as_of=as_of)
    emit(
        ctx,
        lambda: {"query": text, "hits": [h.to_json() for h in hits]},
        lambda: "\n".join(lines(hits)) if hits else f"No matches for {text!r}.",
    )


def _day(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        if len(value) == 10:
            return date.fromisoformat(value).isoformat()
    except ValueError:
        pass
    raise click.BadParameter(f"{value!r} is not a date; give it as YYYY-MM-DD (2026-03-01)")


def _first_build_said(ctx: Ctx, repo: MemoryRepo, branch: str) -> None:
    """A copy with no search index yet (made before clone and init built one): it is
    built now, from all of history, and the person is told why this search is slow."""
    from gitmem import search_index_ready

    if not ctx.json and not search_index_ready(repo, branch):
        click.echo(
            "gitmem: no usable search index in this copy (none yet, damaged, or from another "
            "version): building it from history (once; `gitmem reindex` builds it ahead)",
            err=True,
        )
