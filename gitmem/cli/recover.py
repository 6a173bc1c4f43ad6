"""``gitmem recover``: finish what a crash interrupted (a working-tree update, a redact)."""

from __future__ import annotations

from .app import Ctx, cli, emit, json_option, pass_ctx


@cli.command()
@json_option
@pass_ctx
def recover(ctx: Ctx) -> None:
    """Finish an update of the working tree, or a redact, that a crash interrupted.

    \b
    gitmem recover

    A gitmem write moves the branch first and then updates the card in the working
    tree and git's index; if it was killed in between, every gitmem command (and
    this one explicitly) brings the files up to the branch. A card a person has
    edited since is left as it is. A `gitmem redact` killed before its rewritten
    history was checked is rolled back (nothing had changed); one killed after is
    finished. A review --accept killed after main moved is recorded as accepted.
    Prints what was done.
    """
    from gitmem import finish_decisions, finish_redact
    from gitmem import recover as finish

    with ctx.repo_open() as repo:
        done = finish(repo)
        redact = finish_redact(repo)
        decided = finish_decisions(repo)
    said = ([f"finished {', '.join(done)}"] if done else []) + redact
    said += [f"recorded the acceptance of session {sid}" for sid in decided]
    emit(
        ctx,
        {"finished": done, "redact": redact, "decisions": decided},
        "\n".join(said) or "nothing to finish",
    )
