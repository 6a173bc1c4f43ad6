"""``gitmem clients``: the clients in the workspace."""

from __future__ import annotations

from .app import Ctx, cli, emit, json_option, pass_ctx


@cli.command()
@json_option
@pass_ctx
def clients(ctx: Ctx) -> None:
    """List the clients in the workspace ($GITMEM_HOME) with their last memory edit.

    \b
    gitmem clients
    gitmem clients --json

    A session's transcript and usage commits are not memory edits: the date and
    summary are those of the last change to a card (or of the repo's creation).
    """
    from gitmem import list_clients, workspace_home

    found = list_clients()

    def text() -> str:
        if not found:
            return f"No clients in {workspace_home()} yet; create one with `gitmem init --client NAME`."
        width = max(len("CLIENT"), *(len(c.name) for c in found))
        rows = [f"{'CLIENT':<{width}}  {'LAST EDIT':<16}  SUMMARY"]
        for c in found:
            when = c.last_activity[:16].replace("T", " ") if c.last_activity else "never"
            rows.append(f"{c.name:<{width}}  {when:<16}  {c.last_subject or '-'}".rstrip())
        return "\n".join(rows)

    emit(ctx, [c.to_json() for c in found], text)
