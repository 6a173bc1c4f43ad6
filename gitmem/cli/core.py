"""Commands over the memory repo itself: init, clients, write, show, index, log, revert."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import InvalidInput
from .app import Ctx, cli, emit, json_option, pass_ctx


def _read_text_file(path: str, what: str) -> str:
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise InvalidInput(f"cannot read {what} file {path}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{what} file {path} is not valid UTF-8") from None


@cli.command()
@click.argument("path", required=False)
@click.option("--client", "client_opt", metavar="NAME", help="Create it in the workspace as NAME.")
@json_option
@pass_ctx
def init(ctx: Ctx, path: str | None, client_opt: str | None) -> None:
    """Create a client memory repo at PATH (or, with --client NAME, in the workspace).

    The repo starts from gitmem's template: gitmem.toml, persona.md, synthesis.md,
    cards/, sessions/, logs/, a first commit on `main`, and gitmem's hooks.

    A folder with files, or an existing git repo, is adopted: its history is kept,
    gitmem's files are added in one commit, and any of them that exists already
    (persona.md, gitmem.toml, cards/) is kept as it is and reported. A repo on
    another branch (e.g. master) gets `main` created at its tip and checked out;
    uncommitted changes are refused, never touched.

    \b
    Examples:
      gitmem init ~/clients/acme
      gitmem init .                  # adopt the current folder or repo
    """
    from gitmem import client_path, init_repo

    ctx.client = client_opt or ctx.client
    path = path or ctx.path  # `gitmem -C PATH init`, as `git -C PATH init`
    if path and ctx.client:
        raise InvalidInput("give either PATH or --client NAME, not both")
    if not path and not ctx.client:
        raise InvalidInput("gitmem init needs a PATH or --client NAME")
    target = client_path(ctx.client) if ctx.client else Path(path or ".")
    res = init_repo(target, ctx.client)
    emit(ctx, res.to_json(), res.describe())


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
    from gitmem import list_clients
    from gitmem import workspace_home as home

    found = list_clients()

    def text() -> str:
        if not found:
            return f"No clients in {home()} yet; create one with `gitmem init --client NAME`."
        width = max(len("CLIENT"), *(len(c.name) for c in found))
        rows = [f"{'CLIENT':<{width}}  {'LAST EDIT':<16}  SUMMARY"]
        for c in found:
            when = c.last_activity[:16].replace("T", " ") if c.last_activity else "never"
            rows.append(f"{c.name:<{width}}  {when:<16}  {c.last_subject or '-'}".rstrip())
        return "\n".join(rows)

    emit(ctx, [c.to_json() for c in found], text)


@cli.command("install-hooks")
@json_option
@pass_ctx
def install_hooks(ctx: Ctx) -> None:
    """Install gitmem's git hooks (a fresh clone has none); keeps foreign hooks as .legacy."""
    from gitmem import install_hooks as install

    actions = install(ctx.repo_root())
    emit(ctx, [a.__dict__ for a in actions], "\n".join(f"{a.hook}: {a.action}" for a in actions))


@cli.command()
@click.argument("project")
@click.option(
    "--old",
    "old",
    default=None,
    help="The exact text to replace; must occur once. Empty: create or append.",
)
@click.option("--new", "new", default=None, help="The replacement text.")
@click.option(
    "--old-file",
    type=click.Path(allow_dash=True),
    help="Read old_text from a file ('-' for stdin).",
)
@click.option(
    "--new-file",
    type=click.Path(allow_dash=True),
    help="Read new_text from a file ('-' for stdin).",
)
@click.option(
    "--section", required=True, help="Index entry: the id (slug) of the section this edit is about."
)
@click.option("--keywords", required=True, help="Index entry: comma-separated keywords.")
@click.option("--summary", required=True, help="Index entry: one line saying what changed.")
@click.option("--session", default=None, help="Session id to record in the Gitmem-Session trailer.")
@click.option("--actor", default="cli", show_default=True, help="Who made the edit (Gitmem-Actor).")
@click.option("--branch", default="main", show_default=True, help="The branch to commit to.")
@json_option
@pass_ctx
def write(
    ctx: Ctx,
    project: str,
    old: str | None,
    new: str | None,
    old_file: str | None,
    new_file: str | None,
    section: str,
    keywords: str,
    summary: str,
    session: str | None,
    actor: str,
    branch: str,
) -> None:
    """Edit a card surgically: replace the unique --old text by --new, as one commit.

    \b
    gitmem write acme-website --old "Budget: 30k" --new "Budget: 40k" \\
        --section budget --keywords budget,q3 --summary "Q3 budget raised to 40k"
    gitmem write acme-website --old "" --new-file notes.md --section notes ...

    The commit carries the index entry in Gitmem-* trailers. The target branch is
    moved with compare-and-swap; a checked-out working tree follows, unless the
    card has uncommitted edits (then nothing changes).
    """
    from gitmem import IndexEntry, write_card
    from gitmem.memory.names import split_keywords

    if (old is None) == (old_file is None):
        raise InvalidInput("give exactly one of --old TEXT or --old-file PATH")
    if (new is None) == (new_file is None):
        raise InvalidInput("give exactly one of --new TEXT or --new-file PATH")
    old_text = old if old is not None else _read_text_file(str(old_file), "--old-file")
    new_text = new if new is not None else _read_text_file(str(new_file), "--new-file")
    entry = IndexEntry.make(section, split_keywords(keywords), summary)
    with ctx.repo() as repo:
        res = write_card(
            repo, project, old_text, new_text, entry, session=session, actor=actor, branch=branch
        )
    verb = "created" if res.created else "edited"
    emit(
        ctx, res.to_json(), f"{verb} {res.card} § {res.section} in {res.commit[:7]} on {res.branch}"
    )
    if res.behind:
        click.echo(f"gitmem: warning: {res.behind}", err=True)


@cli.command()
@click.argument("project")
@click.argument("section", required=False)
@click.option("--branch", default="main", show_default=True)
@json_option
@pass_ctx
def show(ctx: Ctx, project: str, section: str | None, branch: str) -> None:
    """Print a card, or one SECTION of it (by id, as listed in `gitmem index`)."""
    from gitmem import read_card

    with ctx.repo() as repo:
        text = read_card(repo, project, section, branch=branch)
    emit(ctx, {"project": project, "section": section, "text": text}, text)


@cli.command()
@click.option("--branch", default="main", show_default=True)
@click.option(
    "--budget",
    "show_budget",
    is_flag=True,
    help="Print the index's size against limits.index_tokens instead of the index.",
)
@json_option
@pass_ctx
def index(ctx: Ctx, branch: str, show_budget: bool) -> None:
    """Print the index (layer I) exactly as the agent sees it.

    \b
    gitmem index                 the block, sections marked (unindexed) or (stale)
    gitmem index --json          every card and section: summary, keywords, indexed, stale
    gitmem index --budget        its size in tokens against limits.index_tokens

    Above 80 % of the budget a warning goes to stderr; above 100 % the block keeps every
    section and ends with a line telling the agent, and `gitmem consolidate` is suggested.
    """
    from gitmem import read_index, render_index

    with ctx.repo() as repo:
        text, size = render_index(repo, branch)  # an unknown branch is an error
        if show_budget:
            emit(ctx, size.to_json(), f"Index: {size.line()}")
        elif ctx.json:
            emit(ctx, read_index(repo, branch).to_json, "")
        else:
            emit(ctx, None, text)
    warning = size.warning()
    if warning:
        click.echo(f"gitmem: warning: {warning}", err=True)


@cli.command()
@click.option("--branch", default="main", show_default=True)
@json_option
@pass_ctx
def reindex(ctx: Ctx, branch: str) -> None:
    """Rebuild the index from all of history and report any difference from the cache.

    The search index (`gitmem search`) is rebuilt and compared with its cache too.
    """
    from gitmem import reindex as rebuild

    with ctx.repo() as repo:
        res = rebuild(repo, branch)
    emit(ctx, res.to_json(), res.text())


@cli.command()
@click.argument("project", required=False)
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
    from gitmem.memory.log_text import render
    from gitmem.wording import count

    with ctx.repo() as repo:
        entries = audit_log(
            repo,
            project,
            branch=branch,
            limit=(limit + 1) if limit else None,
            edits_only=not show_all,
        )
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
@click.argument("target", metavar="COMMIT|SESSION")
@click.option("--actor", default="cli", show_default=True)
@click.option("--branch", default="main", show_default=True)
@json_option
@pass_ctx
def revert(ctx: Ctx, target: str, actor: str, branch: str) -> None:
    """Undo one edit (a COMMIT), or every accepted edit of a SESSION, in one commit.

    The commit carries a Gitmem-Reverts trailer per undone commit, so the index
    holds what it held before those edits.
    """
    from gitmem import is_session, revert_commit, revert_session

    with ctx.repo() as repo:
        repo.branch_tip(branch)
        if is_session(repo, target):
            done = revert_session(repo, target, branch=branch, actor=actor)
            emit(ctx, done.to_json(), done.text())
            return
        res = revert_commit(repo, target, branch=branch, actor=actor)
    emit(
        ctx,
        res.to_json(),
        f"reverted {res.reverted[:7]} in {res.commit[:7]} ({', '.join(res.paths)})",
    )


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
