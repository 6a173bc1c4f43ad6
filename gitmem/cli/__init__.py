"""The ``gitmem`` command: ``main`` is its entry point; ``app.py`` the click application."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> None:
    """Run the ``gitmem`` command with ``argv`` (default: the process's arguments)."""
    from .app import main as run

    run(argv)


__all__ = ["main"]
