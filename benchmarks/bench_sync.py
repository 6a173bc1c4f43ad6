"""``gitmem sync`` of 1,000 new commits between two clones, through a real git daemon,
against plain ``git pull --rebase && git push`` of the same commits, measured in the same run.

Both sides start from the same memory (``gitmem init`` and 50 cards) and get the same 1,000
new commits (``gitmem.memory.edit.write_card`` edits with trailers, made once before timing). Each
repetition makes fresh copies: a bare remote served by ``git daemon`` on 127.0.0.1, a
"laptop" holding the new commits, a "desktop" clone. Timed, as processes:

- one side: laptop ``gitmem sync`` (pushes 1,000), then desktop ``gitmem sync`` (fetches,
  fast-forwards, refreshes the index); baseline: ``git pull --rebase && git push`` on each.
- both sides: the same, with 10 commits of the desktop's own on other cards, then laptop
  syncing again (gitmem merges; the baseline rebases the 10).

The baseline runs with hooks off (``core.hooksPath=/dev/null``): plain git, without the
index refresh gitmem's hooks would add to it. It reports and never judges: exit status 0.

    .venv/bin/python benchmarks/bench_sync.py [--commits 1000] [--repeat 5]
    .venv/bin/python benchmarks/bench_sync.py --receive [--against OTHER/bin/gitmem]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gitmem.memory.edit import write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.setup.init import init_repo

GITMEM = str(Path(sys.executable).with_name("gitmem"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import daemon  # noqa: E402

# As a user's gitmem runs: bytecode caching on (bench_core.CLI_ENV says why).
ENV = {
    **{
        k: v
        for k, v in os.environ.items()
        if not k.startswith("GIT_") and k != "PYTHONDONTWRITEBYTECODE"
    },
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}
PLAIN = ["-c", "core.hooksPath=/dev/null"]


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, env=ENV, capture_output=True, check=False)
    if proc.returncode:
        raise SystemExit(f"git {' '.join(args)} failed in {cwd}: {proc.stderr.decode()}")
    return proc.stdout.decode()


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, check=False)
    took = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(
            f"{' '.join(cmd)} failed in {cwd}: {proc.stderr.decode()}{proc.stdout.decode()}"
        )
    return took


def gitmem_sync(path: Path, exe: str = GITMEM) -> float:
    return timed([exe, "-C", str(path), "sync"], path)


def plain_sync(path: Path) -> float:
    return timed(
        [
            "sh",
            "-c",
            "git -c core.hooksPath=/dev/null pull -q --rebase && "
            "git -c core.hooksPath=/dev/null push -q",
        ],
        path,
    )


def edit(repo: MemoryRepo, card: int, n: int, branch: str = "main") -> None:
    project = f"card-{card:03d}"
    old = repo.store.read_blob(f"refs/heads/{branch}:cards/{project}.md")
    assert old is not None
    line = old.decode().split("\n")[3]
    write_card(
        repo,
        project,
        line,
        f"value {n}",
        IndexEntry.make("notes", ["bench", f"k{n % 7}"], f"{project} notes now {n}"),
        session="20261130-bench",
        actor="agent",
        branch=branch,
    )


@contextmanager
def git_daemon(base: Path) -> Iterator[int]:
    with daemon.git_daemon(base, ENV) as port:
        yield port


def prepare(work: Path, commits: int) -> Path:
    """A template: the base memory, and a source repo holding the new commits on ``new``."""
    tpl = work / "template"
    base = tpl / "base"
    init_repo(base)
    with MemoryRepo(base) as repo:
        for card in range(50):
            text = f"# Card {card}\n\n## Notes\nvalue start\n\n## Other\nkeep\n"
            write_card(
                repo, f"card-{card:03d}", "", text, IndexEntry.make("notes", ["bench"], "created")
            )
    git(base, "branch", "new")
    git(base, "branch", "own")
    with MemoryRepo(base) as repo:
        for n in range(commits):
            edit(repo, n % 40, n, "new")  # cards 0-39: the laptop's
        for n in range(10):
            edit(repo, 40 + n, n, "own")  # cards 40-49: the desktop's own
    return base


def fresh(work: Path, base: Path, name: str, url_root: str, gitmem_side: bool) -> tuple[Path, Path]:
    """bare remote (at base's main) + laptop (main = base's ``new``) + desktop clone."""
    root = work / name
    bare = root / "remote.git"
    git(work, "clone", "-q", "--bare", str(base), str(bare))
    for ref in ("new", "own"):
        git(bare, "branch", "-D", ref)
    url = f"{url_root}/{name}/remote.git"
    laptop, desktop = root / "laptop", root / "desktop"
    shutil.copytree(base, laptop, symlinks=True)
    git(laptop, "remote", "add", "origin", url)
    git(laptop, "fetch", "-q", "origin")
    git(laptop, "branch", "-q", "--set-upstream-to=origin/main", "main")
    git(laptop, *PLAIN, "merge", "-q", "--ff-only", "new")
    git(work, "clone", "-q", url, str(desktop))
    if gitmem_side:
        subprocess.run(
            [GITMEM, "-C", str(laptop), "index"], env=ENV, capture_output=True, check=True
        )
        subprocess.run(
            [GITMEM, "-C", str(desktop), "index"], env=ENV, capture_output=True, check=True
        )
    return laptop, desktop


def one_round(
    work: Path, base: Path, url_root: str, rep: int, both: bool
) -> tuple[float, float, str, str]:
    times = []
    tips = []
    for side, run in (("g", gitmem_sync), ("p", plain_sync)):
        laptop, desktop = fresh(
            work, base, f"{side}{rep}{'b' if both else 'o'}", url_root, side == "g"
        )
        if both:
            git(desktop, "fetch", "-q", str(base), "own")
            git(desktop, *PLAIN, "merge", "-q", "--ff-only", "FETCH_HEAD")
        took = run(laptop) + run(desktop)
        if both:
            took += run(laptop)
        times.append(took)
        tips.append(git(desktop, "rev-parse", "main").strip())
        assert git(laptop, "rev-parse", "main") == git(desktop, "rev-parse", "main")
        if both:
            assert (desktop / "cards/card-045.md").read_text() == (
                laptop / "cards/card-045.md"
            ).read_text()
    return times[0], times[1], tips[0], tips[1]


def receive(
    work: Path, commits: int, repeat: int, against: str | None = None
) -> tuple[float, float, float | None]:
    """Receiving ``commits`` new commits with one local commit of its own: only the
    receiving side's command is timed (the new commits are already on the remote).
    Returns the medians (s) of ``gitmem sync``, of ``git pull --rebase && git push`` and,
    with ``against`` (another install's ``gitmem``), of that one's ``gitmem sync``, the
    three run in turn on identical copies."""
    base = prepare(work, commits)
    ours: list[float] = []
    plain: list[float] = []
    other: list[float] = []
    with git_daemon(work) as port:
        url_root = f"git://127.0.0.1:{port}"
        for rep in range(repeat):
            pair = [("g", GITMEM, ours), ("p", None, plain)]
            if against:
                pair.append(("a", against, other))
            for side, exe, out in pair if rep % 2 == 0 else pair[::-1]:
                laptop, desktop = fresh(work, base, f"r{side}{rep}", url_root, side == "g")
                gitmem_sync(laptop)  # the remote gets the new commits (not timed)
                with MemoryRepo(desktop) as repo:
                    edit(repo, 45, 1)  # the desktop's own commit, on another card
                if exe is not None:
                    subprocess.run(
                        [exe, "-C", str(desktop), "index"], env=ENV, capture_output=True, check=True
                    )
                out.append(gitmem_sync(desktop, exe) if exe is not None else plain_sync(desktop))
                assert git(laptop, "rev-parse", "main") != git(desktop, "rev-parse", "main")
    for name, runs in (("gitmem sync", ours), ("plain git", plain), ("against", other)):
        if runs:
            print(f"  {name} runs (ms): {' '.join(f'{x * 1000:.0f}' for x in runs)}")
    return (
        statistics.median(ours),
        statistics.median(plain),
        statistics.median(other) if other else None,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--commits", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--receive",
        action="store_true",
        help="only the receiving side's sync, with one local commit",
    )
    ap.add_argument(
        "--against",
        metavar="GITMEM",
        help="with --receive: also time this other install's gitmem, in turn",
    )
    args = ap.parse_args()
    if args.receive:
        with tempfile.TemporaryDirectory(prefix="gitmem-bench-sync-") as tmp:
            g, p, a = receive(Path(tmp), args.commits, args.repeat, args.against)
        print(
            f"receive {args.commits} + 1 local: gitmem sync {g * 1000:.0f} ms; "
            f"git pull --rebase && git push {p * 1000:.0f} ms; ratio {g / p:.2f}x (goal <= 1.3x)"
        )
        if a is not None:
            print(f"  {args.against}: gitmem sync {a * 1000:.0f} ms; ratio {a / p:.2f}x")
        print(f"  load {os.getloadavg()[0]:.2f}")
        return
    with tempfile.TemporaryDirectory(prefix="gitmem-bench-sync-") as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        base = prepare(work, args.commits)
        print(f"prepared {args.commits} commits in {time.perf_counter() - t0:.1f} s")
        with git_daemon(work) as port:
            url_root = f"git://127.0.0.1:{port}"
            for both in (False, True):
                ours, plain = [], []
                for rep in range(args.repeat):
                    g, p, _, _ = one_round(work, base, url_root, rep, both)
                    ours.append(g)
                    plain.append(p)
                gm, pm = statistics.median(ours), statistics.median(plain)
                label = "both sides (10 own commits on desktop)" if both else "one side"
                print(
                    f"{label}: gitmem sync median {gm * 1000:.0f} ms "
                    f"(runs {', '.join(f'{x * 1000:.0f}' for x in ours)}); "
                    f"git pull --rebase && git push median {pm * 1000:.0f} ms "
                    f"(runs {', '.join(f'{x * 1000:.0f}' for x in plain)}); ratio {gm / pm:.2f}x "
                    f"(goal <= 1.5x)"
                )
    load = os.getloadavg()
    git_version = subprocess.run(
        ["git", "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    print(
        f"machine: {os.cpu_count()} cores, load {load[0]:.2f}, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, {git_version}"
    )


if __name__ == "__main__":
    main()
