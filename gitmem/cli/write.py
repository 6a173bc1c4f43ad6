"""``gitmem write``: one surgical edit of a card, as one commit."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import InvalidInput
from .app import Ctx, cli, emit, json_option, pass_ctx
from .lookup import complete_cards


def _read_text_file(path: str, what: str) -> str:
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise InvalidInput(f"cannot read {what} file {path}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{what} file {path} is not valid UTF-8") from None


@cli.command()
@click.argument("project", shell_complete=complete_cards)
@click.option(
    "--old",
    "old",
    default=None,
    help="The exact text to replace; must occur once. Empty: create or append.",
)
@click.option("--new", "new", default=None, help="The replacement text.")
@click.option(
    "--old-file",
    type=click.Path(allow_dash=True),
    help="Read old_text from a file ('-' for stdin).",
)
@click.option(
    "--new-file",
    type=click.Path(allow_dash=True),
    help="Read new_text from a file ('-' for stdin).",
)
@click.option(
    "--section", required=True, help="Index entry: the id (slug) of the section this edit is about."
)
@click.option("--keywords", required=True, help="Index entry: comma-separated keywords.")
@click.option("--summary", required=True, help="Index entry: one line saying what changed.")
@click.option("--session", default=None, help="Session id to record in the Gitmem-Session trailer.")
@click.option("--actor", default="cli", show_default=True, help="Who made the edit (Gitmem-Actor).")
@click.option("--branch", default="main", show_default=True, help="The branch to commit to.")
@json_option
@pass_ctx
def write(
    ctx: Ctx,
    project: str,
    old: str | None,
    new: str | None,
    old_file: str | None,
    new_file: str | None,
    section: str,
    keywords: str,
    summary: str,
    session: str | None,
    actor: str,
    branch: str,
) -> None:
    """Edit a card surgically: replace the unique --old text by --new, as one commit.

    \b
    gitmem write acme-website --old "Budget: 30k" --new "Budget: 40k" \\
        --section budget --keywords budget,q3 --summary "Q3 budget raised to 40k"
    gitmem write acme-website --old "" --new-file notes.md --section notes ...

    The commit carries the index entry in Gitmem-* trailers. The target branch is
    moved with compare-and-swap; a checked-out working tree follows, unless the
    card has uncommitted edits (then nothing changes).
    """
    from gitmem import IndexEntry, write_card
    from gitmem.memory.names import split_keywords

    if (old is None) == (old_file is None):
        raise InvalidInput("give exactly one of --old TEXT or --old-file PATH")
    if (new is None) == (new_file is None):
        raise InvalidInput("give exactly one of --new TEXT or --new-file PATH")
    if old_file == "-" and new_file == "-":  # the first would read it all, the second nothing
        raise InvalidInput("--old-file and --new-file cannot both read stdin (-); give one a file")
    old_text = old if old is not None else _read_text_file(str(old_file), "--old-file")
    new_text = new if new is not None else _read_text_file(str(new_file), "--new-file")
    entry = IndexEntry.make(section, split_keywords(keywords), summary)
    with ctx.repo() as repo:
        res = write_card(
            repo, project, old_text, new_text, entry, session=session, actor=actor, branch=branch
        )
    verb = "created" if res.created else "edited"
    emit(
        ctx, res.to_json(), f"{verb} {res.card} § {res.section} in {res.commit[:7]} on {res.branch}"
    )
    if res.behind:
        click.echo(f"gitmem: warning: {res.behind}", err=True)
