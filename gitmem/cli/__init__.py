"""The ``gitmem`` command: ``main`` is its entry point, and ``app`` the click application
that parses, runs and prints every command (see ``app.py``). A plain ``gitmem sync`` has
its first fetch begun before click is loaded (``early.py``)."""

from __future__ import annotations

import sys

COMPLETE_VAR = "_GITMEM_COMPLETE"  # set by the shell asking for completions


def main(argv: list[str] | None = None) -> None:
    """Run the ``gitmem`` command with ``argv`` (default: the process's arguments)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "sync" not in args:
        from .app import main as run

        run(argv)
        return
    from . import early

    early.start(args)
    try:
        from .app import main as run

        run(argv)
    finally:
        early.discard()


__all__ = ["COMPLETE_VAR", "main"]
