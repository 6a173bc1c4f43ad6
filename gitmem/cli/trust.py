"""``gitmem trust``: accept on this machine the protective settings a remote changed."""

from __future__ import annotations

import json

import click

from .app import Ctx, cli, emit, json_option, pass_ctx


@cli.command()
@click.argument("settings", nargs=-1, metavar="[SETTING]...")
@json_option
@pass_ctx
def trust(ctx: Ctx, settings: tuple[str, ...]) -> None:
    """Let gitmem.toml's protective settings apply here after a remote changed them.

    \b
    gitmem status                which settings are held, and what the remote asks
    gitmem trust                 accept every held setting (and signer)
    gitmem trust memory.review   accept one
    gitmem trust signers         trust the keys a remote's allowed_signers added

    Settings that protect this machine follow only this machine: memory.review,
    secrets.allow, limits.max_edit_bytes and limits.max_card_bytes. When `gitmem sync`
    brings a gitmem.toml that weakens one of them (review "auto", a pattern added to
    [secrets] allow, a larger limit), this machine keeps the value it had and the
    sync says so, with the `git diff` that shows the change; changes that make a
    check stricter apply at once. Run this once you have read the change, to let
    the file's values apply. Your own edits of gitmem.toml
    apply without it. Nothing is sent anywhere: the record lives in .git/gitmem/.

    A key that a sync's allowed_signers adds is held the same way: commits signed
    with it do not verify (`gitmem verify`) until `gitmem trust signers`; a key it
    removes is no longer trusted here at once.
    """
    from gitmem import accept_settings

    with ctx.repo_open() as repo:  # a damaged record is replaced, not read first
        gone = [h.to_json() for h in accept_settings(repo, settings)]
    if not gone:
        text = "nothing is held: gitmem.toml's settings apply (`gitmem status` shows them)"
    else:
        text = "\n".join(_accepted(h) for h in gone)
    emit(ctx, {"accepted": gone}, text)


def _accepted(h: dict[str, object]) -> str:
    remote, at = h["remote"], str(h["commit"])[:7]
    if h["key"] == "signers" and isinstance(h["proposed"], list):
        keys = "".join(f"\n  {k}" for k in h["proposed"])
        return f"trusted now, from {remote}'s allowed_signers at {at}:{keys}"
    return (
        f"{h['key']} = {json.dumps(h['proposed'])} applies now (was held at "
        f"{json.dumps(h['applies'])}, from {remote}'s gitmem.toml at {at})"
    )
