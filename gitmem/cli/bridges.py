"""Commands that bridge gitmem memory to other agent hosts: ``gitmem mcp``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from .app import Ctx, cli, pass_ctx

if TYPE_CHECKING:
    from gitmem import MemoryRepo

TOKEN_VAR = "GITMEM_MCP_TOKEN"


@cli.command()
@click.option(
    "--http",
    "address",
    metavar="[HOST:]PORT",
    help="Serve over Streamable HTTP at http://HOST:PORT/mcp instead of stdio "
    "(HOST defaults to 127.0.0.1; a bearer token is required, from $GITMEM_MCP_TOKEN "
    "or generated and printed).",
)
@pass_ctx
def mcp(ctx: Ctx, address: str | None) -> None:
    """Serve the memory tools over MCP on stdin/stdout (for Claude Desktop, Claude Code, IDEs).

    \b
    Tools: read_memory_card, write_memory_card, search_history (the same as in
    `gitmem chat`); resource: gitmem://index, the memory index. Each connection
    is one session on its own branch, landed or left for `gitmem review` by the
    repo's review policy when the client disconnects. With --http the server is
    one session, ended when it stops (Ctrl-C, SIGTERM). See docs/mcp.md.
    """
    if address is not None:
        return _http(ctx, address)
    from gitmem import serve_mcp as serve
    from gitmem.review.render import finish_text

    with ctx.repo() as repo:
        _search_index_built(repo)
        done = serve(repo)
        # said before git's children are waited for: a late stop signal may end us then
        click.echo(f"gitmem mcp: session {done.session} ended: {finish_text(done)}", err=True)


def _http(ctx: Ctx, address: str) -> None:
    from gitmem import serve_mcp_http
    from gitmem.review.render import finish_text

    with ctx.repo() as repo:
        _search_index_built(repo)
        done = serve_mcp_http(
            repo, address, os.environ.get(TOKEN_VAR), say=lambda line: click.echo(line, err=True)
        )
    click.echo(f"gitmem mcp: session {done.session} ended: {finish_text(done)}", err=True)


def _search_index_built(repo: MemoryRepo) -> None:
    """Before the first request, not inside the agent's first search (a copy made by a
    plain git clone has none yet)."""
    from gitmem import build_search_index

    build_search_index(repo)
