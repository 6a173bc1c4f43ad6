"""The refresh row alone: ``gitmem index`` (the console script) right after 10 new commits
against a cached ``gitmem index``, at 100,000 commits, for one or more versions of gitmem.

Each version (NAME=PATH of a gitmem source tree, put first on PYTHONPATH for its runs)
works on its own copy of the cached client; the versions alternate each round; medians::

    .venv/bin/python benchmarks/bench_index_refresh.py --rounds 15 new=. old=/tmp/old-tree
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import bench_core as core
from generate import Params, cache_root, cached_repo

GITMEM = str(Path(sys.executable).with_name("gitmem"))
_EDIT = """
import sys
sys.path.insert(0, sys.argv[3])
import bench_core as core
from generate import meta_of
from pathlib import Path
from gitmem.memory.repo import MemoryRepo
with MemoryRepo(Path(sys.argv[1])) as repo:
    for e in core.plan_edits(repo, meta_of(Path(sys.argv[4]))["projects"], 10, int(sys.argv[2])):
        core.gitmem_edit(repo, e, "main")
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("versions", nargs="+", help="NAME=PATH of a gitmem source tree")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--commits", type=int, default=100_000)
    args = ap.parse_args(argv)
    versions = dict(v.split("=", 1) for v in args.versions)
    src = cached_repo(Params(1000, args.commits, 1), cache_root())
    here = str(Path(__file__).parent.resolve())
    work = Path(tempfile.mkdtemp(prefix="gitmem-bench-refresh."))
    try:
        return _run(args.rounds, versions, src, here, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(rounds: int, versions: dict[str, str], src: Path, here: str, work: Path) -> int:
    roots = {name: core.copy_repo(src, work / name) for name in versions}

    def env(name: str) -> dict[str, str]:
        return core.CLI_ENV | {"PYTHONPATH": f"{Path(versions[name]).resolve()}:{here}"}

    def index(name: str) -> float:
        began = time.perf_counter()
        subprocess.run(
            [GITMEM, "-C", str(roots[name]), "index"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
            env=env(name),
        )
        return time.perf_counter() - began

    for name in versions:  # caches written, bytecode compiled
        index(name)
        index(name)
    cold: dict[str, list[float]] = {n: [] for n in versions}
    cached: dict[str, list[float]] = {n: [] for n in versions}
    print(f"load {os.getloadavg()[0]:.2f} at {time.strftime('%H:%M:%S')}")
    names = list(versions)
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            subprocess.run(
                [sys.executable, "-c", _EDIT, str(roots[name]), str(9000 + r), here, str(src)],
                check=True,
                env=env(name),
            )
            cold[name].append(index(name))
            cached[name].append(index(name))
    for name in versions:
        c, k = statistics.median(cold[name]) * 1000, statistics.median(cached[name]) * 1000
        print(
            f"{name}: `gitmem index` after 10 commits {c:.0f} ms vs cached {k:.0f} ms "
            f"({c / k:.2f}x)"
        )
    print(f"load {os.getloadavg()[0]:.2f} at {time.strftime('%H:%M:%S')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
