"""SSH keys for git's own commit signing (``gpg.format=ssh``): made with ssh-keygen.

git signs a commit itself (``commit-tree -S``) by running ssh-keygen with the key that
``user.signingKey`` names, and checks one against ``gpg.ssh.allowedSignersFile``; this
module makes the key, reads its public half and reads git's verdicts (``%G?``).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitmem.errors import ConfigError
from gitmem.git import sshsig
from gitmem.git.objects import ObjectStore
from gitmem.git.runner import Git, Sha


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


def sealer(private: bytes) -> bytes:
    """A secret only the holder of the private key ``private`` knows, for sealing the
    state gitmem keeps under ``.git/gitmem/`` (``seal``)."""
    return hashlib.blake2b(private, key=b"gitmem state", digest_size=32).digest()


def seal(secret: bytes, text: str) -> str:
    """``text``'s seal under ``secret``: a file under ``.git/gitmem/`` that anything but
    gitmem edited (a tool let loose in the repo) fails its seal, and is not trusted."""
    return hashlib.blake2b(text.encode(), key=secret, digest_size=16).hexdigest()


# git's %G? letters, as what they mean for trusting a commit here.
_STATES = {
    "G": "trusted",  # a good signature by a key the allowed signers name
    "U": "unknown",  # a good signature by a key they do not name
    "X": "unknown",  # good, but expired
    "Y": "unknown",  # good, by an expired key
    "R": "bad",  # by a revoked key
    "B": "bad",  # the signature does not match the commit
    "E": "unchecked",  # it cannot be checked here (no ssh-keygen, no signers file)
    "N": "unsigned",
}


@dataclass(frozen=True)
class Signature:
    """git's verdict on one commit's signature."""

    state: str  # "trusted", "unknown", "bad", "unchecked" or "unsigned"
    key: str  # the signing key's fingerprint ("SHA256:..."), "" when unsigned
    signer: str  # the allowed signer it names ("" unless trusted)


def signatures(
    git: Git, *revs: str, stdin: Sequence[str] = (), settings: Mapping[str, str] | None = None
) -> dict[Sha, Signature]:
    """Each commit ``git log revs`` lists, with git's verdict on its signature: one git
    process for the whole range (git runs ssh-keygen once per signed commit). ``stdin``:
    more revisions, given on git's standard input (any number of them). ``settings``:
    git's ``gpg.*`` config to check with instead of the repo's (ssh-keygen unless named)."""
    more = ("--stdin",) if stdin else ()
    data = "".join(f"{rev}\n" for rev in stdin).encode() if stdin else None
    fmt = "--format=%H%x1f%G?%x1f%GK%x1f%GS"
    pinned = {"gpg.ssh.program": "ssh-keygen", **settings} if settings is not None else {}
    config = [arg for k, v in sorted(pinned.items()) for arg in ("-c", f"{k}={v}")]
    out = git.run(*config, "log", "-z", fmt, *revs, *more, "--", input=data).stdout
    found: dict[Sha, Signature] = {}
    for record in out.decode("utf-8", "replace").split("\0"):
        if not record.strip():
            continue
        sha, letter, key, signer = record.strip("\n").split("\x1f", 3)
        found[Sha(sha)] = Signature(_STATES.get(letter, "unknown"), key, signer)
    return found


def verdicts(
    store: ObjectStore, shas: Sequence[str], settings: Mapping[str, str]
) -> dict[Sha, Signature]:
    """git's verdict on each commit of ``shas``, as ``signatures`` gives it: decided here
    from the commit's bytes (one ``cat-file --batch``) where ``sshsig`` is certain to agree
    with git, git asked in one process for the rest. ``settings``: git's ``gpg.*`` config."""
    # The budget: verify of 10k commits a remote wrote <= 10 s (ssh-keygen: 19 ms each).
    known = sshsig.signers(settings) if keygen_available() else None  # (git's: no check)
    header = b"gpgsig" if store.sha_bytes == 20 else b"gpgsig-sha256"
    if known is None:
        return signatures(store.git, "--no-walk", stdin=shas, settings=settings) if shas else {}
    found: dict[Sha, Signature] = {}
    asked: list[str] = []
    for sha, got in zip(shas, store.resolved_all(shas), strict=True):
        said = sshsig.verdict(got.data, header, known) if got and got.kind == "commit" else None
        if said is None:
            asked.append(sha)
        else:
            found[Sha(sha)] = Signature(_STATES[said[0]], said[1], said[2])
    if asked:
        found.update(signatures(store.git, "--no-walk", stdin=asked, settings=settings))
    return found
