"""SSH keys for git's own commit signing (``gpg.format=ssh``): made with ssh-keygen.

git signs a commit itself (``commit-tree -S``) by running ssh-keygen with the key that
``user.signingKey`` names; this module only makes the key and reads its public half.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from gitmem.errors import ConfigError


def keygen_available() -> bool:
    """Whether ssh-keygen is on PATH (git needs it to sign and to verify)."""
    return shutil.which("ssh-keygen") is not None


def make_key(path: Path, comment: str) -> None:
    """A new ed25519 key at ``path`` (private, 0600) and ``path``.pub, no passphrase."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    proc = subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if proc.returncode:
        reason = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ConfigError(f"ssh-keygen could not make {path}: {reason[-1] if reason else '?'}")


def public_key(path: Path) -> str:
    """The public key of the private key at ``path`` ("ssh-ed25519 AAAA..."), no comment."""
    pub = Path(f"{path}.pub")
    try:
        words = pub.read_text("utf-8").split()
    except (OSError, UnicodeDecodeError):
        raise ConfigError(f"no public key {pub} beside the signing key {path}") from None
    if len(words) < 2:
        raise ConfigError(f"{pub} is not an SSH public key")
    return f"{words[0]} {words[1]}"
