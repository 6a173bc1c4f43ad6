"""Agent sessions reviewed like pull requests: what waits, what it changed, accept, reject, revert."""
