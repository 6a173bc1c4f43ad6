"""``gitmem ui``: memory's state in a local web page."""

from __future__ import annotations

import webbrowser

import click

from .app import Ctx, cli, pass_ctx


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=0, type=int, help="Port (default: a free one).")
@click.option("--token", help="The page's token (else $GITMEM_UI_TOKEN, else a new one).")
@click.option("--open", "open_page", is_flag=True, help="Open the page in the browser.")
@click.option("--read-only", is_flag=True, help="Show memory; serve no action at all.")
@pass_ctx
def ui(ctx: Ctx, host: str, port: int, token: str | None, open_page: bool, read_only: bool) -> None:
    """Serve memory's state as a web page on this machine, until Ctrl-C.

    \b
    gitmem ui --open

    Prints one line with the URL; it carries a one-time token, exchanged for a
    cookie on the first visit. A --host other than loopback needs --token.
    See docs/ui.md.
    """
    from gitmem import serve_ui

    def say(line: str) -> None:
        click.echo(line, err=True)
        if open_page:
            webbrowser.open(line.rsplit(" ", 1)[-1])

    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    with ctx.repo() as repo:
        serve_ui(repo, netloc, token, read_only=read_only, say=say)
