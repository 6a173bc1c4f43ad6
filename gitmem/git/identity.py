"""Who gitmem's commits are by, and the warning when git has no identity to give.

git takes the author and committer from ``GIT_{AUTHOR,COMMITTER}_{NAME,EMAIL}`` or from
``user.name`` / ``user.email`` in its config. When neither is there, gitmem still
commits (an agent's edit must not be lost for want of a name) as ``gitmem
<gitmem@localhost>``, and says so on stderr, once per gitmem process: every command
that commits without an identity warns again, as git does, until one is set.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

FALLBACK_NAME = "gitmem"
FALLBACK_EMAIL = "gitmem@localhost"
HOW_TO_SET = (
    'git config --global user.name "Your Name" && git config --global user.email you@example.com'
)

_warned = False


def resolve(role: str, configured: Mapping[str, str]) -> tuple[str, str]:
    """(name, email) for ``role`` ("AUTHOR" or "COMMITTER"): the environment, then git's
    config, then the fallback, with the one warning when the fallback is used."""
    name = os.environ.get(f"GIT_{role}_NAME") or configured.get("user.name")
    email = os.environ.get(f"GIT_{role}_EMAIL") or configured.get("user.email")
    if not name or not email:
        warn_once()
    return name or FALLBACK_NAME, email or FALLBACK_EMAIL


def warn_once() -> None:
    global _warned
    if _warned:
        return
    _warned = True
    sys.stderr.write(
        f"gitmem: warning: git has no identity (user.name, user.email); committing as "
        f"{FALLBACK_NAME} <{FALLBACK_EMAIL}>; set yours with: {HOW_TO_SET}\n"
    )
    sys.stderr.flush()
