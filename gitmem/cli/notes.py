"""``gitmem import`` and ``gitmem export``: bring notes in as cards, write cards out."""

from __future__ import annotations

from pathlib import Path

import click

from .app import Ctx, cli, emit, json_option, pass_ctx

_KINDS = ("markdown", "claude-code", "memory-tool", "basic-memory")


@cli.command("import")
@click.argument("source", type=click.Path(path_type=Path))
@click.option(
    "--from",
    "kind",
    type=click.Choice(_KINDS),
    default=None,
    help="The kind of SOURCE (default: detected).",
)
@click.option(
    "--dry-run", is_flag=True, help="Print the plan (cards, sections, problems); change nothing."
)
@click.option(
    "--skip-problems",
    is_flag=True,
    help="Import the notes that have no problem; report the others.",
)
@json_option
@pass_ctx
def import_(ctx: Ctx, source: Path, kind: str | None, dry_run: bool, skip_problems: bool) -> None:
    """Make each note of SOURCE a card: one commit per card (Gitmem-Actor: import).

    SOURCE is a folder of Markdown notes, Claude Code memory (a project with CLAUDE.md,
    or an auto-memory folder with MEMORY.md and its topic files), an Anthropic
    memory-tool directory (DIR/memories/...), or a basic-memory project. Each section
    gets an index entry with keywords from its heading and no summary: it is listed
    unindexed until summarised. Name clashes, existing cards and unreadable files
    (symlinks, bad UTF-8, too big) stop the import before anything is written.

    \b
    Examples:
      gitmem import ~/notes --dry-run
      gitmem import ~/code/myproject --from claude-code
      gitmem import ./memory                  # memory-tool base_path (memory/memories/)
    """
    from gitmem import import_notes

    with ctx.repo() as repo:
        res = import_notes(repo, source, kind=kind, dry_run=dry_run, skip=skip_problems)
    emit(ctx, res.to_json, res.describe)


@cli.command("export")
@click.argument("dest", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "--layout",
    type=click.Choice(["plain", "memory-tool"]),
    default="plain",
    show_default=True,
    help="plain: DIR/<card>.md; memory-tool: all of cards/ as DIR/memories/...",
)
@click.option("--force", is_flag=True, help="Overwrite files that exist in DIR.")
@click.option("--branch", default="main", show_default=True)
@json_option
@pass_ctx
def export(ctx: Ctx, dest: Path, layout: str, force: bool, branch: str) -> None:
    """Write every card out as a Markdown file (the card's text, byte for byte).

    \b
    Examples:
      gitmem export ~/backup/acme
      gitmem export ./memory --layout memory-tool   # for BetaLocalFilesystemMemoryTool
    """
    from gitmem import export_cards

    with ctx.repo() as repo:
        res = export_cards(repo, dest, layout, force=force, branch=branch)
    emit(ctx, res.to_json, res.describe)
