"""``gitmem clone URL [PATH | --client NAME]``: a memory repo from a remote, ready to use."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import InvalidInput
from .app import Ctx, cli, emit, json_option, pass_ctx


@cli.command()
@click.argument("url")
@click.argument("path", required=False)
@click.option("--client", "client_opt", metavar="NAME", help="Clone into the workspace as NAME.")
@click.option(
    "--signing-key",
    metavar="FILE",
    type=click.Path(dir_okay=False, exists=True),
    help="Sign with this SSH private key (default: this machine's, made when missing).",
)
@json_option
@pass_ctx
def clone(
    ctx: Ctx, url: str, path: str | None, client_opt: str | None, signing_key: str | None
) -> None:
    """Clone a memory repo: main checked out, gitmem's hooks installed, the index and
    the search index built (with progress on a terminal).

    \b
    gitmem clone git@example.com:me/acme-memory.git
    gitmem clone https://example.com/acme-memory.git ~/notes/acme
    gitmem clone ../acme.git --client acme      (into the workspace, $GITMEM_HOME)

    Works when the remote's HEAD names a branch it does not have (a bare repo
    that only `gitmem sync` pushed to): main is checked out all the same.
    """
    from gitmem import build_search_index, client_path, clone_repo, open_repo
    from gitmem.git import progress
    from gitmem.setup.clone import default_path as default_clone_path

    name = client_opt or ctx.client
    if path and name:
        raise InvalidInput("give either PATH or --client NAME, not both")
    target = client_path(name) if name else Path(path) if path else default_clone_path(url)
    with progress.shown(progress.watched(ctx.json)):
        res = clone_repo(url, target, Path(signing_key) if signing_key else None)
        with open_repo(res.path) as repo:  # here, not in the agent's first search
            build_search_index(repo)
    emit(
        ctx,
        res.to_json(),
        f"Cloned {url} into {res.path}: main at {res.commit[:7]}, "
        f"{res.cards} card{'' if res.cards == 1 else 's'}, hooks installed",
    )
