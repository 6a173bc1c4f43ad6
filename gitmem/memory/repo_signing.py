"""Who signs a client memory repo and what this clone wrote: the signing key and git's
settings for it, git's verdicts on signatures against the signers this clone trusts, and
the record of gitmem's own commits; what gitmem keeps under ``.git/gitmem/`` for these is
sealed with the signing key (``git/signing.py`` ``seal``), so an edit by anything else is
told from gitmem's. ``MemoryRepo`` is one of these."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem.errors import ConfigError, GitError
from gitmem.git.runner import Git, Sha
from gitmem.memory import trailers, trust

if TYPE_CHECKING:
    from gitmem.git.objects import ObjectStore
    from gitmem.git.signing import Signature
    from gitmem.memory.config import Config

OWN_COMMITS = "own-commits"  # under .git/gitmem/: one sha per line (and its seal), appended
SIGNERS_SEAL = "allowed_signers.seal"  # under .git/gitmem/: the trusted signers' seal


class Signing:
    """The signing side of ``MemoryRepo`` (which gives what is declared here)."""

    root: Path
    git: Git
    memo: dict[tuple[str, str], object]
    if TYPE_CHECKING:

        @property
        def store(self) -> ObjectStore: ...
        @property
        def config(self) -> Config: ...
        @property
        def _config(self) -> dict[str, str]: ...
        @property
        def gitmem_dir(self) -> Path: ...

    def signature_settings(self) -> dict[str, str]:
        """git's ``gpg.*`` settings here (lower-case keys): how git checks a signature,
        against the signers this clone trusts with ssh-keygen, whatever the config says."""
        got = {k: v for k, v in self._config.items() if k.startswith("gpg.")}
        got.pop("gpg.ssh.program", None)  # (a program there could call any signature good)
        return {**got, "gpg.format": "ssh", "gpg.ssh.allowedsignersfile": str(self._trusted)}

    def verdicts(self, shas: Sequence[str]) -> dict[Sha, Signature]:
        """git's verdict on each commit of ``shas`` here; none trusted while the signers
        this clone trusts are not as gitmem left them (``signers_sealed``)."""
        from gitmem.git.signing import Signature, verdicts

        got = verdicts(self.store, shas, self.signature_settings()) if shas else {}
        if self.signers_sealed():
            return got
        return {
            k: Signature("unknown", v.key, "") if v.state == "trusted" else v
            for k, v in got.items()
        }

    @property
    def _trusted(self) -> Path:
        return trust.trusted_path(self.root)

    def signers_sealed(self) -> bool:
        """Whether the signers this clone trusts are as gitmem last wrote them: a key
        added to ``.git/gitmem/allowed_signers`` by anything else trusts no one."""
        try:
            data = self._trusted.read_bytes()
        except FileNotFoundError:
            return True
        try:
            mark = self._trusted.with_name(SIGNERS_SEAL).read_text("ascii").strip()
        except OSError:
            mark = ""
        want = self.sealed(f"signers {hashlib.sha256(data).hexdigest()}")
        return want is None or mark == want

    def seal_signers(self) -> None:
        """Seal the signers file as it is now (gitmem wrote it, or a person trusted it)."""
        data = self._trusted.read_bytes() if self._trusted.exists() else b""
        mark = self.sealed(f"signers {hashlib.sha256(data).hexdigest()}")
        path = self._trusted.with_name(SIGNERS_SEAL)
        if mark is not None:
            tmp = path.with_name(f"{SIGNERS_SEAL}.{os.getpid()}.tmp")
            tmp.write_text(f"{mark}\n", "ascii")
            os.replace(tmp, path)

    @cached_property
    def signing_key(self) -> str | None:
        """The key git signs this clone's commits with (set by init or clone), or None
        when signing is off: the setting, no ssh-keygen, no key configured or found."""
        from gitmem.git.signing import keygen_available

        if self.signing_off_by() or not keygen_available():
            return None
        key = self._config.get("user.signingkey", "").strip()
        return key if key and Path(key).is_file() else None

    def signing_off_by(self) -> str | None:
        """The setting that turns signing off here: gitmem.toml's, or this machine's."""
        if os.environ.get("GITMEM_SIGNING") == "off":
            return "GITMEM_SIGNING=off in the environment"
        return None if self.config.signing else "signing.enabled is false in gitmem.toml"

    def _signed_commit(
        self, tree: Sha, parents: list[Sha], author: str, committer: str, message: str
    ) -> Sha:
        signed = self._signed_here(tree, parents, author, committer, message)
        if signed is not None:
            return self.store.write("commit", signed)
        # else git signs: commit-tree -S runs ssh-keygen with user.signingKey.
        env: dict[str, str] = {}
        for role, who in (("AUTHOR", author), ("COMMITTER", committer)):
            m = re.fullmatch(r"(.*) <(.*)> (\d+ [+-]\d{4})", who)
            if m is None:  # pragma: no cover - signature() and parse_commit make this form
                raise ConfigError(f"cannot sign a commit by {who!r}")
            env[f"GIT_{role}_NAME"], env[f"GIT_{role}_EMAIL"] = m.group(1), m.group(2)
            env[f"GIT_{role}_DATE"] = "@" + m.group(3)
        args = [word for p in parents for word in ("-p", p)]
        text = message if message.endswith("\n") else message + "\n"
        out = self.git.run(  # ssh-keygen itself, whatever gpg.ssh.program the config names
            "-c", "gpg.format=ssh", "-c", "gpg.ssh.program=ssh-keygen",
            "commit-tree", f"-S{self.signing_key}", *args, "-F", "-", tree,
            input=text.encode("utf-8"), env=env,
        )  # fmt: skip
        return Sha(out.stdout.decode().strip())

    # -- gitmem's own commits -------------------------------------------------
    # Trailers are text anyone can write (a person's commit, a remote's): who made an edit
    # and in which session is taken from them only for commits gitmem itself wrote here.
    # Each is recorded before its ref moves (a commit that never lands is harmless).
    # A commit this clone signed is recorded with its seal (``signing.seal``, keyed by the
    # private key): ``signed_own`` trusts it without checking its signature.
    def _record_own(self, sha: Sha) -> None:
        mark = self.sealed(sha)
        self._append_own(f"{sha} {mark}\n" if mark else f"{sha}\n")

    def _append_own(self, text: str) -> None:
        fd = os.open(self.gitmem_dir / OWN_COMMITS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, text.encode())  # one short O_APPEND write: never interleaved
        finally:
            os.close(fd)

    def _signed_here(
        self, tree: Sha, parents: list[Sha], author: str, committer: str, message: str
    ) -> bytes | None:
        """The commit signed in-process as git would sign it with ssh-keygen (the same
        bytes, no process: ``sshsig.sign``), None for a key that only ssh-keygen signs
        with (not ed25519, a passphrase) or a sha256 repository."""
        from gitmem.git import formats, sshsig

        if self._private is None or self.store.sha_bytes != 20:
            return None
        payload = formats.commit_object(tree, parents, author, committer, message)
        armored = sshsig.sign(self._private, payload)
        return formats.with_signature(payload, b"gpgsig", armored) if armored else None

    def write_signed_chain(
        self, parent: Sha, commits: list[tuple[Sha, str, str, str]]
    ) -> list[Sha] | None:
        """Commits (tree, author, committer, message), each on the one before from
        ``parent``, signed in-process and written many to a round trip with git (an
        import); None when ``_signed_here`` cannot sign them, and nothing is written."""
        from gitmem.git import formats, sshsig

        if self._private is None or self.store.sha_bytes != 20:
            return None
        datas, shas = [], []
        for tree, author, committer, message in commits:
            bound = trailers.with_client(message, self.config.client)
            payload = formats.commit_object(tree, [parent], author, committer, bound)
            armored = sshsig.sign(self._private, payload)
            if armored is None:
                return None
            datas.append(formats.with_signature(payload, b"gpgsig", armored))
            parent = Sha(hashlib.sha1(b"commit %d\0%s" % (len(datas[-1]), datas[-1])).hexdigest())
            shas.append(parent)  # the id git gives it (checked): the next commit's parent
        if self.store.write_many("commit", datas) != shas:
            raise GitError(["git", "hash-object", "-t", "commit"], 1, "ids differ from the chain's")
        self._append_own("".join(f"{sha} {self.sealed(sha)}\n" for sha in shas))
        return shas

    @cached_property
    def _private(self) -> bytes | None:
        try:
            return Path(self.signing_key).read_bytes() if self.signing_key else None
        except OSError:
            return None

    @cached_property
    def _sealer(self) -> bytes | None:
        from gitmem.git.signing import sealer  # (cryptography loaded only by who signs)

        return sealer(self._private) if self._private else None

    def sealed(self, text: str) -> str | None:
        """``text``'s seal under this clone's signing key, None when it has none."""
        from gitmem.git.signing import seal

        secret = self._sealer
        return seal(secret, text) if secret else None

    def signed_own(self) -> frozenset[str]:
        """The commits of ``own_commits`` this clone signed, by their seals: a line added
        to the record by anything but gitmem is not among them."""
        from gitmem.git.signing import seal

        secret = self._sealer
        try:
            data = (self.gitmem_dir / OWN_COMMITS).read_bytes() if secret else b""
        except FileNotFoundError:
            return frozenset()
        memo = self.memo.get(("signed-own", str(len(data))))
        if isinstance(memo, frozenset):
            return memo
        pairs = (line.split() for line in data.decode("ascii", "replace").splitlines())
        got = frozenset(
            p[0] for p in pairs if len(p) == 2 and secret and p[1] == seal(secret, p[0])
        )
        self.memo[("signed-own", str(len(data)))] = got
        return got

    def record_own(self, shas: list[Sha]) -> None:
        """Take commits gitmem wrote on another clone as its own here: the commits of a
        session that a gitmem sync published (see team.py), accepted on this clone."""
        mine = self.own_commits()
        new = "".join(f"{s}\n" for s in shas if s not in mine)
        if new:
            self._append_own(new)

    def own_commits(self) -> frozenset[str]:
        """Every commit gitmem wrote in this repository (its sessions' records)."""
        try:
            data = (self.gitmem_dir / OWN_COMMITS).read_bytes()
        except FileNotFoundError:
            return frozenset()
        lines = data.decode("ascii", "replace").splitlines()
        return frozenset(line.split()[0] for line in lines if line.strip())
