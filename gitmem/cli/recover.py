"""``gitmem recover``: finish an update of the working tree a crash interrupted."""

from __future__ import annotations

from .app import Ctx, cli, emit, json_option, pass_ctx


@cli.command()
@json_option
@pass_ctx
def recover(ctx: Ctx) -> None:
    """Finish an update of the working tree that a crash interrupted.

    \b
    gitmem recover

    A gitmem write moves the branch first and then updates the card in the working
    tree and git's index; if it was killed in between, every gitmem command (and
    this one explicitly) brings the files up to the branch. A card a person has
    edited since is left as it is. Prints what was finished.
    """
    from gitmem import recover as finish

    with ctx.repo_open() as repo:
        done = finish(repo)
    emit(ctx, {"finished": done}, f"finished {', '.join(done)}" if done else "nothing to finish")
