"""``gitmem edit PROJECT [SECTION]``: a card or section in $EDITOR, saved as one edit commit."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..errors import GitmemError, InvalidInput
from .app import Ctx, cli, emit, json_option, pass_ctx
from .lookup import complete_cards


def _ask(label: str, default: str | None) -> str:
    value: str = click.prompt(label, default=default or None, show_default=bool(default), err=True)
    return value.strip()


def _entry(
    repo: Any,
    project: str,
    section: str | None,
    new_text: str,
    old_text: str,
    branch: str,
    interactive: bool,
    *,
    section_id: str | None,
    keywords: str | None,
    summary: str | None,
) -> Any:
    """The edit's index entry: from the flags, asked for what they leave out when there
    is a terminal (the section guessed from the edit, its keywords the default)."""
    from gitmem import IndexEntry, read_index
    from gitmem.features.editor import changed_section
    from gitmem.memory.cards import sections as card_sections
    from gitmem.memory.names import split_keywords

    guess = section_id or (
        next((s.id for s in card_sections(new_text)), section)
        if section
        else changed_section(old_text, new_text)
    )
    known = read_index(repo, branch).card(project)
    old = next((s for s in known.sections if s.id == guess), None) if known else None
    if interactive:
        guess = guess or _ask("Section (its id, e.g. budget)", None)
        keywords = keywords or _ask(
            "Keywords (comma-separated)", ", ".join(old.keywords) if old else None
        )
        summary = summary or _ask("Summary (what changed)", None)
    missing = [
        f
        for f, v in (("--section", guess), ("--keywords", keywords), ("--summary", summary))
        if not v
    ]
    if missing:
        raise InvalidInput(f"give {', '.join(missing)} for the index entry; nothing was committed")
    assert guess and keywords and summary
    return IndexEntry.make(guess, split_keywords(keywords), summary)


@cli.command()
@click.argument("project", shell_complete=complete_cards)
@click.argument("section", required=False)
@click.option(
    "--section",
    "section_id",
    metavar="ID",
    help="Index entry: the section the edit is about (default: the one edited).",
)
@click.option("--keywords", help="Index entry: comma-separated keywords.")
@click.option("--summary", help="Index entry: one line saying what changed.")
@click.option("--branch", default="main", show_default=True)
@json_option
@pass_ctx
def edit(
    ctx: Ctx,
    project: str,
    section: str | None,
    section_id: str | None,
    keywords: str | None,
    summary: str | None,
    branch: str,
) -> None:
    """Edit a card, or one SECTION of it, in your editor; saving makes one edit commit.

    \b
    gitmem edit acme-website budget          then type the keywords and summary
    gitmem edit acme-website --keywords budget,q3 --summary "Budget raised to 40k"
    EDITOR="code --wait" gitmem edit acme-website

    The editor is $EDITOR, else $VISUAL, else git's (core.editor). The commit
    carries the index entry like any gitmem write: asked for when stdin is a
    terminal (the current keywords are the default), or given with --keywords,
    --summary and --section. Closing the editor without a change commits nothing.
    """
    from gitmem.features.editor import EditOutcome, editor_command, run_editor
    from gitmem.features.editor import load as edit_buffer
    from gitmem.features.editor import save as save_edit
    from gitmem.memory import names
    from gitmem.memory.names import split_keywords

    # Without a terminal to ask in, the entry comes from the flags; a missing one is named
    # after the editor closes (an unchanged buffer needs none), with the text kept.
    interactive = sys.stdin.isatty() and not ctx.json
    if keywords is not None:
        names.keywords(list(split_keywords(keywords)))  # refused before the editor opens
    if summary is not None:
        names.summary(summary)
    if section_id is not None:
        names.section_id(section_id)
    with ctx.repo() as repo:
        buf = edit_buffer(repo, project, section, branch)
        command = editor_command(repo)
        new_text, kept = run_editor(command, buf.initial, project)
        try:
            if new_text == buf.initial:
                kept.unlink(missing_ok=True)
                emit(
                    ctx,
                    EditOutcome(project, section, False, None).to_json(),
                    f"{project}{f' § {section}' if section else ''}: no changes; nothing committed",
                )
                return
            entry = _entry(
                repo,
                project,
                section,
                new_text,
                buf.text or buf.initial,  # a new card: what changed from the template
                branch,
                interactive,
                section_id=section_id,
                keywords=keywords,
                summary=summary,
            )
            done = save_edit(repo, buf, new_text, entry, branch)
        except GitmemError as err:  # one line still: the error, then where the text is
            err.args = (f"{err}; your edited text is kept in {kept}",)
            raise
    kept.unlink(missing_ok=True)
    res = done.result
    assert res is not None
    emit(
        ctx,
        done.to_json(),
        f"{'created' if res.created else 'edited'} {res.card} § {res.section} "
        f"in {res.commit[:7]} on {res.branch}",
    )
    if res.behind:
        click.echo(f"gitmem: warning: {res.behind}", err=True)
