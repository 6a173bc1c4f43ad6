"""The memory repo: cards, trailers, names, one edit as one commit, publishing, reverting, session branches, secrets."""
