"""What a sync round checks once it has fetched, before anything changes here: the
remote's history still holds what we synced last (a rewritten remote is refused, a
``gitmem redact`` taken only when asked), nothing it brings puts a symlink or a
submodule where memory lives or gives a memory file git attributes it has not here (an
encoding, line endings, a filter, a diff or merge driver), and nothing that leaves
carries a secret."""

from __future__ import annotations

from gitmem.errors import Conflict, InvalidInput
from gitmem.features import scan
from gitmem.git.runner import Sha
from gitmem.memory import refs
from gitmem.memory.repo import MemoryRepo
from gitmem.ops import incoming as from_remote
from gitmem.review import team
from gitmem.sync import redact


class RemoteRewritten(Conflict):
    """The remote's main no longer contains what we synced last."""


def history(repo: MemoryRepo, remote: str, theirs: Sha | None, accept_redaction: bool) -> None:
    """Refuse (``RemoteRewritten``, ``RemoteRedacted``) a remote main that lost what we
    synced last; with ``accept_redaction``, take a ``gitmem redact`` of it instead."""
    last = repo.store.resolve(refs.sync(remote, "last-synced"))
    if last is None or last == theirs or (theirs is not None and _ancestor(repo, last, theirs)):
        if accept_redaction:
            raise InvalidInput(
                f"{remote}/main was not redacted since the last sync: plain `gitmem sync`"
            )
        return
    if theirs is not None and redact.redacted_as(repo, remote, last) is not None:
        if accept_redaction:
            redact.accept_redaction(repo, remote, theirs, last)
            return
        raise redact.RemoteRedacted(
            f"{remote}/main was rewritten by `gitmem redact` (secrets removed from history); "
            "nothing was changed here. Take the redacted history with "
            "`gitmem sync --accept-redaction`"
        )
    if theirs is not None:  # kept for `gitmem verify` until a sync with the remote succeeds
        repo.git.run("update-ref", refs.sync(remote, "rewritten"), theirs)
    # The lease names what we just fetched: gitmem's fetch leaves refs/remotes/* alone, so
    # a bare --force-with-lease would compare with a stale tracking ref and be refused.
    lease = f"main:{theirs or ''}"
    raise RemoteRewritten(
        f"{remote}/main was rewritten: it no longer contains {last[:7]}, what we synced last; "
        f"nothing was changed here. To keep this history, put it back with "
        f"`git push --force-with-lease={lease} {remote} main`; to take theirs, start from a "
        "fresh clone",
        hint="gitmem never force-pushes and never drops a local commit",
    )


def _ancestor(repo: MemoryRepo, a: str, b: str) -> bool:
    return repo.git.run("merge-base", "--is-ancestor", a, b, check=False).returncode == 0


def incoming(repo: MemoryRepo, remote: str, ours: Sha | None, theirs: Sha | None) -> None:
    """Refuse (``UnsafePath``) a remote history that puts a symlink or submodule where
    memory lives, in any commit we would receive, or whose .gitattributes would change how
    a memory file is stored or merged (``ops/incoming.py``, which ``gitmem clone`` runs too)."""
    if theirs is not None:
        from_remote.refuse(repo, remote, ours, theirs)


def outgoing_main(repo: MemoryRepo, remote: str, ours: Sha | None, theirs: Sha | None) -> None:
    """Refuse to send commits that carry a secret: those main has and ``theirs`` has not."""
    if ours is not None and ours != theirs:
        scan.outgoing(repo, remote, ours, theirs)


def outgoing_sessions(
    repo: MemoryRepo, remote: str, out: team.Outgoing, theirs: Sha | None
) -> None:
    """The session branches this round publishes carry no secret either."""
    for update in out.updates:
        if update.new and update.ref.startswith(refs.PENDING):
            base = [b for b in (update.old, theirs) if b]
            scan.outgoing(repo, remote, update.new, base[0] if base else None)
