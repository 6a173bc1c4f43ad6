"""The README's Start runs literally in a fresh shell opened in the checkout after the
Install's commands (issue 24, point 6): no PATH set up beforehand, no inherited venv, a
home of its own, every line as written (``set -e``: the first failure stops it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _section_blocks(title: str) -> list[str]:
    text = (ROOT / "README.md").read_text("utf-8")
    section = text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


def test_the_readme_states_its_requirements() -> None:
    text = (ROOT / "README.md").read_text("utf-8")
    assert "Python >= 3.11" in text and "git" in text


def test_the_start_section_runs_as_written_in_a_fresh_shell(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".venv").symlink_to(sys.prefix)  # the venv the Install made
    home = tmp_path / "fresh-home"
    home.mkdir()
    git = shutil.which("git")
    assert git is not None
    env = {
        "HOME": str(home),
        "PATH": os.pathsep.join(dict.fromkeys([str(Path(git).parent), "/usr/bin", "/bin"])),
        "LANG": "C.UTF-8",
    }
    first = _section_blocks("Start")[0]
    proc = subprocess.run(
        ["bash", "--norc", "--noprofile", "-e", "-c", first],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Q3 budget is 30k" in proc.stdout  # the index, the log and the search show it
    assert (home / "clients/acme/cards/acme-website.md").is_file()
