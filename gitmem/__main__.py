"""The ``gitmem`` console script (and ``python -m gitmem``): Ctrl-C is handled before
anything else is imported, so an interrupt at any moment is one line and exit 130.

Only modules the interpreter has loaded already are imported here; the command's own
modules (click first) come after the handler is in place.
"""

import os
import signal
import sys

EXIT_INTERRUPTED = 130  # errors.EXIT_INTERRUPTED, not imported: errors.py comes later


def _interrupted(_signum: int, _frame: object) -> None:
    """Ctrl-C outside a command (imports, interpreter exit): nothing to clean up, so no
    exception that a half-imported module could print as a traceback."""
    os.write(2, b"gitmem: interrupted\n")
    os._exit(EXIT_INTERRUPTED)


# On import, not in main(): the console script runs a line of its own before calling it.
if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not SIG_IGN (nohup, &)
    signal.signal(signal.SIGINT, _interrupted)


def main() -> None:
    """Run ``gitmem`` with the process's arguments; the command itself turns Ctrl-C into
    KeyboardInterrupt, so it cleans up as it unwinds (``cli.app.main``)."""
    try:
        from gitmem.cli.app import main as run

        run(None)
    except KeyboardInterrupt:  # raised while a command's error was being reported
        _interrupted(signal.SIGINT, None)


if __name__ == "__main__":
    sys.argv[0] = "gitmem"
    main()
