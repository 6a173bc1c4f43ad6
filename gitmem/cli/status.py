"""``gitmem status``: branch, uncommitted edits, pending sessions, index, sync state."""

from __future__ import annotations

from .app import Ctx, cli, emit, json_option, pass_ctx


@cli.command()
@json_option
@pass_ctx
def status(ctx: Ctx) -> None:
    """Show the memory repo's state, from this machine only (no network).

    \b
    gitmem status
    gitmem status --json | jq .pending

    The branch checked out; uncommitted edits (a card with one is never written
    over by the agent); sessions waiting for `gitmem review`; sections no index
    entry describes; the size of the index the agent is given; and, per remote,
    what main has to send since the last `gitmem sync` (counted against the refs
    gitmem keeps: a remote is never contacted).
    """
    from gitmem import repo_status as run

    from ..status import lines
    from .lookup import shallow_note

    with ctx.repo() as repo:
        st = run(repo)
        shallow = shallow_note(repo)
    emit(
        ctx,
        lambda: {**st.to_json(), "shallow": shallow},
        lambda: "\n".join([*lines(st), *([f"Note: {shallow}"] if shallow else [])]),
    )
