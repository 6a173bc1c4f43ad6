"""Where gitmem's own shipped files live: the repo template, the hooks, the rules text."""

from __future__ import annotations

from pathlib import Path

from .errors import ConfigError

PACKAGE = Path(__file__).resolve().parent
SOURCE = PACKAGE.parent


def shipped(name: str) -> Path:
    """A top-level folder of the source tree (``template-repo``, ``hooks``)."""
    for candidate in (SOURCE / name, PACKAGE / "_data" / name):
        if candidate.is_dir():
            return candidate
    raise ConfigError(f"gitmem's {name}/ folder is missing from {SOURCE}; reinstall gitmem")
