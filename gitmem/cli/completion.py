"""``gitmem completion SHELL``: the shell completion script (click's completion protocol)."""

from __future__ import annotations

import click

from .app import COMPLETE_VAR, cli

SHELLS = ("bash", "zsh", "fish")


@cli.command()
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell: str) -> None:
    """Print the completion script for SHELL (bash, zsh or fish).

    \b
    gitmem completion bash > ~/.local/share/bash-completion/completions/gitmem
    gitmem completion zsh  > "${fpath[1]}/_gitmem"
    gitmem completion fish > ~/.config/fish/completions/gitmem.fish
    eval "$(gitmem completion bash)"      # this shell only

    The script asks gitmem itself for the candidates, so commands, options and
    their choices stay current with the installed version; card, client and session
    names come from the repo the line names (-C, --client, else the current one).
    """
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    assert cls is not None  # every name in SHELLS is one of click's
    click.echo(cls(cli, {}, "gitmem", COMPLETE_VAR).source(), nl=False)
