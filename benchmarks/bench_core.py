"""Benchmarks of gitmem's core against plain git, measured in the same run.

Prints a table (metric, value, baseline, ratio, goal, met) and the goals missed.
It reports and never judges: the exit status is 0 whatever the figures are.
On a shared, noisy machine compare ratios, not absolute times::

    .venv/bin/python benchmarks/bench_core.py            # 1,000 cards, 10,000 commits
    .venv/bin/python benchmarks/bench_core.py --quick    # a small smoke run
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from functools import partial
from pathlib import Path

from generate import Params, cache_root, cached_repo, meta_of

import gitmem
from gitmem.git.runner import clean_env
from gitmem.index import build as index
from gitmem.memory import session_branches as sessions
from gitmem.memory.cards import card_path, sections
from gitmem.memory.edit import write_card
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.memory.trailers import IndexEntry, edit_message

SESSION_ID = "20260101-090000-be0c"
ACTOR = "agent"


# -- figures -------------------------------------------------------------------------
@dataclass
class Row:
    metric: str
    value: str
    baseline: str
    ratio: str
    goal: str
    met: bool | None  # None: informational, no goal


def median_ms(samples: Sequence[float]) -> float:
    return statistics.median(samples) * 1000


def p95_ms(samples: Sequence[float]) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)] * 1000


def timed(fn: Callable[[], object]) -> float:
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


# Commands run as a user's would: with bytecode caching on (some shells here export
# PYTHONDONTWRITEBYTECODE=1, which would recompile gitmem's modules on every start while
# click's come precompiled from its wheel). The warm-up round writes the caches.
CLI_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_quiet(cmd: list[str], cwd: Path) -> None:
    subprocess.run(
        cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True, env=CLI_ENV
    )


def git_quiet(root: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, check=True, env=clean_env()
    )
    return proc.stdout.decode().strip()


def copy_repo(src: Path, dst: Path) -> Path:
    """A private copy of the cached repo, its index stat data refreshed (not timed).

    Pack files are immutable: they are hard-linked, not copied, so setting up a run
    does not leave tens of MB for the disk to write back while the edits are timed.
    """

    def link_or_copy(a: str, b: str) -> object:
        if "/objects/pack/" in a:
            try:
                os.link(a, b)
                return b
            except OSError:
                pass
        return shutil.copy2(a, b)

    shutil.copytree(src, dst, symlinks=True, copy_function=link_or_copy)
    git_quiet(dst, "update-index", "-q", "--refresh")
    return dst


# -- the edits ---------------------------------------------------------------------
@dataclass(frozen=True)
class PlannedEdit:
    project: str
    old: str
    new: str
    entry: IndexEntry
    message: str


def plan_edits(repo: MemoryRepo, projects: list[str], n: int, seed: int) -> list[PlannedEdit]:
    """``n`` surgical edits (one bullet line of one section each), distinct cards first."""
    rng = random.Random(seed)
    order = rng.sample(projects, len(projects))
    texts: dict[str, str] = {}
    plan = []
    for i in range(n):
        project = order[i % len(order)]
        if project not in texts:
            raw = repo.store.read_blob(f"refs/heads/{MAIN}:{card_path(project)}") or b""
            texts[project] = raw.decode("utf-8")
        edit = _one_edit(rng, project, texts[project], f"{seed}.{i}")
        texts[project] = texts[project].replace(edit.old, edit.new, 1)
        plan.append(edit)
    return plan


def _one_edit(rng: random.Random, project: str, text: str, tag: str) -> PlannedEdit:
    lines = text.split("\n")
    section = rng.choice(
        [s for s in sections(text) if any(ln.startswith("- ") for ln in lines[s.start : s.end])]
    )
    bullets = [ln for ln in lines[section.start : section.end] if ln.startswith("- ")]
    old = rng.choice(bullets)
    new = f"- 2026-01-01: {section.heading.lower()} updated during the benchmark (bench {tag})"
    entry = IndexEntry.make(section.id, [section.heading.lower(), "benchmark"], f"bench {tag}")
    message = edit_message(project, entry, session=SESSION_ID, actor=ACTOR)
    return PlannedEdit(project, old, new, entry, message)


def gitmem_edit(repo: MemoryRepo, e: PlannedEdit, branch: str) -> None:
    write_card(
        repo, e.project, e.old, e.new, e.entry, session=SESSION_ID, actor=ACTOR, branch=branch
    )


def git_edit(root: Path, e: PlannedEdit, env: dict[str, str]) -> None:
    """The plain-git way: write the file, ``git add`` it, ``git commit`` the same message."""
    rel = card_path(e.project)
    path = root / rel
    path.write_text(path.read_text("utf-8").replace(e.old, e.new, 1), "utf-8")
    subprocess.run(["git", "add", rel], cwd=root, env=env, check=True)
    # --no-verify: plain git, without the commit-msg check gitmem installs (a Python start)
    subprocess.run(
        ["git", "commit", "-q", "--no-verify", "-m", e.message], cwd=root, env=env, check=True
    )


def warm(repo: MemoryRepo) -> None:
    """What a running agent session already has: cat-file started, config and identity read."""
    repo.tip(MAIN)
    _ = repo.config
    repo.signature()


@dataclass
class EditTimes:
    main: list[float]
    session: list[float]
    git: list[float]


def bench_edits(src: Path, work: Path, plan: list[PlannedEdit]) -> EditTimes:
    """Each edit three ways, interleaved so all three see the same machine noise."""
    times = EditTimes([], [], [])
    env = clean_env()
    git_root = copy_repo(src, work / "edit-git")
    with (
        MemoryRepo(copy_repo(src, work / "edit-main")) as on_main,
        MemoryRepo(copy_repo(src, work / "edit-session")) as on_session,
    ):
        branch = sessions.start(on_session, SESSION_ID).branch
        warm(on_main)
        warm(on_session)
        for i, e in enumerate(plan):
            runs: list[tuple[list[float], Callable[[], object]]] = [
                (times.main, partial(gitmem_edit, on_main, e, MAIN)),
                (times.session, partial(gitmem_edit, on_session, e, branch)),
                (times.git, partial(git_edit, git_root, e, env)),
            ]
            for out, fn in runs[i % 3 :] + runs[: i % 3]:
                out.append(timed(fn))
        _check_same_tree(on_main, MAIN, on_session, branch, git_root)
    return times


def _check_same_tree(
    on_main: MemoryRepo, main: str, on_session: MemoryRepo, branch: str, git_root: Path
) -> None:
    trees = {
        on_main.store.resolve(f"refs/heads/{main}^{{tree}}"),
        on_session.store.resolve(f"refs/heads/{branch}^{{tree}}"),
        git_quiet(git_root, "rev-parse", "HEAD^{tree}"),
    }
    if len(trees) != 1:
        raise RuntimeError(f"the three edit paths ended on different trees: {trees}")
    if git_quiet(on_main.root, "status", "--porcelain"):
        raise RuntimeError("write_card on the checked-out main left the working tree dirty")


def edit_rows(label: str, ours: list[float], git: list[float]) -> list[Row]:
    rate, base_rate = len(ours) / sum(ours), len(git) / sum(git)
    p50, base50 = median_ms(ours), median_ms(git)
    p95, base95 = p95_ms(ours), p95_ms(git)
    base = "git add+commit"
    return [
        Row(
            f"write_card {label}: edits/s",
            f"{rate:.0f}/s",
            f"{base} {base_rate:.0f}/s",
            f"{rate / base_rate:.2f}x",
            ">= 3x",
            rate / base_rate >= 3,
        ),
        Row(
            f"write_card {label}: p50",
            f"{p50:.1f} ms",
            f"{base} {base50:.1f} ms",
            f"{p50 / base50:.2f}x",
            "<= 10 ms",
            p50 <= 10,
        ),
        Row(
            f"write_card {label}: p95",
            f"{p95:.1f} ms",
            f"{base} {base95:.1f} ms",
            f"{p95 / base95:.2f}x",
            "-",
            None,
        ),
    ]


# -- the index -----------------------------------------------------------------------
def rebuild_once(root: Path) -> None:
    with MemoryRepo(root) as repo:
        index.rebuild(repo, MAIN)


def bench_rebuild(root: Path, runs: int) -> list[Row]:
    """``index.rebuild`` (what ``gitmem reindex`` runs) against git reading the same trailers."""
    log = ["git", "log", "--format=%(trailers)", MAIN]
    ours: list[float] = []
    base: list[float] = []
    rebuild_once(root)  # warm the page cache for both
    for i in range(runs):
        pair = [(ours, lambda: rebuild_once(root)), (base, lambda: run_quiet(log, root))]
        for out, fn in pair if i % 2 == 0 else pair[::-1]:
            out.append(timed(fn))
    value, baseline = median_ms(ours), median_ms(base)
    return [
        Row(
            "index.rebuild (reindex), median",
            f"{value:.0f} ms",
            f"git log %(trailers) {baseline:.0f} ms",
            f"{value / baseline:.2f}x",
            "<= 2x",
            value / baseline <= 2,
        )
    ]


def bench_refresh(root: Path, projects: list[str], rounds: int, seed: int) -> list[Row]:
    """``index.refresh`` in a long-running session: after 10 new commits, and with nothing new."""
    after10: list[float] = []
    current: list[float] = []
    with MemoryRepo(root) as repo:
        warm(repo)
        for r in range(rounds):
            index.refresh(repo, MAIN)
            current.append(timed(lambda: index.refresh(repo, MAIN)))
            for e in plan_edits(repo, projects, 10, seed * 1000 + r):
                gitmem_edit(repo, e, MAIN)
            after10.append(timed(lambda: index.refresh(repo, MAIN)))
    value, idle = median_ms(after10), median_ms(current)
    return [
        Row(
            "index.refresh after 10 commits, median",
            f"{value:.1f} ms",
            "-",
            "-",
            "<= 50 ms",
            value <= 50,
        ),
        Row("index.refresh, nothing new, median", f"{idle:.1f} ms", "-", "-", "-", None),
    ]


# -- the CLI ----------------------------------------------------------------------------
def bench_cli(root: Path, project: str, runs: int) -> list[Row]:
    """Wall time of console-script commands against the interpreter importing click."""
    gitmem = str(Path(sys.executable).parent / "gitmem")
    commands = {
        "gitmem index": [gitmem, "-C", str(root), "index"],
        "gitmem log": [gitmem, "-C", str(root), "log"],
        f"gitmem show {project}": [gitmem, "-C", str(root), "show", project],
        "baseline": [sys.executable, "-c", "import click"],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    for i in range(runs + 1):  # the first round only warms caches
        names = list(commands)
        for name in names[i % 4 :] + names[: i % 4]:
            took = timed(partial(run_quiet, commands[name], root))
            if i:
                times[name].append(took)
    base = median_ms(times.pop("baseline"))
    rows = []
    for name, samples in times.items():
        value = median_ms(samples)
        rows.append(
            Row(
                f"`{name}` wall, median",
                f"{value:.0f} ms",
                f"python -c 'import click' {base:.0f} ms",
                f"{value / base:.2f}x",
                "<= 2x",
                value / base <= 2,
            )
        )
    return rows


# -- the report --------------------------------------------------------------------------
def print_table(rows: list[Row]) -> None:
    head = ("metric", "value", "baseline", "ratio", "goal", "met")
    cells = [head] + [(r.metric, r.value, r.baseline, r.ratio, r.goal, _met(r)) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
    for n, c in enumerate(cells):
        print("| " + " | ".join(v.ljust(w) for v, w in zip(c, widths, strict=True)) + " |")
        if n == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")


def _met(r: Row) -> str:
    return "-" if r.met is None else "yes" if r.met else "NO"


def gitmem_revision() -> str:
    """The commit of the gitmem sources measured, and whether gitmem/ had local changes."""
    source = Path(gitmem.__file__).resolve().parent.parent
    try:
        head = git_quiet(source, "rev-parse", "--short", "HEAD")
        dirty = git_quiet(source, "status", "--porcelain", "--", "gitmem")
    except (subprocess.CalledProcessError, OSError):
        return "unknown (not a git checkout)"
    return f"{head}{' + uncommitted changes in gitmem/' if dirty else ''}"


def file_create_ms(folder: Path, n: int = 200) -> float:
    """Median cost of creating, writing and renaming a small file in ``folder``: what a
    loose object costs. It varies a lot between folders and machines, and edits are
    mostly made of it, so the run prints it beside the figures."""
    probe = Path(tempfile.mkdtemp(prefix="gitmem-probe.", dir=folder))
    samples = []
    try:
        for i in range(n):
            start = time.perf_counter()
            fd = os.open(probe / f"t{i}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o444)
            os.write(fd, b"x" * 200)
            os.close(fd)
            os.replace(probe / f"t{i}", probe / f"o{i}")
            samples.append(time.perf_counter() - start)
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    return median_ms(samples)


def print_context(args: argparse.Namespace, repo: Path, work: Path) -> None:
    meta = meta_of(repo)
    git_version = git_quiet(repo, "--version")
    print(f"# gitmem core benchmarks, {datetime.now().astimezone():%Y-%m-%d %H:%M %Z}")
    print(f"command: {' '.join([Path(sys.executable).as_posix(), *sys.argv])}")
    print(
        f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}, "
        f"{git_version}"
    )
    print(f"gitmem: {gitmem_revision()}")
    print(f"repo: {args.cards} cards, {args.commits} commits {meta['kinds']} ({repo})")
    print(
        f"edits: {args.edits} per path; rebuild runs: {args.runs}; refresh rounds: "
        f"{args.rounds}; CLI runs: {args.runs}"
    )
    print(f"scratch: {work} (create + write + rename a small file: {file_create_ms(work):.3f} ms)")
    print()


def report(rows: list[Row], json_out: str | None) -> None:
    print_table(rows)
    missed = [r for r in rows if r.met is False]
    print()
    if missed:
        print("GOALS MISSED:")
        for r in missed:
            print(f"  - {r.metric}: {r.value} (goal {r.goal}; baseline {r.baseline})")
    else:
        print("All goals met.")
    if json_out:
        Path(json_out).write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a small smoke run")
    ap.add_argument("--cards", type=int, default=None, help="default 1000 (--quick: 50)")
    ap.add_argument("--commits", type=int, default=None, help="default 10000 (--quick: 500)")
    ap.add_argument("--edits", type=int, default=None, help="edits per path (default 200)")
    ap.add_argument("--runs", type=int, default=None, help="rebuild and CLI runs (default 10)")
    ap.add_argument("--rounds", type=int, default=None, help="refresh rounds (default 10)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--cache-dir", default=None, help="default: $GITMEM_BENCH_CACHE or TMP/gitmem-bench"
    )
    ap.add_argument("--keep", action="store_true", help="keep the scratch copies")
    ap.add_argument("--json", dest="json_out", default=None, help="also write the rows as JSON")
    args = ap.parse_args(argv)
    small = {"cards": 50, "commits": 500, "edits": 20, "runs": 3, "rounds": 3}
    full = {"cards": 1000, "commits": 10_000, "edits": 200, "runs": 10, "rounds": 10}
    for key, default in (small if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, default)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    src = cached_repo(Params(args.cards, args.commits, args.seed), cache_root(args.cache_dir))
    projects: list[str] = meta_of(src)["projects"]
    work = Path(tempfile.mkdtemp(prefix="gitmem-bench-run."))
    print_context(args, src, work)
    try:
        with MemoryRepo(src) as repo:
            plan = plan_edits(repo, projects, args.edits, args.seed)
        times = bench_edits(src, work, plan)
        rows = edit_rows("on main (checked out)", times.main, times.git)
        rows += edit_rows("on a session branch", times.session, times.git)
        shared = copy_repo(src, work / "index")
        rows += bench_rebuild(shared, args.runs)
        rows += bench_refresh(shared, projects, args.rounds, args.seed)
        rows += bench_cli(shared, plan[0].project, args.runs)
        print(
            f"load after: {os.getloadavg()[0]:.2f}; "
            f"scratch file create after: {file_create_ms(work):.3f} ms\n"
        )
        report(rows, args.json_out)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
