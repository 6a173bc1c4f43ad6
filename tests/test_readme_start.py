"""The README's Start runs literally in a fresh shell opened in the checkout after the
Install's commands (issue 24, point 6): no PATH set up beforehand, no inherited venv, a
home of its own, every line as written (``set -e``: the first failure stops it)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.request
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
    env["BROWSER"] = "true"  # `gitmem ui --open` "opens" its page with a command that exits
    first = _section_blocks("Start")[0]
    proc = subprocess.Popen(
        ["bash", "--norc", "--noprofile", "-e", "-c", first],
        cwd=checkout,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    out = []
    for line in proc.stdout:  # the walk-through ends serving the page: read it, then Ctrl-C
        out.append(line)
        served = re.search(r"(http://127\.0\.0\.1:\d+/\?token=\S+)", line)
        if served:
            browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
            with browser.open(served.group(1), timeout=30) as page:  # the token, then a cookie
                assert "acme-website" in page.read().decode("utf-8")
            os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=300) == 0, "".join(out)
    assert any("gitmem ui: serving" in line for line in out), "".join(out)
    assert "Q3 budget is 30k" in "".join(out)  # the index, the log and the search show it
    assert (home / "clients/acme/cards/acme-website.md").is_file()
