"""A plain ``gitmem sync``'s first fetch, started before the command line is parsed.

Loading click and the command's modules takes a Python process some 40 ms, and a sync's
fetch spends most of its time waiting on the remote: the two can overlap. ``start`` looks
at the arguments without click; when they can only mean a plain sync (``gitmem [-C PATH |
--client NAME] sync [REMOTE] [--json]``, the options in any order click accepts them) and
nobody watches progress on a terminal, it begins that sync's first fetch with the checks
and the fetch of ``sync.first_fetch.start``. The sync command then ``take``s it. Any other
command line, or one this reading is not sure of (``--continue``, ``--help``, a repeated
option, an empty value...), starts nothing, and the command runs as if this module did
not exist.

A fetch started here that no sync took (the command stopped before it) is waited for and
its private ref deleted by ``discard``, as a sync refused before its round does: nothing
is left but the objects fetched.
"""

from __future__ import annotations

import atexit
import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from gitmem import GitmemError

from . import COMPLETE_VAR

# Before the fetch starts every import counts: records here are NamedTuples (``typing``
# is loaded for git's runner anyway), not dataclasses, which load ``inspect``.
if TYPE_CHECKING:
    from gitmem import MemoryRepo, StartedFetch


class PlainSync(NamedTuple):
    """What a plain sync's command line says."""

    path: str | None
    client: str | None
    remote: str
    as_json: bool


def plain_sync(args: list[str]) -> PlainSync | None:
    """The plain sync ``args`` (the words after ``gitmem``) ask for, or None when they may
    mean anything else."""
    path: str | None = None
    client: str | None = None
    remote: str | None = None
    as_json = seen_sync = False
    words = iter(args)
    for word in words:
        if word in ("-C", "--client") or word.startswith("--client="):
            value = word.partition("=")[2] if "=" in word else next(words, "")
            if not value or value.startswith("-") or (path if word == "-C" else client):
                return None  # missing, doubtful or given twice: click decides
            if word == "-C":
                path = value
            else:
                client = value
        elif not seen_sync:
            if word != "sync":
                return None
            seen_sync = True
        elif word == "--json":
            as_json = True
        elif not word or word.startswith("-") or remote is not None:
            return None
        else:
            remote = word
    if not seen_sync or (path and client):
        return None
    return PlainSync(path, client, remote or "origin", as_json)


class _Early(NamedTuple):
    root: Path
    remote: str
    fetch: StartedFetch


_started: _Early | None = None


def start(args: list[str]) -> None:
    """Begin the first fetch of the plain sync ``args`` ask for, if they ask for one (see
    the module's docstring); never raises for a command line or a repo, which the command
    itself then reports."""
    global _started
    discard()
    if os.environ.get(COMPLETE_VAR):  # the shell asking for completions
        return
    wanted = plain_sync(args)
    if wanted is None:
        return
    from gitmem.git import progress

    if progress.watched(wanted.as_json):
        return  # a person watches: the sync draws its fetch's progress itself
    from gitmem import MemoryRepo, find_repo, start_sync_fetch

    # Whatever goes wrong here is the command's to report: it meets the same and says so.
    try:
        root = find_repo(wanted.path, client=wanted.client)
        repo = MemoryRepo(root)
    except Exception:
        return
    try:
        fetch = start_sync_fetch(repo, wanted.remote)
    except Exception:
        fetch = None
    if fetch is None:
        repo.close()
        return
    _started = _Early(root, wanted.remote, fetch)
    atexit.register(discard)


def take(repo: MemoryRepo, remote: str) -> StartedFetch | None:
    """The fetch ``start`` began for a sync of ``repo`` with ``remote``, now the caller's
    (it reads through ``repo`` from here on); None when none was begun for those."""
    global _started
    early, _started = _started, None
    if early is None:
        return None
    if early.root != repo.root or early.remote != remote:
        _end(early)
        return None
    mine, early.fetch.repo = early.fetch.repo, repo
    mine.close()
    return early.fetch


def discard() -> None:
    """Wait for a fetch ``start`` began that no sync took, and delete its ref."""
    global _started
    early, _started = _started, None
    if early is not None:
        _end(early)


def _end(early: _Early) -> None:
    try:
        early.fetch.abandon()
    except (GitmemError, OSError):
        pass  # the next sync's fetch replaces the ref
    finally:
        early.fetch.repo.close()
