"""``gitmem revert``: undoing an edit or a session that ``gitmem log`` lists."""

from __future__ import annotations

import click

from .app import Ctx, cli, emit, json_option, pass_ctx
from .lookup import complete_sessions


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
    from gitmem.review.render import revert_text
    from gitmem.review.revert_session import is_session

    from ..errors import NotFound

    with ctx.repo() as repo:
        repo.branch_tip(branch)
        if is_session(repo, target):
            done = revert_session(repo, target, branch=branch, actor=actor)
            emit(ctx, done.to_json(), revert_text(done))
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
