"""The ``gitmem`` command: ``main`` runs it in a program; ``app.py`` is the click
application; the console script is ``gitmem.__main__``."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> None:
    """Run the ``gitmem`` command with ``argv`` (default: the process's arguments)."""
    from .app import main as run

    run(argv)


__all__ = ["main"]
