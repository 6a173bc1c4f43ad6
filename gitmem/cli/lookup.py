"""Names that exist, for the commands' errors and the shell's completion: cards, clients
and sessions ("no card 'x'; cards: a, b"; `gitmem show <TAB>`)."""

from __future__ import annotations

from typing import Any

import click
from click.shell_completion import CompletionItem


def named(what: str, found: list[str], most: int = 10) -> str:
    """What exists, for a not-found error: "cards: a, b" (or how many, and the command)."""
    if not found:
        return f"there are no {what} yet"
    if len(found) > most:
        return f"{len(found)} {what} exist (`gitmem {what}` lists them)"
    return f"{what}: {', '.join(found)}"


def client_names() -> list[str]:
    """The clients of the workspace ($GITMEM_HOME), by name."""
    from gitmem import list_clients

    try:
        return sorted(c.name for c in list_clients())
    except OSError:
        return []


def card_names(repo: Any, branch: str) -> list[str]:
    """The cards on ``branch``, by name."""
    from gitmem.memory.cards import card_of

    entries = repo.store.read_tree(f"refs/heads/{branch}:cards")
    found = (card_of("cards/" + e.name.decode("utf-8", "replace")) for e in entries)
    return sorted(name for name in found if name)


def require_card(repo: Any, project: str, branch: str) -> None:
    """NotFound naming the cards there are, when ``project`` is not one of them."""
    from gitmem.memory import names
    from gitmem.memory.cards import card_path

    from ..errors import NotFound

    names.project(project)
    repo.branch_tip(branch)  # no such branch: say that, not "no card"
    if repo.store.read_blob(f"refs/heads/{branch}:{card_path(project)}") is None:
        raise NotFound(
            f"no card {project!r} on {branch}; {named('cards', card_names(repo, branch))}"
        )


def shallow_note(repo: Any) -> str | None:
    """What a shallow clone (``git clone --depth``) means for the index, or None.

    An entry lives in the trailers of the commit that last described a section, so a
    section whose commit was not fetched shows as (unindexed) until history is complete.
    """
    if not repo.is_shallow():
        return None
    return (
        "this is a shallow clone (git clone --depth): commits before the ones fetched are "
        "not here, so sections they described show as (unindexed); run "
        "`git fetch --unshallow` to fetch the rest of history, then `gitmem reindex`"
    )


def shallow_notice(repo: Any) -> None:
    """On stderr, what a shallow clone leaves out of the index (``index``, ``reindex``)."""
    note = shallow_note(repo)
    if note:
        click.echo(f"gitmem: note: {note}", err=True)


def _repo(ctx: click.Context) -> Any:
    """The repo a command line being completed names (-C, --client), or None."""
    from ..errors import GitmemError

    state, root = ctx.find_root().obj, ctx.find_root().params  # state: main()'s Ctx
    if state is None:
        return None
    state.path = state.path or root.get("path")  # -C before the subcommand is only a param
    state.client = state.client or root.get("client")
    try:
        return state.repo_open()
    except (GitmemError, OSError):
        return None


def _starting(found: list[str], incomplete: str) -> list[CompletionItem]:
    return [CompletionItem(name) for name in found if name.startswith(incomplete)]


def complete_cards(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[Any]:
    repo = _repo(ctx)
    if repo is None:
        return []
    with repo:
        return _starting(card_names(repo, ctx.params.get("branch") or "main"), incomplete)


def complete_clients(_ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[Any]:
    return _starting(client_names(), incomplete)


def complete_sessions(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[Any]:
    """Sessions gitmem knows: waiting for review first, then decided ones."""
    from gitmem import list_sessions

    repo = _repo(ctx)
    if repo is None:
        return []
    with repo:
        found = list_sessions(repo, decided=True)
    return _starting(list(dict.fromkeys(s.id for s in found)), incomplete)
