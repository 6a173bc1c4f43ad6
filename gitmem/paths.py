"""Where gitmem's own shipped files live: the repo template, the hooks, the rules text.

``template-repo/`` and ``hooks/`` sit at the top of the source tree. A wheel carries
them inside the package as ``gitmem/_shipped/template_repo/`` and
``gitmem/_shipped/hooks/`` (mapped in by pyproject.toml at build time), so an install
made with pip or pipx finds them through ``importlib.resources``; a checkout (an
editable install too) reads them in place.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from .errors import ConfigError

PACKAGE = Path(__file__).resolve().parent
SOURCE = PACKAGE.parent

# The top-level folder name -> its name inside the package (a package name has no '-').
_IN_PACKAGE = {"template-repo": "template_repo", "hooks": "hooks"}


def shipped(name: str) -> Path:
    """A top-level folder of the source tree (``template-repo``, ``hooks``) as a directory."""
    inside = resources.files("gitmem").joinpath("_shipped").joinpath(_IN_PACKAGE.get(name, name))
    # pip unpacks a wheel, so an installed gitmem is a directory and the Traversable a
    # Path; the template is copied with shutil, which needs one (no zipped installs).
    candidates = [inside] if isinstance(inside, Path) else []
    for candidate in [*candidates, SOURCE / name]:
        if candidate.is_dir() and any(candidate.iterdir()):
            return candidate
    raise ConfigError(
        f"gitmem's {name}/ folder is missing (looked in {inside} and {SOURCE / name}); "
        "reinstall gitmem"
    )
