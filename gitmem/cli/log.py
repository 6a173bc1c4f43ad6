"""``gitmem log`` and ``gitmem revert``: the audit trail, and undoing what it lists."""

from __future__ import annotations

import sys

import click

from .app import Ctx, cli, emit, json_option, pass_ctx
from .lookup import complete_cards, complete_sessions, require_card


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


@cli.command()
@click.argument("target", metavar="COMMIT|SESSION", shell_complete=complete_sessions)
@click.option("--actor", default="cli", show_default=True)
@click.option("--branch", default="main", show_default=True)
@json_option
@pass_ctx
def revert(ctx: Ctx, target: str, actor: str, branch: str) -> None:
    """Undo one edit (a COMMIT), or every accepted edit of a SESSION, in one commit.

    The commit carries a Gitmem-Reverts trailer per undone commit, so the index
    holds what it held before those edits.
    """
    from gitmem import revert_commit, revert_session
    from gitmem.memory import names
    from gitmem.review.revert_session import is_session

    from ..errors import NotFound

    with ctx.repo() as repo:
        repo.branch_tip(branch)
        if is_session(repo, target):
            done = revert_session(repo, target, branch=branch, actor=actor)
            emit(ctx, done.to_json(), done.text())
            return
        names.check_forbidden(target, "commit")
        if target.startswith("-") or repo.store.resolve(f"{target}^{{commit}}") is None:
            raise NotFound(
                f"no commit or session {target!r}; `gitmem log` lists the commits on "
                f"{branch} and the sessions that made them"
            )
        res = revert_commit(repo, target, branch=branch, actor=actor)
    emit(
        ctx,
        res.to_json(),
        f"reverted {res.reverted[:7]} in {res.commit[:7]} ({', '.join(res.paths)})",
    )
