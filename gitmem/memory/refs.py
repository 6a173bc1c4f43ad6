"""Every ref gitmem keeps, spelled here once, both ways: how each is named, and what a
name read back from ``git for-each-ref`` says.

| ref | what it holds |
|---|---|
| ``refs/heads/gitmem/session/<id>`` | a session's edits, pending review |
| ``refs/gitmem/{archive,partial,rejected}/<id>`` | a decided session's tip |
| ``refs/gitmem/from/<machine>/<id>`` | which machine published a session |
| ``refs/gitmem/by/<machine>/<id>`` | which machine decided it |
| ``refs/remotes/<remote>/gitmem/session/<id>`` | a remote's pending session, as fetched |
| ``refs/gitmem/remotes/<remote>/<kind>/...`` | a remote's refs of the kinds above |
| ``refs/gitmem/sync/<remote>/last-synced`` | the remote's main after the last sync |
| ``refs/gitmem/sync/<remote>/fetched`` | what a sync fetched, during its round |
| ``refs/gitmem/sync/<remote>/rewritten`` | a rewritten main a sync refused, until one succeeds |
| ``refs/gitmem/seen/main`` | main as gitmem last left it: history must keep containing it |
| ``refs/gitmem/conflict/{local,remote}`` | the two sides of a stopped sync |
| ``refs/gitmem/redactions/<n>`` | a redaction's record |
| ``refs/gitmem/remote-redactions/<remote>/<n>`` | a remote's redaction records |
| ``refs/gitmem/importing`` | never written: an import's name for its chain in ``git fast-import`` |
"""

from __future__ import annotations

SESSION_PREFIX = "gitmem/session/"  # a session's branch, under refs/heads/
PENDING = "refs/heads/" + SESSION_PREFIX
DECIDED = {  # a decision (as `gitmem review` says it) -> where the session's tip is kept
    "accepted": "refs/gitmem/archive/",
    "partial": "refs/gitmem/partial/",
    "rejected": "refs/gitmem/rejected/",
}
ARCHIVE = DECIDED["accepted"]
FROM = "refs/gitmem/from/"
BY = "refs/gitmem/by/"
CONFLICT_LOCAL = "refs/gitmem/conflict/local"
CONFLICT_REMOTE = "refs/gitmem/conflict/remote"
REDACTIONS = "refs/gitmem/redactions/"
SYNC = "refs/gitmem/sync/"
REMOTES = "refs/gitmem/remotes/"
# main as gitmem last moved it; a main that no longer contains it was rolled back or
# rewritten outside gitmem (`gitmem verify`). main's reflog would not do: git expires
# the entries a rollback leaves unreachable (gc.reflogExpireUnreachable, 30 days) and
# `gitmem redact` expires them all.
SEEN = "refs/gitmem/seen/main"
IMPORTING = "refs/gitmem/importing"
REPLACE = "refs/replace/"  # git's object replacements: gitmem reads past them (runner)


def sync(remote: str, what: str) -> str:
    """``last-synced``, ``fetched`` or ``rewritten`` for ``remote``."""
    return f"{SYNC}{remote}/{what}"


def synced_remote(ref: str) -> str | None:
    """The remote a ``last-synced`` ref is kept for, or None for any other ref."""
    if ref.startswith(SYNC) and ref.endswith("/last-synced"):
        return ref.removeprefix(SYNC).removesuffix("/last-synced")
    return None


def tracking(remote: str, what: str) -> str:
    """Where a sync keeps the remote's ``what`` refs ("session", "from", "by" or a
    decision), never a local branch."""
    if what == "session":
        return f"refs/remotes/{remote}/{SESSION_PREFIX}"
    return f"{REMOTES}{remote}/{what}/"


def rewritten_remote(ref: str) -> str | None:
    """The remote a ``rewritten`` ref is kept for, or None for any other ref."""
    if ref.startswith(SYNC) and ref.endswith("/rewritten"):
        return ref.removeprefix(SYNC).removesuffix("/rewritten")
    return None


def remote_redactions(remote: str) -> str:
    return f"refs/gitmem/remote-redactions/{remote}/"


def tracked_session(ref: str) -> tuple[str, str] | None:
    """(remote, id) for a remote's pending session as a fetch keeps it, else None."""
    if ref.startswith("refs/remotes/") and f"/{SESSION_PREFIX}" in ref:
        where, sid = ref.removeprefix("refs/remotes/").split(f"/{SESSION_PREFIX}", 1)
        return where, sid
    return None


def tracked_origin(ref: str) -> tuple[str, str] | None:
    """(machine, id) for a remote's ``from`` ref as a fetch keeps it, else None."""
    parts = ref.removeprefix(REMOTES).split("/") if ref.startswith(REMOTES) else []
    if len(parts) == 4 and parts[1] == "from":
        return parts[2], parts[3]
    return None
