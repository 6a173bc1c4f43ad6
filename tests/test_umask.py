"""What gitmem creates is never group- or world-writable, whatever the umask (#33).

Each step runs in a process of its own under ``umask 000``, as a person whose shell set
it would run gitmem; then every folder and file under the repos is checked.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from helpers import git

TOOL = """
import sys
from gitmem.bridges.memory_tool import GitMemoryTool
with GitMemoryTool(sys.argv[1], branch="main") as tool:
    tool.call({"command": "create", "path": "/memories/notes/tool.md", "file_text": "# t\\n"})
"""


def _run(*args: str, cwd: Path) -> None:
    proc = subprocess.run(
        ["sh", "-c", 'umask 000 && exec "$@"', "sh", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def _gitmem(*args: str, cwd: Path) -> None:
    _run(sys.executable, "-m", "gitmem", *args, cwd=cwd)


def _writable_by_others(root: Path) -> list[str]:
    bad = []
    for here, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(here, name)
            mode = path.lstat().st_mode
            if not stat.S_ISLNK(mode) and mode & (stat.S_IWGRP | stat.S_IWOTH):
                bad.append(f"{oct(stat.S_IMODE(mode))} {path.relative_to(root)}")
    return bad


def test_nothing_gitmem_makes_under_umask_000_is_writable_by_others(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir(mode=0o755)
    _gitmem("init", "deep/down/acme", cwd=work)
    acme = work / "deep/down/acme"
    _gitmem(
        "-C", str(acme), "write", "acme", "--old", "", "--new", "# Acme\n\n## Budget\n40k\n",
        "--section", "budget", "--keywords", "budget", "--summary", "budget 40k", cwd=work,
    )  # fmt: skip
    _run(sys.executable, "-c", TOOL, str(acme), cwd=work)
    _gitmem("init", "--client", "beta", cwd=work)  # the workspace ($GITMEM_HOME) and a client
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(acme, "remote", "add", "origin", str(bare))
    _gitmem("-C", str(acme), "sync", cwd=work)
    _gitmem("clone", str(bare), "copy", cwd=work)
    assert (acme / "cards/notes/tool.md").is_file()
    assert (work / "copy/cards/acme.md").is_file()
    made = [work, Path(os.environ["GITMEM_HOME"]), Path(os.environ["XDG_CONFIG_HOME"])]
    assert [bad for root in made if root.exists() for bad in _writable_by_others(root)] == []
