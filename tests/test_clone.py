"""gitmem clone: main checked out even when the remote's HEAD is unborn, hooks, index."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import git, gm, snapshot, write


@pytest.fixture
def remote(client: Path, tmp_path: Path) -> Path:
    """A bare remote made with `git init --bare` that only `gitmem sync` has pushed to."""
    bare = tmp_path / "served" / "acme.git"
    bare.parent.mkdir()
    git(tmp_path, "init", "-q", "--bare", "--initial-branch=master", str(bare))
    write(client, "acme", "", "# Acme\n\n## Budget\n30k\n", "budget", "Budget 30k")
    git(client, "remote", "add", "origin", str(bare))
    assert gm("-C", str(client), "sync").code == 0
    assert git(bare, "symbolic-ref", "HEAD").strip() == "refs/heads/master"  # unborn
    return bare


def check_ready(path: Path, remote_main: str) -> None:
    assert git(path, "branch", "--show-current").strip() == "main"
    assert git(path, "rev-parse", "main").strip() == remote_main
    assert git(path, "rev-parse", "--abbrev-ref", "main@{upstream}").strip() == "origin/main"
    assert git(path, "status", "--porcelain") == ""
    assert (path / "cards/acme.md").read_text() == "# Acme\n\n## Budget\n30k\n"
    assert "gitmem-hook v1" in (path / ".git/hooks/commit-msg").read_text()
    assert (path / ".git/gitmem/index-main.marshal").exists()  # the index was built
    assert "- budget: Budget 30k [budget]" in gm("-C", str(path), "index").out


def test_a_plain_git_clone_checks_out_nothing_here(remote: Path, tmp_path: Path) -> None:
    proc = subprocess.run(
        ["git", "clone", str(remote), str(tmp_path / "plain")], capture_output=True, check=False
    )
    assert b"remote HEAD refers to nonexistent ref" in proc.stderr
    assert gm("-C", str(tmp_path / "plain"), "index").code == 3  # not a gitmem memory repo


def test_clone_checks_out_main_installs_hooks_and_builds_the_index(
    remote: Path, tmp_path: Path
) -> None:
    target = tmp_path / "laptop"
    res = gm("clone", str(remote), str(target), "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    main = git(remote, "rev-parse", "main").strip()
    assert data["commit"] == main and data["cards"] == 1 and "commit-msg" in data["hooks"]
    check_ready(target, main)
    assert git(target, "rev-parse", "refs/gitmem/sync/origin/last-synced").strip() == main
    assert "up to date with origin" in gm("-C", str(target), "sync").out
    write(target, "acme", "30k", "40k", "budget", "Budget 40k")
    assert gm("-C", str(target), "sync").code == 0
    assert "40k" in git(remote, "show", "main:cards/acme.md")


def test_clone_into_the_workspace_and_to_the_default_folder(
    remote: Path, tmp_path: Path, hermetic: Path
) -> None:
    res = gm("clone", str(remote), "--client", "acme")
    assert res.code == 0, res.err
    check_ready(hermetic / "gitmem/acme", git(remote, "rev-parse", "main").strip())
    assert "Budget 30k" in gm("--client", "acme", "index", cwd=tmp_path).out
    work = tmp_path / "work"
    work.mkdir()
    res = gm("clone", "../served/acme.git", cwd=work)  # relative, as git takes it
    assert res.code == 0, res.err
    assert res.out.startswith(f"Cloned ../served/acme.git into {work / 'acme'}: main at ")
    assert (work / "acme/cards/acme.md").exists()


@pytest.fixture
def daemon(remote: Path) -> Iterator[str]:
    """`git daemon` serving the remote's folder on 127.0.0.1, on a free port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = remote.parent
    proc = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            "--informative-errors",
            f"--base-path={base}",
            "--listen=127.0.0.1",
            f"--port={port}",
            str(base),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while True:  # until it accepts connections
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None, "git daemon exited"
            assert time.monotonic() < deadline, "git daemon never listened"
            time.sleep(0.02)
    try:
        yield f"git://127.0.0.1:{port}/{remote.name}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_clone_over_git_daemon(remote: Path, daemon: str, tmp_path: Path) -> None:
    res = gm("clone", daemon, str(tmp_path / "over-git"))
    assert res.code == 0, res.err
    check_ready(tmp_path / "over-git", git(remote, "rev-parse", "main").strip())
    assert git(tmp_path / "over-git", "remote", "get-url", "origin").strip() == daemon


def test_refusals_leave_nothing_behind(remote: Path, tmp_path: Path) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "mine.txt").write_text("mine")
    before = snapshot(busy)
    res = gm("clone", str(remote), str(busy))
    assert res.code == 2 and "is not empty" in res.err and snapshot(busy) == before

    empty = tmp_path / "empty.git"
    git(tmp_path, "init", "-q", "--bare", str(empty))
    res = gm("clone", str(empty), str(tmp_path / "a"))
    assert res.code == 3 and "has no main branch" in res.err and not (tmp_path / "a").exists()

    other = tmp_path / "other"
    git(tmp_path, "init", "-q", "-b", "main", str(other))
    (other / "x.txt").write_text("x")
    git(other, "add", "x.txt")
    git(other, "commit", "-qm", "x")
    res = gm("clone", str(other), str(tmp_path / "b"))
    assert res.code == 3 and "not a gitmem memory repo" in res.err and not (tmp_path / "b").exists()

    res = gm("clone", str(tmp_path / "nowhere.git"), str(tmp_path / "c"))
    assert res.code == 5 and res.err.startswith("gitmem: error: cannot clone ")
    assert len(res.err.strip().splitlines()) == 1 and not (tmp_path / "c").exists()
    plain = tmp_path / "plain.txt"  # git explains on its first line, then gives advice
    plain.write_text("not a repository\n")
    res = gm("clone", f"file://{plain}", str(tmp_path / "e"))
    assert res.code == 5 and res.err.count("\n") == 1, res.err
    assert res.err.rstrip().endswith(f"invalid gitfile format: {plain}")

    res = gm("clone", str(remote), str(tmp_path / "d"), "--client", "acme")
    assert res.code == 2 and "not both" in res.err
