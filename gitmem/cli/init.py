"""``gitmem init`` and ``gitmem install-hooks``: a client memory repo set up."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import InvalidInput
from .app import Ctx, cli, emit, json_option, pass_ctx


@cli.command()
@click.argument("path", required=False)
@click.option("--client", "client_opt", metavar="NAME", help="Create it in the workspace as NAME.")
@click.option(
    "--signing-key",
    metavar="FILE",
    type=click.Path(dir_okay=False, exists=True),
    help="Sign with this SSH private key (default: this machine's, made when missing).",
)
@json_option
@pass_ctx
def init(ctx: Ctx, path: str | None, client_opt: str | None, signing_key: str | None) -> None:
    """Create a client memory repo at PATH (or, with --client NAME, in the workspace).

    The repo starts from gitmem's template: gitmem.toml, persona.md, synthesis.md,
    cards/, sessions/, logs/, a first commit on `main`, and gitmem's hooks.

    A folder with files, or an existing git repo, is adopted: its history is kept,
    gitmem's files are added in one commit, and any of them that exists already
    (persona.md, gitmem.toml, cards/) is kept as it is and reported. A repo on
    another branch (e.g. master) gets `main` created at its tip and checked out;
    uncommitted changes are refused, never touched.

    \b
    Examples:
      gitmem init ~/clients/acme
      gitmem init .                  # adopt the current folder or repo
    """
    from gitmem import build_search_index, client_path, init_repo, open_repo
    from gitmem.git import progress

    ctx.client = client_opt or ctx.client
    path = path or ctx.path  # `gitmem -C PATH init`, as `git -C PATH init`
    if path and ctx.client:
        raise InvalidInput("give either PATH or --client NAME, not both")
    if not path and not ctx.client:
        raise InvalidInput("gitmem init needs a PATH or --client NAME")
    target = client_path(ctx.client) if ctx.client else Path(path or ".")
    res = init_repo(target, ctx.client, Path(signing_key) if signing_key else None)
    # an adopted repo's history can be long: its search index is built here, watched
    with progress.shown(progress.watched(ctx.json)), open_repo(res.path) as repo:
        build_search_index(repo)
    emit(ctx, res.to_json(), res.describe())


@cli.command("install-hooks")
@json_option
@pass_ctx
def install_hooks(ctx: Ctx) -> None:
    """Install gitmem's git hooks (a fresh clone has none); keeps foreign hooks as .legacy."""
    from gitmem import install_hooks as install

    actions = install(ctx.repo_root())
    emit(ctx, [a.__dict__ for a in actions], "\n".join(f"{a.hook}: {a.action}" for a in actions))
