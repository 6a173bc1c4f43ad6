"""The hooks find gitmem when they run: a moved or removed venv never breaks `git commit`,
and a commit without a gitmem trailer does not start Python at all."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem import hooks

from helpers import git

TRAILERS = "\n\nGitmem-Card: acme\nGitmem-Section: budget\nGitmem-Keywords: budget\nGitmem-Summary: budget by hand\n"
BAD_TRAILERS = (
    "\n\nGitmem-Card: acme\nGitmem-Section: nowhere\nGitmem-Keywords: x\nGitmem-Summary: x\n"
)


def _tools_bin(tmp_path: Path) -> Path:
    """A PATH with what git and the hooks need, and no gitmem, no python."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "sh", "dirname", "grep", "head", "cat"):
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    return bin_dir


def _install_with(client: Path, python: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Install the hooks as a gitmem run by ``python`` would."""
    with monkeypatch.context() as m:
        m.setattr(sys, "executable", str(python))
        hooks.install_hooks(client)


def _logging_python(path: Path, log: Path) -> Path:
    """A stand-in for the venv's python that records each start, then runs the real one."""
    path.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{sys.executable}" "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _commit(
    client: Path, message: str, path_env: str, text: str
) -> subprocess.CompletedProcess[str]:
    (client / "cards/acme.md").write_text(f"# acme\n\n## budget\n{text}\n")
    git(client, "add", "cards/acme.md")
    env = {**os.environ, "PATH": path_env}
    return subprocess.run(
        ["git", "commit", "-q", "-m", message],
        cwd=client,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_with_the_recorded_python_gone_commits_still_succeed_with_one_line(
    client: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = tmp_path / "old-venv"
    venv.mkdir()
    _install_with(client, _logging_python(venv / "python", tmp_path / "starts.log"), monkeypatch)
    shutil.rmtree(venv)  # the venv was moved or deleted
    path_env = str(_tools_bin(tmp_path))
    plain = _commit(client, "a plain commit", path_env, "30k; the api token is in the vault")
    assert plain.returncode == 0, plain.stderr
    # A staged card line that could hold a secret (it has a word a detector needs) is
    # scanned by the hook: with gitmem gone, one line says so.
    [scan] = plain.stderr.splitlines()
    assert scan.startswith("gitmem: warning: secret scan of the staged files skipped")
    tagged = _commit(client, "an edit by hand" + TRAILERS, path_env, "40k")
    assert tagged.returncode == 0, tagged.stderr
    lines = [ln for ln in tagged.stderr.splitlines() if ln != scan]
    assert len(lines) == 1 and lines[0].startswith("gitmem: warning: commit-msg check skipped")
    assert str(venv / "python") in lines[0]
    env = {**os.environ, "PATH": path_env}
    out = subprocess.run(
        ["git", "checkout", "-q", "-b", "side"],
        cwd=client,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == [out.stderr.splitlines()[0]]
    assert out.stderr.startswith("gitmem: index refresh skipped")
    assert git(client, "log", "-1", "--format=%s") == "an edit by hand\n"


def test_with_the_recorded_python_gone_gitmem_on_path_still_checks(
    client: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = tmp_path / "old-venv"
    venv.mkdir()
    _install_with(client, _logging_python(venv / "python", tmp_path / "starts.log"), monkeypatch)
    shutil.rmtree(venv)
    script = Path(sys.executable).with_name("gitmem")  # the console script: its shebang names
    assert script.read_text().startswith("#!")  # the Python that has gitmem
    path_env = f"{_tools_bin(tmp_path)}{os.pathsep}{script.parent}"
    refused = _commit(client, "bad trailers" + BAD_TRAILERS, path_env, "30k")
    assert refused.returncode == 1
    assert "nowhere" in refused.stderr and "commit refused" in refused.stderr
    good = _commit(client, "good trailers" + TRAILERS, path_env, "30k")
    assert good.returncode == 0, good.stderr


def test_a_commit_without_a_gitmem_line_starts_no_python(
    client: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "starts.log"
    _install_with(client, _logging_python(tmp_path / "python", log), monkeypatch)
    path_env = str(_tools_bin(tmp_path))
    (client / "notes.txt").write_text("not memory\n")
    git(client, "add", "notes.txt")
    other = subprocess.run(
        ["git", "commit", "-q", "-m", "notes"],
        cwd=client,
        env={**os.environ, "PATH": path_env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert other.returncode == 0, other.stderr
    assert not log.exists()  # nothing of memory changed, no Gitmem- line: no Python at all
    plain = _commit(client, "a plain commit\n\nSigned-off-by: A <a@example.com>", path_env, "30k")
    assert plain.returncode == 0, plain.stderr
    # A card line with no word a secret detector needs: the hook's pre-check skips the scan.
    assert not log.exists()
    hinted = _commit(client, "a plain commit", path_env, "35k; the api token is in the vault")
    assert hinted.returncode == 0, hinted.stderr
    # A line that could hold a secret: the hook scans it, and only that.
    assert log.read_text().splitlines() == ["-m gitmem.hooks scan-staged .git/COMMIT_EDITMSG"]
    tagged = _commit(client, "bad trailers" + BAD_TRAILERS, path_env, "40k")
    assert tagged.returncode == 1
    # the trailers start Python once, for every check of the commit
    assert log.read_text().splitlines()[1:] == [f"-m gitmem.hooks commit {'.git/COMMIT_EDITMSG'}"]
