"""A folder a new memory repo is made in (``gitmem init``, ``gitmem clone``): when making
it fails, what was made goes, so a refused or failed command leaves nothing behind."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def undone_on_failure(path: Path) -> Iterator[None]:
    """Run the block that fills ``path`` (new, or an empty folder); on any failure empty it
    again, or remove it when the block created it."""
    existed = path.exists()
    try:
        yield
    except BaseException:
        if existed:
            for child in path.iterdir():
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        else:
            shutil.rmtree(path, ignore_errors=True)
        raise
