"""A client memory repository: where it is, its settings, and who is writing."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import time
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem.errors import ConfigError, NotARepo, NotFound
from gitmem.git import identity
from gitmem.git.objects import ObjectStore
from gitmem.git.ref_transaction import RefTransactions
from gitmem.git.runner import Git, Sha
from gitmem.memory import config, names, trailers, trust
from gitmem.memory.config import Config
from gitmem.memory.repo_signing import OWN_COMMITS as OWN_COMMITS
from gitmem.memory.repo_signing import Signing

if TYPE_CHECKING:
    from datetime import datetime


MAIN = "main"
ALLOWED_SIGNERS = "allowed_signers"  # tracked: the public keys of the clones that sign
REDACT_JOURNAL = "redact.json"  # under .git/gitmem/: a redact under way, or interrupted
# Where gitmem keeps memory: gitmem writes these itself and never through a symlink; a
# symlink or submodule there is never brought in by a sync.
MEMORY_PATHS = ("cards", "sessions", "logs", "persona.md", "synthesis.md", "gitmem.toml")


def _not_a_folder(path: Path) -> ConfigError:
    return ConfigError(
        f"{path} is not a folder: gitmem keeps its own state there; move it away and run "
        "the command again"
    )


def where_memory_lives(path: str) -> bool:
    """Whether ``path`` is one of MEMORY_PATHS or inside one (as a pathspec of them matches)."""
    return any(path == top or path.startswith(top + "/") for top in MEMORY_PATHS)


def find_root(start: str | os.PathLike[str]) -> Path:
    """The nearest directory at or above ``start`` (a leading ``~`` is the home
    directory) holding both gitmem.toml and .git."""
    here = Path(start).expanduser().resolve()
    if not here.exists():
        raise NotARepo(f"no such directory: {start}")
    for candidate in (here, *here.parents):
        if (candidate / config.FILENAME).is_file() and (candidate / ".git").exists():
            return candidate
    raise NotARepo(
        f"not a gitmem memory repo: {start}",
        hint="create one with `gitmem init PATH`, or pass -C PATH / --client NAME",
    )


def _top(root: Path) -> Path:
    """``root`` when it is the top of a work tree; for a folder inside a gitmem repo
    (``x/cards``), that repo's top, as ``find_root`` finds it."""
    if (root / ".git").exists():
        return root
    try:
        return find_root(root)
    except NotARepo:
        return root  # a folder gitmem is about to make a repo of (init, clone)


def _git_dir(root: Path) -> Path:
    dot = root / ".git"
    if dot.is_file():  # a linked worktree: "gitdir: <path>"
        target = dot.read_text().partition(":")[2].strip()
        return (root / target).resolve()
    return dot


def _parse_date(value: str) -> str | None:
    """A GIT_*_DATE value as "<epoch> <tz>", for the formats people actually set."""
    value = value.strip().lstrip("@")
    m = re.fullmatch(r"(\d+)(?:\s+([+-]\d{4}))?", value)
    if m:
        return f"{m.group(1)} {m.group(2) or '+0000'}"
    try:
        from datetime import datetime

        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        from email.utils import parsedate_to_datetime  # rare: RFC 2822 dates only

        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
    if when.tzinfo is None:
        when = when.astimezone()
    return f"{int(when.timestamp())} {_tz(when)}"


def _tz(when: datetime) -> str:
    offset = when.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset else 0
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"


class MemoryRepo(Signing):
    """An open client memory repo (``open_repo`` finds and opens one): ``root``,
    ``config`` (gitmem.toml), ``tip(branch)``, ``branch_tip(branch)``. Keeps git processes
    open for fast reads: use it as a context manager, or call ``close()``."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = _top(Path(root).expanduser())
        self.git_dir = _git_dir(self.root)
        if (own := self.git_dir / "gitmem").exists() and not own.is_dir():
            raise _not_a_folder(own)  # every command would fail on it, each its own way
        self.git = Git(self.root)
        # Results derived from immutable objects, keyed by what they were derived from
        # (e.g. the index at a commit): safe to keep for as long as the repo is open.
        self.memo: dict[tuple[str, str], object] = {}
        self._made: set[Path] = set()
        self.unexplained_cas = 0  # refused compare-and-swaps in a row with no cause seen

    @classmethod
    def discover(cls, start: str | os.PathLike[str] = ".") -> MemoryRepo:
        return cls(find_root(start))

    @cached_property
    def store(self) -> ObjectStore:
        return ObjectStore(self.git, self.git_dir)

    @cached_property
    def ref_tx(self) -> RefTransactions:
        """Compare-and-swap ref updates without a process each (the edit hot path)."""
        return RefTransactions(self.git, "gitmem write")

    @cached_property
    def config(self) -> Config:
        return trust.in_force(self.root)

    def close(self) -> None:
        if "store" in self.__dict__:
            self.store.close()
        if "ref_tx" in self.__dict__:
            self.ref_tx.close()

    def __enter__(self) -> MemoryRepo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- refs -----------------------------------------------------------------
    def head_branch(self) -> str | None:
        """The branch checked out in the working tree (None when detached)."""
        head = (self.git_dir / "HEAD").read_text().strip()
        prefix = "ref: refs/heads/"
        return head[len(prefix) :] if head.startswith(prefix) else None

    def is_shallow(self) -> bool:
        """Whether this is a shallow clone: the file ``shallow`` in git's common dir, where
        git lists the commits it cut history at (what ``--is-shallow-repository`` reads)."""
        return (self.store.common_dir / "shallow").is_file()

    def tip(self, branch: str) -> Sha | None:
        # A name with a line break would split the `cat-file --batch` request.
        got = self.store.read(f"refs/heads/{names.branch(branch)}^{{commit}}")
        return got.sha if got else None

    def branch_tip(self, branch: str) -> Sha:
        """The branch's commit; NotFound (exit 3) when there is no such branch."""
        tip = self.tip(branch)
        if tip is None:
            raise NotFound(f"no branch {branch!r} in {self.root}")
        return tip

    def tip_and_tree(self, branch: str) -> tuple[Sha, Sha] | None:
        """The branch's commit and its root tree, in one read."""
        got = self.store.read(f"refs/heads/{names.branch(branch)}^{{commit}}")
        if got is None or not got.data.startswith(b"tree "):
            return None
        return got.sha, Sha(got.data[5 : got.data.index(b"\n")].decode())

    def private_dir(self, *parts: str) -> Path:
        """A folder of gitmem's own under ``.git/gitmem/``, made once per open repo
        (it is asked for on every edit: no mkdir each time)."""
        path = self.git_dir.joinpath("gitmem", *parts)
        if path not in self._made:
            try:
                path.mkdir(parents=True, exist_ok=True)
            except (FileExistsError, NotADirectoryError):  # a file where a folder goes
                there = next(p for p in (path, *path.parents) if p.exists() and not p.is_dir())
                raise _not_a_folder(there) from None
            except OSError:
                return path  # a read-only repo: readers go on, a writer fails with the disk's word
            self._made.add(path)
        return path

    @property
    def gitmem_dir(self) -> Path:
        return self.private_dir()

    @contextlib.contextmanager
    def lock(self, name: str) -> Iterator[None]:
        """An advisory lock between gitmem processes (not against plain git)."""
        path = self.gitmem_dir / f"{name}.lock"
        if not path.parent.is_dir():
            path.parent.mkdir(parents=True)  # on a read-only disk: the disk's own error
        with open(path, "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    # -- git's config: one read for identity, signing key and remotes ---------
    @cached_property
    def _config(self) -> dict[str, str]:
        """Every key of git's config (the last value of each, as git takes it; a remote's
        first URL, the one git fetches from), from one ``git config --list``."""
        proc = self.git.run("config", "--list", "-z", check=False)
        found: dict[str, str] = {}
        for item in proc.stdout.decode("utf-8", "replace").split("\0"):
            key, _, value = item.partition("\n")
            if key.startswith("remote.") and key.endswith(".url"):
                found.setdefault(key, value)
            elif key:
                found[key] = value
        return found

    def forget_config(self) -> None:
        """Read git's config again at the next question (after gitmem set a value)."""
        self.__dict__.pop("_config", None)
        self.__dict__.pop("signing_key", None)

    def identity(self, role: str = "AUTHOR") -> tuple[str, str]:
        """(name, email) git would use for ``role``; a warning (once) when it has none."""
        return identity.resolve(role, self._config)

    def remote_urls(self) -> dict[str, str]:
        """Each configured remote's URL as its config gives it, by name: git's config read
        again, so a remote added while the repo is open (by git or a person) is found."""
        self.__dict__.pop("_config", None)
        urls = self._config
        return {
            k[7:-4]: v for k, v in urls.items() if k.startswith("remote.") and k.endswith(".url")
        }

    def write_commit(
        self,
        tree: Sha,
        parents: list[Sha],
        message: str,
        author: str | None = None,
        committer: str | None = None,
    ) -> Sha:
        """A commit object committed by this repo's identity; authored by it too, unless
        ``author`` (and ``committer``) keeps the one of a commit being re-created. A
        signed one names this client in its trailers (``Gitmem-Client``), so it cannot
        pass for another's."""
        author = author or self.signature("AUTHOR")
        committer = committer or self.signature("COMMITTER")
        if self.signing_key is None:
            sha = self.store.write_commit(tree, parents, author, committer, message)
        else:
            bound = trailers.with_client(message, self.config.client)
            sha = self._signed_commit(tree, parents, author, committer, bound)
        self._record_own(sha)
        return sha

    def signature(self, role: str = "AUTHOR") -> str:
        """ "Name <email> epoch tz" as git would write it, honouring GIT_{role}_* variables."""
        name, email = self.identity(role)
        date = (
            _parse_date(os.environ.get(f"GIT_{role}_DATE", ""))
            if os.environ.get(f"GIT_{role}_DATE")
            else None
        )
        if date is None:
            from datetime import datetime

            now = datetime.now().astimezone()
            date = f"{int(time.time())} {_tz(now)}"
        clean = re.sub(r"[<>\n]", "", name).strip() or "gitmem"
        mail = re.sub(r"[<>\n]", "", email)
        return f"{clean} <{mail}> {date}"
