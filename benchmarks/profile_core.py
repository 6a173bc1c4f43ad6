"""Where the time goes: one core workload of ``bench_core.py`` under cProfile.

Runs on a scratch copy of the generated repo and prints the top functions by
cumulative and by own time::

    .venv/bin/python benchmarks/profile_core.py write-session
    .venv/bin/python benchmarks/profile_core.py log --top 40

CLI workloads run ``gitmem.cli.main`` in-process (imports are not included; see
``python -X importtime`` for those).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import pstats
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench_core import SESSION_ID, copy_repo, gitmem_edit, plan_edits, warm
from generate import Params, cache_root, cached_repo, meta_of

from gitmem.cli import main as cli_main
from gitmem.index import build as index
from gitmem.memory import session_branches as sessions
from gitmem.memory.repo import MAIN, MemoryRepo

WORKLOADS = ("write-main", "write-session", "rebuild", "refresh", "index", "log", "show")


def edits(root: Path, projects: list[str], n: int, on_session: bool) -> Callable[[], None]:
    repo = MemoryRepo(root)
    branch = sessions.start(repo, SESSION_ID).branch if on_session else MAIN
    plan = plan_edits(repo, projects, n, 2)
    warm(repo)

    def run() -> None:
        for e in plan:
            gitmem_edit(repo, e, branch)
        repo.close()

    return run


def refresh_after(root: Path, projects: list[str], n: int) -> Callable[[], None]:
    repo = MemoryRepo(root)
    index.refresh(repo, MAIN)
    for e in plan_edits(repo, projects, n, 3):
        gitmem_edit(repo, e, MAIN)

    def run() -> None:
        index.refresh(repo, MAIN)
        repo.close()

    return run


def rebuild(root: Path) -> Callable[[], None]:
    def run() -> None:
        with MemoryRepo(root) as repo:
            index.rebuild(repo, MAIN)

    return run


def cli(*args: str) -> Callable[[], None]:
    def run() -> None:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            cli_main(list(args))

    return run


def workload(name: str, root: Path, projects: list[str], n: int) -> Callable[[], None]:
    if name.startswith("write-"):
        return edits(root, projects, n, name == "write-session")
    if name == "refresh":
        return refresh_after(root, projects, 10)
    if name == "rebuild":
        return rebuild(root)
    extra = [projects[0]] if name == "show" else []
    return cli("-C", str(root), name, *extra)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workload", choices=WORKLOADS)
    ap.add_argument("--cards", type=int, default=1000)
    ap.add_argument("--commits", type=int, default=10_000)
    ap.add_argument("--edits", type=int, default=100, help="for write-main / write-session")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--cache-dir", default=None)
    args = ap.parse_args(argv)
    src = cached_repo(Params(args.cards, args.commits), cache_root(args.cache_dir))
    work = Path(tempfile.mkdtemp(prefix="gitmem-profile."))
    try:
        run = workload(
            args.workload, copy_repo(src, work / "repo"), meta_of(src)["projects"], args.edits
        )
        prof = cProfile.Profile()
        prof.runcall(run)
        stats = pstats.Stats(prof)
        stats.sort_stats("cumulative").print_stats(args.top)
        stats.sort_stats("tottime").print_stats(args.top)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
