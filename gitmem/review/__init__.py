"""Agent sessions: started on their own branch, finished, reviewed like pull requests: what waits, what it changed, accept, reject, revert."""
