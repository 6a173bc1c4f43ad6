"""``gitmem recover``: finish what a crash interrupted (a working-tree update, a redact)."""

from __future__ import annotations

import click

from .app import Ctx, cli, emit, json_option, pass_ctx


@cli.command()
@click.option(
    "--remove",
    "remove",
    multiple=True,
    metavar="PATH",
    help="Remove PATH, a name gitmem refuses that main holds (`gitmem status` names them), "
    "in a commit of its own.",
)
@json_option
@pass_ctx
def recover(ctx: Ctx, remove: tuple[str, ...]) -> None:
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

    \b
    gitmem recover --remove 'cards/git~1/config'

    A path an older gitmem let in that a checkout on some system cannot hold (a
    name git keeps for itself, a Windows device name, two names Windows and macOS
    take for one) is left out of the working tree and named by `gitmem status`;
    --remove takes it off main in a commit of its own (`gitmem redact` takes a
    secret out of history too).
    """
    from gitmem import finish_decisions, finish_redact, remove_refused_path
    from gitmem import recover as finish

    with ctx.repo_open() as repo:
        removed = {path: remove_refused_path(repo, path) for path in remove}
        done = finish(repo)
        redact = finish_redact(repo)
        decided = finish_decisions(repo)
    said = [f"removed {path} from main ({sha[:7]})" for path, sha in removed.items()]
    said += ([f"finished {', '.join(done)}"] if done else []) + redact
    said += [f"recorded the acceptance of session {sid}" for sid in decided]
    emit(
        ctx,
        {"removed": removed, "finished": done, "redact": redact, "decisions": decided},
        "\n".join(said) or "nothing to finish",
    )
