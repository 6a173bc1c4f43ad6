"""The refs a sync keeps for a remote: ``last-synced`` (the remote's main after our last
sync) and ``fetched`` (only during a round)."""

from __future__ import annotations


def sync_ref(remote: str, what: str) -> str:
    return f"refs/gitmem/sync/{remote}/{what}"
