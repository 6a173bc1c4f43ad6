"""Signing set up by ``gitmem init`` and ``gitmem clone``: a per-machine SSH key outside
the repo, git configured to sign with it, and its public key in ``allowed_signers``.

The tracked ``allowed_signers`` (git's format) lists every clone's key; git verifies
against a copy of it under ``.git/gitmem/`` (``gpg.ssh.allowedSignersFile``), so an
edit of the tracked file, in the working tree or from a remote, trusts no key here.
"""

from __future__ import annotations

import os
from pathlib import Path

from gitmem.git import signing
from gitmem.git.runner import Sha
from gitmem.memory.repo import ALLOWED_SIGNERS, MAIN, MemoryRepo
from gitmem.memory.trust import TRUSTED  # under .git/gitmem/: the keys this clone trusts
from gitmem.ops.publish import PlannedCommit, commit_plan, publish


def default_key() -> Path:
    """This machine's key: ``$XDG_CONFIG_HOME/gitmem/signing_key`` (``~/.config``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "gitmem" / "signing_key"


def configure(repo: MemoryRepo, key: Path | None = None) -> Path | None:
    """Make git sign this clone's commits with ``key`` (default: this machine's key, made
    when missing): the key's path, or None when signing is off (the setting, or no
    ssh-keygen). ``record_signer`` then commits its public key."""
    if repo.signing_off_by() or not signing.keygen_available():
        return None
    if key is None:
        key = default_key()
        if not key.is_file():
            name, email = repo.identity("COMMITTER")
            signing.make_key(key, f"gitmem {email or name}")
    key = key.expanduser().absolute()
    signing.public_key(key)  # a key without its public half is refused before any change
    # No commit.gpgSign: gitmem signs its own commits (commit-tree -S), so a plain
    # `git commit` here is not signed with this machine's key and `gitmem verify` tells it.
    for name, value in (
        ("gpg.format", "ssh"),
        ("user.signingKey", str(key)),
        ("gpg.ssh.allowedSignersFile", str(repo.private_dir() / TRUSTED)),
    ):
        repo.git.run("config", name, value)
    repo.forget_config()
    return key


def record_signer(repo: MemoryRepo, key: Path) -> None:
    """``key``'s public half in the tracked ``allowed_signers`` (a commit of its own when
    it is not there yet), and the file as main has it trusted here."""
    public = signing.public_key(key)
    line = f'{repo.identity("COMMITTER")[1] or "gitmem"} namespaces="git" {public}\n'
    publish(repo, MAIN, lambda tip, root: _add_signer(repo, tip, root, public, line))
    tracked = repo.store.read(f"{MAIN}:{ALLOWED_SIGNERS}")
    (repo.private_dir() / TRUSTED).write_bytes(tracked.data if tracked else line.encode())
    repo.seal_signers()


def _add_signer(
    repo: MemoryRepo, tip: Sha, root: Sha, public: str, line: str
) -> PlannedCommit | None:
    got = repo.store.read(f"{root}:{ALLOWED_SIGNERS}")
    now = got.data.decode("utf-8", "replace") if got else ""
    if any(public in have for have in now.splitlines()):
        return None
    blob = repo.store.write("blob", (now + line).encode())
    tree = repo.store.update_path(root, ALLOWED_SIGNERS, blob)
    assert tree is not None
    message = f"gitmem: signer {line.split()[0]}\n\nThis clone signs its commits with {public}\n"
    return commit_plan(repo, tip, tree, [ALLOWED_SIGNERS], message)
