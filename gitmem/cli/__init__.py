"""The ``gitmem`` command: ``main`` is its entry point; ``app.py`` the click application."""

from __future__ import annotations

COMPLETE_VAR = "_GITMEM_COMPLETE"  # set by the shell asking for completions


def main(argv: list[str] | None = None) -> None:
    """Run the ``gitmem`` command with ``argv`` (default: the process's arguments)."""
    from .app import main as run

    run(argv)


__all__ = ["COMPLETE_VAR", "main"]
