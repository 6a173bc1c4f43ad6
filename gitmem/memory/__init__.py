"""The memory repo's model: the repo, its settings, names, trailers, cards, secrets, transcripts."""
