"""Exchanging memory with git remotes without losing an edit, and rewriting history to remove secrets."""
