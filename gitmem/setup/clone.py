"""``gitmem clone URL [PATH]``: a memory repo from a remote, ready to use.

A remote made with ``git init --bare`` and filled by ``gitmem sync`` (which pushes
``main`` only) keeps its HEAD at git's default branch, often an unborn ``master``:
a plain ``git clone`` warns "remote HEAD refers to nonexistent ref" and checks out
nothing. Here ``main`` is checked out whatever the remote's HEAD says, the hooks a
clone never brings are installed, the index is built, and the sync ref is set, so
the first ``gitmem sync`` knows what it last saw. A main with a symlink or submodule
where memory lives (in any commit), or whose .gitattributes would change how memory is
stored or merged, is refused as ``gitmem sync`` refuses it, before git checks anything
out, and nothing is left behind.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from gitmem import hooks
from gitmem.errors import InvalidInput, NotARepo, NotFound
from gitmem.git import progress
from gitmem.git.runner import Git
from gitmem.index import build as index
from gitmem.memory import refs
from gitmem.memory.config import FILENAME
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops import incoming
from gitmem.ops.remote import RemoteError, check_objects, git_reason
from gitmem.setup import signing
from gitmem.setup.new_folder import undone_on_failure

REMOTE = "origin"


@dataclass(frozen=True)
class CloneResult:
    """A clone: the URL, where it is, main's commit, the hooks installed, and how many
    cards and sections its index holds."""

    url: str
    path: str
    commit: str
    hooks: list[str]
    cards: int
    sections: int

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def default_path(url: str) -> Path:
    """Where ``git clone URL`` would put it: the last part of the URL without ``.git``."""
    tail = re.split(r"[/:]", url.rstrip("/"))[-1]
    name = tail[:-4] if tail.endswith(".git") else tail
    if not name or name in (".", ".."):
        raise InvalidInput(f"cannot tell a folder name from {url!r}; give a PATH")
    return Path(name)


def _check_target(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise InvalidInput(f"{path} exists and is not a directory")
    if path.is_dir() and any(path.iterdir()):
        raise InvalidInput(f"{path} is not empty; gitmem clone needs a new or empty directory")


def clone_repo(
    url: str,
    path: str | os.PathLike[str],
    signing_key: str | os.PathLike[str] | None = None,
) -> CloneResult:
    """Clone ``url`` into ``path``; on any failure, remove what was created. This clone
    signs its commits with ``signing_key`` (default: this machine's key) and trusts the
    signers main names (``setup/signing.py``)."""
    if not url or url.startswith("-") or any(c in url for c in "\n\0"):
        raise InvalidInput(f"invalid URL {url!r}")
    target = Path(path).expanduser().absolute()
    key = Path(signing_key).expanduser() if signing_key is not None else None
    _check_target(target)
    with undone_on_failure(target):
        return _clone(url, target, key)


def _clone(url: str, path: Path, signing_key: Path | None) -> CloneResult:
    here = Git(Path.cwd())  # a relative URL means what it means to the person
    proc = progress.run(
        here,
        f"cloning {url}",
        "-c",
        "transfer.fsckObjects=true",
        "clone",
        "--quiet",
        "--no-checkout",
        "--origin",
        REMOTE,
        "--",
        url,
        str(path),
    )
    if proc.returncode:
        check_objects(proc.stderr, url)
        raise RemoteError(f"cannot clone {url}: {git_reason(proc.stderr)}")
    git = Git(path)
    remote_main = f"refs/remotes/{REMOTE}/{MAIN}"
    if git.run("rev-parse", "--verify", "--quiet", remote_main, check=False).returncode:
        raise NotFound(
            f"{url} has no {MAIN} branch: not a gitmem memory repo, or nothing was synced to it yet"
        )
    if git.run("cat-file", "-e", f"{remote_main}:{FILENAME}", check=False).returncode:
        raise NotARepo(f"{url} is not a gitmem memory repo: its {MAIN} has no {FILENAME}")
    with MemoryRepo(path) as repo:  # before the checkout: git follows links, applies attributes
        incoming.refuse(repo, REMOTE, None, git.out("rev-parse", remote_main))
    # -B: a clone whose remote HEAD named main has a main already; one whose HEAD is
    # unborn has none. Either way main ends up checked out, tracking the remote's.
    git.run("checkout", "--quiet", "-B", MAIN, "--track", remote_main)
    git.run("update-ref", refs.sync(REMOTE, "last-synced"), remote_main)
    git.run("update-ref", refs.SEEN, remote_main)
    installed = hooks.install_hooks(path)
    with MemoryRepo(path) as repo:
        if (key := signing.configure(repo, signing_key)) is not None:
            signing.record_signer(repo, key)
        idx = index.refresh(repo, MAIN)
        commit = repo.branch_tip(MAIN)
    return CloneResult(
        url,
        str(path),
        commit,
        [a.hook for a in installed if a.in_place],
        len(idx.cards),
        sum(len(c.sections) for c in idx.cards),
    )
