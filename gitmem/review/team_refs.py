"""Where a team's sessions and the decisions on them live, here and as fetched from a
remote: the ref names a sync fetches and pushes. Kept apart from ``team.py`` (which reads
and moves them) so that a sync's first fetch, begun before the rest is loaded, needs
only these names."""

from __future__ import annotations

from gitmem.memory.repo import ARCHIVE_PREFIX, SESSION_PREFIX

DECISION_PREFIX = {
    "accepted": ARCHIVE_PREFIX,
    "partial": "refs/gitmem/partial/",
    "rejected": "refs/gitmem/rejected/",
}
FROM_PREFIX = "refs/gitmem/from/"
BY_PREFIX = "refs/gitmem/by/"
BRANCH_PREFIX = "refs/heads/" + SESSION_PREFIX


def tracking(remote: str, what: str) -> str:
    """Where a sync keeps the remote's ``what`` refs (never a local branch)."""
    if what == "session":
        return f"refs/remotes/{remote}/{SESSION_PREFIX}"
    return f"refs/gitmem/remotes/{remote}/{what}/"


def fetch_specs(remote: str) -> list[str]:
    """The refspecs a sync fetches beside main (pruned: a decided session's branch goes)."""
    specs = [f"+{BRANCH_PREFIX}*:{tracking(remote, 'session')}*"]
    specs += [
        f"+{FROM_PREFIX}*:{tracking(remote, 'from')}*",
        f"+{BY_PREFIX}*:{tracking(remote, 'by')}*",
    ]
    for action, prefix in DECISION_PREFIX.items():
        specs.append(f"+{prefix}*:{tracking(remote, action)}*")
    return specs
