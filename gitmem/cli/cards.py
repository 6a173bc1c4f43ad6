"""``gitmem cards`` and ``gitmem show``: every card with its sections, size and last change;
one card or section as text."""

from __future__ import annotations

import click

from .app import Ctx, cli, emit, json_option, pass_ctx
from .lookup import complete_cards, require_card


@cli.command()
@click.option("--branch", default="main", show_default=True)
@json_option
@pass_ctx
def cards(ctx: Ctx, branch: str) -> None:
    """List every card with its sections, sizes and the last commit that changed it.

    \b
    gitmem cards
    gitmem cards --json | jq '.[].project'

    A section no index entry describes (a hand edit) is marked "unindexed";
    `gitmem edit PROJECT SECTION` gives it one.
    """
    from gitmem import list_cards
    from gitmem.index.card_list import size
    from gitmem.wording import count

    with ctx.repo() as repo:
        found = list_cards(repo, branch)

    def text() -> str:
        if not found:
            return f"No cards on {branch} yet; the agent's first write creates one."
        lines = []
        for c in found:
            when = (
                f"{c.last_date[:16].replace('T', ' ')} {c.last_commit[:7]}"
                if (c.last_date and c.last_commit)
                else "never committed"
            )
            titled = f" ({c.title})" if c.title and c.title != c.project else ""
            lines.append(
                f"{c.project}{titled}: {count(len(c.sections), 'section')}, {size(c.bytes)}, "
                f"last changed {when}"
            )
            width = max((len(s.id) for s in c.sections), default=0)
            for s in c.sections:
                what = s.summary if s.indexed else f"(unindexed) {s.heading}"
                lines.append(f"  {s.id:<{width}}  {size(s.bytes):>9}  {what}")
        return "\n".join(lines)

    emit(ctx, lambda: [c.to_json() for c in found], text)


@cli.command()
@click.argument("project", shell_complete=complete_cards)
@click.argument("section", required=False)
@click.option("--branch", default="main", show_default=True)
@json_option
@pass_ctx
def show(ctx: Ctx, project: str, section: str | None, branch: str) -> None:
    """Print a card, or one SECTION of it (by id, as listed in `gitmem index`), or the
    passage a search hit's ref points to.

    \b
    gitmem show acme-website budget
    gitmem show 20261130-101200-ab12#3                 a session turn, with its neighbours
    gitmem show acme-website/budget@1a2b3c4d5e6f       a section as that commit wrote it
    """
    from gitmem import read_card

    if section is None and ("#" in project or "/" in project):  # never in a card's name
        from gitmem import open_hit  # (search's modules: only for a hit's ref)

        with ctx.repo() as repo:
            got = open_hit(repo, project, branch=branch)
        emit(ctx, {"ref": got.ref, "date": got.date, "text": got.text}, got.text)
        return
    with ctx.repo() as repo:
        require_card(repo, project, branch)
        text = read_card(repo, project, section, branch=branch)
    emit(ctx, {"project": project, "section": section, "text": text}, text)
