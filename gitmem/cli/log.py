"""``gitmem log``: the audit trail."""

from __future__ import annotations

import sys

import click

from .app import Ctx, cli, emit, json_option, pass_ctx
from .lookup import complete_cards, require_card


@cli.command()
@click.argument("project", required=False, shell_complete=complete_cards)
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    help="Show the newest N entries; 0 shows all of history.",
)
@click.option(
    "--all", "show_all", is_flag=True, help="Also show transcript, usage and synthesis commits."
)
@click.option("--branch", default="main", show_default=True)
@json_option
@pass_ctx
def log(ctx: Ctx, project: str | None, limit: int, show_all: bool, branch: str) -> None:
    """The audit trail: who changed which card and section, when, in which session, and why.

    \b
    gitmem log                  the newest 50 memory edits
    gitmem log acme-website     edits to one card
    gitmem log --all -n 0       every commit, transcripts and usage included

    Memory edits only by default: the commits that save a session's transcript, its
    usage lines or the synthesis are shown with --all. The AUTHOR column (git's
    author) appears when someone other than gitmem's own identity made a commit.
    In a terminal the lines are fitted to its width; piped, they are never cut.
    """
    from gitmem import audit_log
    from gitmem.cli.log_text import render
    from gitmem.wording import count

    with ctx.repo() as repo:
        entries = audit_log(
            repo,
            project,
            branch=branch,
            limit=(limit + 1) if limit else None,
            edits_only=not show_all,
        )
        if project is not None and not entries:  # a card removed since keeps its history
            require_card(repo, project, branch)
    more = bool(limit) and len(entries) > limit
    entries = entries[:limit] if limit else entries

    def text() -> str:
        if not entries:
            return f"No memory edits to {project} on {branch}." if project else "No commits."
        import shutil

        width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
        lines = render(entries, width)
        if more:
            lines.append(
                f"(the newest {count(limit, 'entry', 'entries')}; `gitmem log -n 0` shows all)"
            )
        return "\n".join(lines)

    emit(ctx, lambda: [e.to_json() for e in entries], text)
