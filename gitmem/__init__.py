"""gitmem: long-term agent memory in git."""

__version__ = "0.1.0"
