"""Plumbing that knows nothing of memory: running git, objects, refs, git's index file, work-tree files."""
