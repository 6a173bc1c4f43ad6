"""A sync's first fetch, started before the rest of ``gitmem sync`` is loaded.

The fetch waits on the network and the remote most of its time; loading the merge,
the index and the review code takes a Python process about as long. ``start`` makes the
checks ``exchange.sync`` makes before it fetches (the remote is configured, no sync is
stopped at a conflict, main exists) and starts the same fetch in the background; the
caller imports and calls ``exchange.sync(..., started=...)``, whose first round takes
the fetch's result instead of fetching. When a check fails nothing is started: the sync
reports it as before, with nothing fetched.
"""

from __future__ import annotations

from gitmem.errors import GitmemError
from gitmem.memory import remote as remote_mod
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.review import team_refs
from gitmem.sync import state as sync_state


def sync_ref(remote: str, what: str) -> str:
    return f"refs/gitmem/sync/{remote}/{what}"


def _has_main(repo: MemoryRepo) -> bool:
    """Whether main names a commit, as ``repo.tip(MAIN)`` says, asked of git directly: the
    object store's code is loaded while the fetch runs."""
    proc = repo.git.run(
        "rev-parse", "--verify", "--quiet", f"refs/heads/{MAIN}^{{commit}}", check=False
    )
    return proc.returncode == 0


def start(repo: MemoryRepo, remote: str) -> remote_mod.StartedFetch | None:
    """The first round's fetch of ``exchange.sync(repo, remote)``, started; None when that
    sync would refuse before fetching, or draws progress (it then fetches itself)."""
    try:
        where = remote_mod.url(repo, remote)
        if sync_state.load(repo) is not None or not _has_main(repo):
            return None
    except GitmemError:
        return None
    fetched = sync_ref(remote, "fetched")
    return remote_mod.start_fetch_main(repo, remote, fetched, where, team_refs.fetch_specs(remote))
