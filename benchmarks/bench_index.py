"""Budgets: ``gitmem index`` after 10 plain commits <= 2x a cached ``gitmem index`` at 100k
commits; ``gitmem reindex`` at 100k commits <= 60 s wall and <= 300 MB peak RSS, on
generate.py's history and on one of 1,000 cards with 75 sections each (``--cards N
--sections S``: another shape in the second's place; the refresh then runs on it too).

Rebuild: ``gitmem.index.build.rebuild`` in a fresh process (nothing of the cache is
believed) <= 3x a raw ``git log --format=%H%x00%(trailers:only,unfold)`` of the same
history, 10k commits, both shapes (the process's start-up not counted).

Refresh: each round 10 hand edits committed with plain git (hooks off, not timed), then
``gitmem index`` (it folds them in) and ``gitmem index`` again (cached). Reindex: ``gitmem
reindex`` as a process; its peak is the largest resident set of it or any process it
started (``getrusage(RUSAGE_CHILDREN)`` of a wrapper). Medians::

    .venv/bin/python benchmarks/bench_index.py                 # 100k commits
    .venv/bin/python benchmarks/bench_index.py --quick         # 10k commits
    .venv/bin/python benchmarks/bench_index.py --rebuild-only  # the rebuild, 10k commits
    .venv/bin/python benchmarks/bench_index.py --quick --cards 5000 --sections 2  # a third shape
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import common

# Runs a command; prints the largest resident set (KiB) of it or any descendant.
PEAK = (
    "import resource, subprocess, sys\n"
    "proc = subprocess.run(sys.argv[1:], capture_output=True)\n"
    "sys.stderr.buffer.write(proc.stderr)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(proc.returncode)\n"
)


def hand_commits(root: Path, env: dict[str, str], projects: list[str], n: int) -> None:
    for i in range(10):
        card = root / "cards" / f"{projects[(n * 10 + i) % len(projects)]}.md"
        card.write_text(card.read_text() + f"\n- a note typed by hand, {n}.{i}\n")
        common.git(root, env, *common.PLAIN, "commit", "-q", "-am", f"Notes by hand {n}.{i}")


def refresh(size: int, rounds: int, cards: int = 0, sections: int = 0) -> None:
    with common.scratch() as tmp:
        work = Path(tmp)
        env = common.bench_env(work / "home")
        root = common.copy_of(common.history(size, sections, cards), work / "repo")
        projects = sorted(p.stem for p in (root / "cards").glob("*.md"))
        common.run([common.GITMEM, "index"], root, env)
        after, cached = [], []
        for n in range(rounds):
            hand_commits(root, env, projects, n)
            after.append(common.run([common.GITMEM, "index"], root, env))
            cached.append(common.run([common.GITMEM, "index"], root, env))
    a, c = statistics.median(after), statistics.median(cached)
    print(f"{size:,} commits, {common.shape(cards, sections, size)}:")
    common.row("  gitmem index after 10 plain commits", common.ms(a), "")
    common.row("  gitmem index, cached", common.ms(c), "")
    common.row("  after 10 / cached", f"{a / c:.2f}x", "<= 2x", a / c <= 2)


REBUILD = (
    "import sys, time\n"
    "from gitmem.index import build\n"
    "from pathlib import Path\n"
    "from gitmem.memory.repo import MemoryRepo\n"
    "repo = MemoryRepo(Path(sys.argv[1]))\n"
    "start = time.perf_counter()\n"
    "build.rebuild(repo)\n"
    "print(time.perf_counter() - start)\n"
)
RAW_LOG = ("log", "--format=%H%x00%(trailers:only,unfold)", "main")


def rebuild(size: int, sections: int, rounds: int, cards: int = 0) -> None:
    with common.scratch() as tmp:
        work = Path(tmp)
        env = common.bench_env(work / "home")
        root = common.copy_of(common.history(size, sections, cards), work / "repo")

        def ours() -> float:
            proc = subprocess.run(
                [sys.executable, "-c", REBUILD, str(root)], env=env, capture_output=True, text=True
            )
            if proc.returncode:
                raise SystemExit(f"rebuild failed:\n{proc.stderr}")
            return float(proc.stdout.split()[-1])

        got = common.interleaved(
            {"rebuild": ours, "git log": lambda: common.run(["git", *RAW_LOG], root, env)},
            rounds,
        )
    a, b = got["rebuild"], got["git log"]
    print(f"{size:,} commits, {common.shape(cards, sections, size)}:")
    common.row("  rebuild (gitmem.index.build.rebuild)", common.ms(a), "")
    common.row("  git log --format=%H%x00%(trailers:only,unfold)", common.ms(b), "")
    common.row("  rebuild / git log", f"{a / b:.1f}x", "<= 3x", a <= 3 * b)


def reindex(size: int, sections: int, rounds: int, cards: int = 0) -> None:
    with common.scratch() as tmp:
        work = Path(tmp)
        env = common.bench_env(work / "home")
        root = common.copy_of(common.history(size, sections, cards), work / "repo")
        walls, peaks = [], []
        for _ in range(rounds):
            start = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-c", PEAK, common.GITMEM, "reindex"],
                cwd=root,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            walls.append(time.perf_counter() - start)
            if proc.returncode:
                raise SystemExit(f"gitmem reindex failed:\n{proc.stderr}")
            peaks.append(int(proc.stdout.split()[-1]) / 1024)
    wall, peak = statistics.median(walls), statistics.median(peaks)
    print(f"{size:,} commits, {common.shape(cards, sections, size)}:")
    common.row("  gitmem reindex wall", f"{wall:.1f} s", "<= 60 s", wall <= 60)
    common.row("  gitmem reindex peak RSS", f"{peak:.0f} MB", "<= 300 MB", peak <= 300)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common.add_sizes(ap, "100000", "10000")
    ap.add_argument("--rounds", type=int, default=11, help="refresh rounds (11)")
    ap.add_argument("--reindex-rounds", type=int, default=3)
    common.add_shape(ap, sections=75)  # the second shape: 1,000 cards x 75 sections
    ap.add_argument("--rebuild-only", action="store_true", help="only the rebuild, 10k")
    args = ap.parse_args()
    common.machine()
    shapes = [(0, 0), (args.cards, args.sections)]  # (cards, sections); 0: generate.py's
    for cards, sections in shapes:
        rebuild(10_000, sections, 3 if args.quick or args.rebuild_only else 7, cards)
    if args.rebuild_only:
        return 0
    for size in common.sizes(args):
        for cards, sections in shapes[: 2 if args.cards else 1]:  # another shape's, asked for
            refresh(size, 5 if args.quick else args.rounds, cards, sections)
        for cards, sections in shapes:
            reindex(size, sections, 1 if args.quick else args.reindex_rounds, cards)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
