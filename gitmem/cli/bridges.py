"""Commands that bridge gitmem memory to other agent hosts: ``gitmem mcp``."""

from __future__ import annotations

import click

from .app import Ctx, cli, pass_ctx


@cli.command()
@pass_ctx
def mcp(ctx: Ctx) -> None:
    """Serve the memory tools over MCP on stdin/stdout (for Claude Desktop, Claude Code, IDEs).

    \b
    Tools: read_memory_card, write_memory_card, search_history (the same as in
    `gitmem chat`); resource: gitmem://index, the memory index. Each connection
    is one session on its own branch, landed or left for `gitmem review` by the
    repo's review policy when the client disconnects. See docs/mcp.md.
    """
    from gitmem import serve_mcp as serve

    with ctx.repo() as repo:
        done = serve(repo)
        # said before git's children are waited for: a late stop signal may end us then
        click.echo(f"gitmem mcp: session {done.session} ended: {done.text()}", err=True)
