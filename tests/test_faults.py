"""Fault injection: writers killed with SIGKILL at random and at chosen points, a full
disk, a read-only disk. After each fault any gitmem command leaves a working tree in
step with HEAD, a repo git fsck finds clean, an index reindex agrees with, every edit
a writer acknowledged present, and no lock behind.

Seeded and CI-sized; ``GITMEM_FAULT_ROUNDS`` raises the number of random kills. Each
test prints its tally (tries, failures, data lost), the figures docs/reliability.md
quotes: ``pytest tests/test_faults.py -m '' -n 0 -s`` (they are ``slow`` tests; ``-n 0``
runs them in this process, whose output ``-s`` shows).
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem.setup.init import init_repo

from helpers import git, gm

ROUNDS = int(os.environ.get("GITMEM_FAULT_ROUNDS", "50"))
SEED = 20261201

# The writer runs as the console script does; the prelude may arm a crash point.
WRITER = """
import os, sys
point = os.environ.get("CRASH_AT")
if point:
    import gitmem.ops.worktree as w
    def die(*a, **k):
        os.kill(os.getpid(), 9)
    def before(mod, name):
        real = getattr(mod, name)
        def wrapped(*a, **k):
            die()
            return real(*a, **k)
        setattr(mod, name, wrapped)
    def after(mod, name):
        real = getattr(mod, name)
        def wrapped(*a, **k):
            out = real(*a, **k)
            die()
            return out
        setattr(mod, name, wrapped)
    if point == "before-cas":
        before(w, "cas_fast")
    elif point == "after-cas":
        after(w, "cas_fast")
    elif point == "before-index":
        before(w, "_update_index")
    elif point == "index-updated":
        after(w, "_update_index")
    elif point == "before-clear":
        before(w, "clear_intent")
from gitmem.cli import main
main(sys.argv[1:])
"""

POINTS = [
    "before-cas",
    "after-cas",
    "before-index",
    "index-updated",
    "before-clear",
]


class Tally:
    def __init__(self, name: str) -> None:
        self.name, self.tries, self.failures, self.lost = name, 0, 0, 0
        self.interrupted = 0  # tries whose writer was killed or refused (the rest finished)
        self.landed = 0  # of those, killed after its commit landed: the tree had to follow

    def report(self) -> None:
        print(
            f"\n{self.name}: {self.tries} tries ({self.interrupted} interrupted, "
            f"{self.landed} of them after the commit landed), "
            f"{self.failures} failures, {self.lost} acknowledged edits lost"
        )


def writer(client: Path, section: str, point: str | None = None) -> subprocess.Popen[bytes]:
    env = {**os.environ, "CRASH_AT": point or ""}
    new = f"## {section}\nfact {section}\n"
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            WRITER,
            "-C",
            str(client),
            "write",
            "acme",
            "--old",
            "",
            "--new",
            new,
            "--section",
            section,
            "--keywords",
            "k",
            "--summary",
            f"fact {section}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def locks_left(client: Path) -> list[str]:
    git_dir = client / ".git"
    return sorted(
        str(p.relative_to(git_dir))
        for p in git_dir.rglob("*.lock")
        if not str(p.relative_to(git_dir)).startswith("gitmem/")
    )


def check(client: Path, acknowledged: list[str], tally: Tally, command: list[str]) -> None:
    """Run one gitmem command after the fault, then every invariant."""
    res = gm("-C", str(client), *command)
    problems = []
    if res.code not in (0, 3):
        problems.append(f"{command}: exit {res.code}: {res.err.strip()}")
    status = git(client, "status", "--porcelain", "--untracked-files=all")
    if status:
        problems.append(f"git status after {command}: {status!r}")
    card = git(client, "show", "main:cards/acme.md", check=False)
    lost = [s for s in acknowledged if f"## {s}\n" not in card]
    tally.lost += len(lost)
    if lost:
        problems.append(f"acknowledged edits lost: {lost}")
    if locks_left(client):
        problems.append(f"locks left: {locks_left(client)}")
    if problems:
        tally.failures += 1
    assert not problems, problems


def final_checks(client: Path) -> None:
    fsck = subprocess.run(
        ["git", "fsck", "--full", "--strict"], cwd=client, capture_output=True, check=False
    )
    assert fsck.returncode == 0, fsck.stderr
    res = gm("-C", str(client), "reindex", "--json")
    assert res.code == 0 and '"matches_cache": true' in res.out, res.out
    assert not list(client.rglob(".*.gitmem-tmp"))
    # git leaves its own tmp_obj_* where a full disk stopped it, as after `git add`; git
    # prunes them (gitmem writes no files of its own there)
    git(client, "prune", "--expire=now")
    assert not list((client / ".git/objects").rglob("tmp_*"))


def _duration(client: Path) -> float:
    took = []
    for i in range(3):
        started = time.monotonic()
        proc = writer(client, f"warm-{i}")
        assert proc.wait() == 0, proc.stderr.read() if proc.stderr else ""
        took.append(time.monotonic() - started)
    return sorted(took)[1]


@pytest.mark.slow
def test_writers_killed_at_random_moments(seeded: Path) -> None:
    client, rng, tally = seeded, random.Random(SEED), Tally("kill -9 at a random moment")
    acknowledged = [f"warm-{i}" for i in range(3)]
    took = _duration(client)
    commands = [["recover"], ["index"], ["show", "acme"], ["log"], ["status"]]
    for i in range(ROUNDS):
        section = f"r{i}"
        proc = writer(client, section)
        # Most of a write is Python starting; aim at its last part, where files change.
        time.sleep(rng.uniform(0.6 * took, 1.1 * took))
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        code = proc.wait()
        if code == 0:
            acknowledged.append(section)
        else:
            tally.interrupted += 1
            tally.landed += f"## {section}\n" in git(client, "show", "main:cards/acme.md")
        tally.tries += 1
        check(client, acknowledged, tally, rng.choice(commands[:4]))
    final_checks(client)
    tally.report()


@pytest.mark.slow
@pytest.mark.parametrize("point", POINTS)
def test_writers_killed_at_each_step(seeded: Path, point: str) -> None:
    client, tally = seeded, Tally(f"kill -9 at {point}")
    acknowledged: list[str] = []
    for i in range(3):
        proc = writer(client, f"{point}-{i}", point)
        assert proc.wait() == -9
        tally.tries += 1
        tally.interrupted += 1
        # The next command is a person's `git commit -a`: it must not undo the landed edit.
        landed = f"## {point}-{i}\n" in git(client, "show", "main:cards/acme.md")
        tally.landed += landed
        subprocess.run(
            ["git", "commit", "-qam", "mine"], cwd=client, capture_output=True, check=False
        )
        if landed:
            assert f"## {point}-{i}\n" in git(client, "show", "main:cards/acme.md")
        check(client, acknowledged, tally, ["recover"])
        ok = writer(client, f"{point}-ok-{i}")  # the next edit is not refused
        assert ok.wait() == 0, ok.stderr.read() if ok.stderr else ""
        acknowledged.append(f"{point}-ok-{i}")
    final_checks(client)
    tally.report()


# -- the disk ----------------------------------------------------------------------------------
@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    path.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        check=False,
    )
    if proc.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` until about ``leave`` bytes are free."""
    filler = disk / "filler"
    st = os.statvfs(disk)
    free = st.f_bavail * st.f_frsize
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        with contextlib.suppress(OSError):
            os.write(fd, b"\0" * max(free - leave, 0))
        while leave == 0:  # to the last byte
            try:
                os.write(fd, b"\0" * 512)
            except OSError:
                break
    finally:
        os.close(fd)
    return filler


@pytest.mark.slow
def test_a_full_disk_at_every_step(tmp_path: Path) -> None:
    tally = Tally("full disk")
    with tmpfs(tmp_path / "disk", "8m") as disk:
        client = disk / "client"
        init_repo(client)
        assert (
            gm(
                "-C",
                str(client),
                "write",
                "acme",
                "--old",
                "",
                "--new",
                "## Start\nx\n",
                "--section",
                "start",
                "--keywords",
                "k",
                "--summary",
                "s",
            ).code
            == 0
        )
        acknowledged: list[str] = []
        for i, leave in enumerate([0, 0, 1024, 4096, 8192, 12288, 16384, 24576, 32768, 65536]):
            filler = fill(disk, leave)
            proc = writer(client, f"d{i}")
            code = proc.wait()
            err = proc.stderr.read().decode() if proc.stderr else ""
            tally.tries += 1
            if code == 0:
                acknowledged.append(f"d{i}")
            else:
                tally.interrupted += 1
                lines = err.strip().splitlines()
                assert code != 70 and len(lines) == 1, err
                assert lines[0].startswith("gitmem: error: "), err
            filler.unlink()
            check(client, acknowledged, tally, ["recover"])
        final_checks(client)
    tally.report()


def test_a_read_only_disk_still_reads(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "disk", "8m") as disk:
        client = disk / "client"
        init_repo(client)
        assert (
            gm(
                "-C",
                str(client),
                "write",
                "acme",
                "--old",
                "",
                "--new",
                "## Start\nx\n",
                "--section",
                "start",
                "--keywords",
                "k",
                "--summary",
                "s",
            ).code
            == 0
        )
        shutil.rmtree(client / ".git/gitmem")  # no cache: reading must not need to write one
        expected = {c: gm("-C", str(client), *c).out for c in (("show", "acme"), ("log",))}
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        for command, out in expected.items():
            res = gm("-C", str(client), *command)
            assert res.code == 0, res.err
            assert res.out == out
        res = gm("-C", str(client), "index")
        assert res.code == 0 and "start" in res.out, res.err
        res = gm(
            "-C",
            str(client),
            "write",
            "acme",
            "--old",
            "x",
            "--new",
            "y",
            "--section",
            "start",
            "--keywords",
            "k",
            "--summary",
            "s",
        )
        assert res.code == 5, res.err
        line = res.err.strip()
        assert len(line.splitlines()) == 1 and "read-only" in line, res.err


def test_a_file_size_limit_leaves_no_lock_of_git_behind(seeded: Path) -> None:
    # Under `ulimit -f`, a git that writes past the limit must fail as on a full disk and
    # take its lock away, not be killed by SIGXFSZ holding .git/index.lock: that lock would
    # then stop every later command as if another git process were running.
    import resource

    limit = (seeded / ".git" / "index").stat().st_size + 16  # the next index is larger

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = subprocess.run(
        [sys.executable, "-m", "gitmem", "-C", str(seeded), "write", "other", "--old", "",
         "--new", "## Limit\nfact\n", "--section", "limit", "--keywords", "k", "--summary", "s"],
        capture_output=True, text=True, preexec_fn=small_files, check=False, timeout=120,
    )  # fmt: skip
    assert proc.returncode != 70 and "Traceback" not in proc.stderr, proc.stderr
    assert "another git process" not in proc.stderr, proc.stderr
    assert not (seeded / ".git" / "index.lock").exists()
    after = gm("-C", str(seeded), "status")
    assert after.code == 0, after.err
    assert git(seeded, "status", "--porcelain") == ""
