"""What the budget benchmarks share: generated histories, a clean environment, timing.

Every benchmark measures gitmem as a user meets it (the ``gitmem`` console script as a
process, or the public ``import gitmem`` API) against plain git in the same run, and prints
medians beside the budget of issue 21. It reports and never judges: exit status 0.
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
from collections.abc import Callable, Sequence
from pathlib import Path

import generate

GITMEM = str(Path(sys.executable).with_name("gitmem"))
PLAIN = ("-c", "core.hooksPath=/dev/null")  # plain git: without gitmem's hooks

_IDENTITY = {
    f"GIT_{role}_{part}": value
    for role in ("AUTHOR", "COMMITTER")
    for part, value in (("NAME", "Bench"), ("EMAIL", "bench@example.com"))
}


def bench_env(home: Path) -> dict[str, str]:
    """The environment of every timed process: no inherited ``GIT_*``, no API key, a
    scratch ``HOME`` and workspace, bytecode caching on as in a user's install."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GIT_", "ANTHROPIC_", "GITMEM_")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    home.mkdir(parents=True, exist_ok=True)
    return env | _IDENTITY | {"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}


def run(cmd: Sequence[str], cwd: Path, env: dict[str, str]) -> float:
    """Run ``cmd``; seconds it took. A failure stops the benchmark with its output."""
    start = time.perf_counter()
    proc = subprocess.run(list(cmd), cwd=cwd, env=env, capture_output=True, check=False)
    took = time.perf_counter() - start
    if proc.returncode:
        out = (proc.stdout + proc.stderr).decode(errors="replace")
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}) in {cwd}:\n{out}")
    return took


def git(cwd: Path, env: dict[str, str], *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, check=False)
    if proc.returncode:
        raise SystemExit(f"git {' '.join(args)} failed in {cwd}: {proc.stderr.decode()}")
    return proc.stdout.decode()


def history(commits: int, sections: int = 0, cards: int = 0) -> Path:
    """The cached generated client of ``commits`` commits (``cards`` cards, by default
    1,000, 100 at 1k; ``sections`` sections each, by default 4 to 7)."""
    params = generate.Params(cards or cards_at(commits), commits, sections=sections)
    return generate.cached_repo(params)


def add_shape(ap: argparse.ArgumentParser, sections: int = 0) -> None:
    """``--cards`` and ``--sections``: the shape of the generated history (another shape
    than generate.py's: ``--cards 5000 --sections 2``)."""
    ap.add_argument("--cards", type=int, default=0, help="cards (generate.py's: 1,000)")
    ap.add_argument("--sections", type=int, default=sections, help=f"sections a card ({sections})")


def shape(cards: int, sections: int, commits: int) -> str:
    """How a shape is printed: ``5,000 cards x 2 sections``."""
    made = f"{cards or cards_at(commits):,} cards"
    return f"{made} x {sections} sections" if sections else f"{made}, generate.py's sections"


MEMGIT = "memgit==0.13.0"


def memgit_python(explicit: str | None = None) -> Path:
    """A Python with memgit 0.13 installed from the package index, in a virtualenv of its
    own under the cache directory (memgit requires ``mcp<2``, gitmem ``mcp>=2``)."""
    if explicit:
        return Path(explicit)
    venv = generate.cache_root() / "memgit-venv"
    py = venv / "bin" / "python"
    if not (venv / "bin" / "memgit").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", MEMGIT], check=True)
    return py


def cards_at(commits: int) -> int:
    return 100 if commits < 10_000 else 1000


def copy_of(src: Path, dest: Path) -> Path:
    """A scratch copy of a repo, its index cache with it (timed runs change it)."""
    shutil.copytree(src, dest, symlinks=True)
    return dest


def scratch() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="gitmem-bench-")


def interleaved(
    cases: dict[str, Callable[[], float]], rounds: int, warmup: int = 1
) -> dict[str, float]:
    """Median seconds of each case, run in turn each round (the order reversed every other
    round, so a slow spell of the shared machine falls on every case alike)."""
    names = list(cases)
    times: dict[str, list[float]] = {n: [] for n in names}
    for r in range(warmup + rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            took = cases[name]()
            if r >= warmup:
                times[name].append(took)
    return {n: statistics.median(t) for n, t in times.items()}


def add_sizes(ap: argparse.ArgumentParser, default: str, quick: str) -> None:
    ap.add_argument("--sizes", default=default, help=f"commits, comma-separated ({default})")
    ap.add_argument("--quick", action="store_true", help=f"--sizes {quick}, fewer rounds")
    ap.set_defaults(quick_sizes=quick)


def sizes(args: argparse.Namespace) -> list[int]:
    """The history sizes to run: ``--sizes 1000,10000``, or ``--quick``'s."""
    return [int(s) for s in (args.quick_sizes if args.quick else args.sizes).split(",")]


def row(what: str, figure: str, budget: str, met: bool | None = None) -> None:
    mark = "" if met is None else ("  met" if met else "  MISSED")
    print(f"{what:<62} {figure:>16}" + (f"   budget {budget}{mark}" if budget else ""))


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def machine() -> None:
    """The run's context: the commit measured, cores, load, Python and git."""
    here = Path(__file__).resolve().parent

    def ask(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(here), *args], capture_output=True, text=True
        ).stdout

    commit = ask("rev-parse", "--short", "HEAD").strip()
    commit += " (gitmem/ changed since)" if ask("status", "--porcelain", "--", "../gitmem") else ""
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"gitmem {commit}; {os.cpu_count()} cores, load {load}; {platform.system()} "
        f"{platform.release()}; Python {platform.python_version()}; {git_version.strip()}"
    )
