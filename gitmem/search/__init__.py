"""Ranked search over cards, their history and session transcripts."""
