"""Talking to a git remote: which one, fetching main, pushing without ever forcing.

Every network call goes through ``progress.run`` and so ``Git.run``'s environment
(``GIT_TERMINAL_PROMPT=0``: a remote that wants a password fails instead of waiting
for one), with progress on a terminal for a long one (see ``gitmem.git.progress``). Failures become one-line
errors naming the remote and what git said.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from typing import NamedTuple

from gitmem.errors import EXIT_GIT, GitmemError, NotFound, UnsafePath
from gitmem.git import progress
from gitmem.git.runner import Sha
from gitmem.memory import names
from gitmem.memory.repo import MemoryRepo


class RemoteError(GitmemError):
    """The remote could not be reached, or it refused what was sent."""

    exit_code = EXIT_GIT


def git_reason(text: bytes) -> str:
    """git's first line: the cause ("... does not appear to be a git repository"); the
    lines after it are advice that fits every cause."""
    lines = [ln.strip() for ln in text.decode("utf-8", "replace").splitlines() if ln.strip()]
    return lines[0].removeprefix("fatal: ") if lines else "no output"


_FSCK = re.compile(rb"error: object ([0-9a-f]+): (\w+): ([^\n]*)")


def check_objects(stderr: bytes, name: str) -> None:
    """Refuse (``UnsafePath``) what git's own object checks refused in a fetch or a clone
    from ``name`` (a tree naming ``.git`` in a spelling some system reads as git's own)."""
    found = _FSCK.search(stderr)
    if found is not None:
        sha, check, detail = (g.decode("utf-8", "replace") for g in found.groups())
        raise UnsafePath(
            f"{name} sends object {sha[:7]}, which git's own checks refuse ({check}: "
            f"{detail}); nothing was changed here",
            hint=f"its history holds a name no checkout everywhere can hold: rewrite it on "
            f"{name}, or sync with another remote",
        )


def _unreachable(name: str) -> str:
    return (
        f"check the address (`git remote get-url {name}`) and that you can reach it "
        f"(`git ls-remote {name}`); `git remote set-url {name} URL` changes it"
    )


def url(repo: MemoryRepo, name: str) -> str:
    """The URL of the configured remote ``name`` (from the repo's one read of git's config:
    no process of its own); NotFound when there is none."""
    names.remote(name)
    urls = repo.remote_urls()
    if name in urls:
        return urls[name]
    known = sorted(urls)
    if known:
        raise NotFound(f"no remote {name!r} configured (remotes: {', '.join(known)})")
    raise NotFound(f"no remote {name!r} configured; add one with `git remote add {name} URL`")


def fetch_main(
    repo: MemoryRepo, name: str, into: str, where: str | None = None, extra: Sequence[str] = ()
) -> Sha | None:
    """Fetch the remote's ``main`` into ``into`` (a private ref); None if it has no main yet.

    ``--refmap=`` keeps the person's remote-tracking refs as they are, and no
    FETCH_HEAD is written: a refused sync leaves nothing behind but objects. ``extra``
    refspecs come in the same fetch (pruned: what the remote deleted goes here too).
    """
    where = where or url(repo, name)
    proc = _fetch(repo, name, [f"+refs/heads/main:{into}", *extra])
    if proc.returncode == 0:
        return repo.store.resolve(into)
    if b"couldn't find remote ref" in proc.stderr:
        if extra:
            fetch_refs(repo, name, extra, where)
        return None
    check_objects(proc.stderr, name)
    raise RemoteError(
        f"cannot fetch from {name} ({where}): {git_reason(proc.stderr)}", hint=_unreachable(name)
    )


def fetch_refs(repo: MemoryRepo, name: str, specs: Sequence[str], where: str | None = None) -> None:
    """Fetch ``specs`` (glob refspecs into private refs, pruned), as ``fetch_main`` does."""
    proc = _fetch(repo, name, specs)
    if proc.returncode:
        check_objects(proc.stderr, name)
        where = where or url(repo, name)
        raise RemoteError(
            f"cannot fetch from {name} ({where}): {git_reason(proc.stderr)}",
            hint=_unreachable(name),
        )


def _fetch(repo: MemoryRepo, name: str, specs: Sequence[str]) -> subprocess.CompletedProcess[bytes]:
    prune = ["--prune"] if len(specs) > 1 else []
    # git's own object checks refuse what no checkout could hold (a ".git" in any spelling).
    args = ["-c", "fetch.fsckObjects=true", "fetch", "--quiet", "--no-tags"]
    args += ["--no-write-fetch-head", *prune, "--refmap="]
    return progress.run(repo.git, f"fetching from {name}", *args, name, *specs)


class Pushed(NamedTuple):
    ok: bool
    rejected: str | None  # why the remote refused, when it did


def push(repo: MemoryRepo, name: str, source: str, target: str, where: str | None = None) -> Pushed:
    """``git push`` of ``source`` to the remote's ``target``, never forced.

    Returns ``Pushed(False, reason)`` when the remote refused an update that is
    not a fast-forward (someone pushed first); raises RemoteError otherwise.
    """
    where = where or url(repo, name)
    proc = progress.run(
        repo.git, f"pushing to {name}", "push", "--porcelain", "--quiet", name, f"{source}:{target}"
    )
    if proc.returncode == 0:
        return Pushed(True, None)
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("!"):
            reason = line.split("\t")[-1]
            if "fetch first" in reason or "non-fast-forward" in reason:
                return Pushed(False, reason)
            raise RemoteError(f"{name} ({where}) refused the push of {target}: {reason}")
    raise RemoteError(
        f"cannot push to {name} ({where}): {git_reason(proc.stderr)}", hint=_unreachable(name)
    )


# What git's --porcelain says when a ref moved on the remote since we looked: a lost race.
# The last three are the remote's side of it: another push held or moved the ref between
# receive-pack's check and its update (git daemon under concurrent pushes says so).
_RACE = (
    "fetch first",
    "non-fast-forward",
    "stale info",
    "already exists",
    "atomic transaction failed",
    "failed to update ref",
    "failed to lock",
)


class Update(NamedTuple):
    """One ref the push changes on the remote: ``new`` None deletes it, under the lease ``old``."""

    ref: str
    new: Sha | None
    old: Sha | None = None

    def refspec(self) -> str:
        return f"{self.new}:{self.ref}" if self.new else f":{self.ref}"


def push_updates(
    repo: MemoryRepo, name: str, updates: Sequence[Update], where: str | None = None
) -> Pushed:
    """One atomic ``git push`` of ``updates`` (all land or none), never forced: a deletion
    carries a lease on the tip it expects. ``Pushed(False, reason)`` when a ref moved on
    the remote since it was fetched (another round); RemoteError for anything else."""
    where = where or url(repo, name)
    leases = [f"--force-with-lease={u.ref}:{u.old}" for u in updates if u.new is None and u.old]
    args = (
        "push",
        "--porcelain",
        "--quiet",
        "--atomic",
        *leases,
        name,
        *(u.refspec() for u in updates),
    )
    proc = progress.run(repo.git, f"pushing to {name}", *args)
    if proc.returncode == 0:
        return Pushed(True, None)
    refused = [
        line.split("\t")[-1]
        for line in proc.stdout.decode("utf-8", "replace").splitlines()
        if line.startswith("!")
    ]
    races = [r for r in refused if any(k in r for k in _RACE)]
    if races and all(r in races or "atomic" in r for r in refused):
        return Pushed(False, races[0])
    if refused:
        raise RemoteError(f"{name} ({where}) refused the push: {refused[0]}")
    raise RemoteError(
        f"cannot push to {name} ({where}): {git_reason(proc.stderr)}", hint=_unreachable(name)
    )
