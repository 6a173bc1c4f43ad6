"""How gitmem's costs grow with history: every row of the scale table, at 1k/10k/100k commits.

Each size is a client built by ``generate.py`` (1,000 cards; 100 cards at 1,000 commits),
and each row is measured against its baseline in the same run, interleaved, as medians:

- edit: ``write_card`` on a session branch, p50, against ``git add`` + ``git commit``;
- session start: ``sessions.start`` + the session branch's index, in a fresh ``MemoryRepo``
  (what a chat or MCP session does before its first request), goal <= 100 ms;
- refresh after 10 new commits: in-process (goal <= 50 ms), and ``gitmem index`` right
  after 10 new commits against a cached ``gitmem index`` (goal <= 1.3x);
- turn overhead: gitmem's own time per chat turn, model excluded (bench_session), <= 10 ms;
- reindex: ``gitmem reindex`` against ``git log --format=%(trailers)`` (<= 1.5x), and the
  peak memory of each as a process (<= 2x git log's);
- hooks: a person's ``git commit`` of a card edit with gitmem's hooks against the same
  commit with ``core.hooksPath=/dev/null`` (<= 1.5x);
- sync: receiving 1,000 new commits with one local commit (bench_sync's ``receive``),
  ``gitmem sync`` against ``git pull --rebase && git push`` through git daemon (<= 1.3x).

It reports and never judges: exit status 0 whatever the figures are::

    .venv/bin/python benchmarks/bench_scale.py                    # 1k, 10k, 100k
    .venv/bin/python benchmarks/bench_scale.py --sizes 10000      # one size
    .venv/bin/python benchmarks/bench_scale.py --rows reindex --sync-commits 0  # some rows
"""

from __future__ import annotations

import argparse
import json
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
import bench_session
import bench_sync
from generate import Params, cache_root, cached_repo, meta_of

from gitmem.index import build as index
from gitmem.memory import session_branches as sessions
from gitmem.memory.cards import card_path
from gitmem.memory.repo import MemoryRepo

GITMEM = str(Path(sys.executable).with_name("gitmem"))
ROWS = ("edit", "start", "refresh", "turn", "reindex", "hooks")  # --rows: each size's rows
Row = core.Row


def ratio_row(
    metric: str, ours: float, base: float, base_name: str, goal: float, unit: str = "ms"
) -> Row:
    r = ours / base
    return Row(
        metric,
        f"{ours:.1f} {unit}",
        f"{base_name} {base:.1f} {unit}",
        f"{r:.2f}x",
        f"<= {goal}x",
        r <= goal,
    )


def time_row(metric: str, ours: float, goal: float) -> Row:
    return Row(metric, f"{ours:.1f} ms", "-", "-", f"<= {goal:g} ms", ours <= goal)


def bench_edit(src: Path, work: Path, projects: list[str], n: int) -> list[Row]:
    with MemoryRepo(src) as repo:
        plan = core.plan_edits(repo, projects, n, 7)
    times = core.bench_edits(src, work, plan)
    return [
        ratio_row(
            "edit on a session branch, p50",
            core.median_ms(times.session),
            core.median_ms(times.git),
            "git add+commit",
            1.0,
        )
    ]


def bench_session_start(root: Path, runs: int) -> list[Row]:
    """A chat's start: a new session branch at main's tip and its index, in a new process's
    state (a fresh MemoryRepo: no memo); main's index cache is there, as after any use."""
    samples = []
    for i in range(runs):
        with MemoryRepo(root) as repo:
            repo.tip("main")  # cat-file started: a process has that before the session
            t0 = time.perf_counter()
            s = sessions.start(repo, f"20260101-0900{i:02d}-beef")
            index.rendered(repo, s.branch)  # what a chat or MCP session shows first
            samples.append(time.perf_counter() - t0)
    return [time_row("session start (branch + its index)", core.median_ms(samples), 100)]


def bench_refresh(root: Path, projects: list[str], rounds: int) -> list[Row]:
    after: list[float] = []
    cold: list[float] = []
    cached: list[float] = []
    cmd = [GITMEM, "-C", str(root), "index"]
    core.run_quiet(cmd, root)  # warm-up: caches written
    with MemoryRepo(root) as repo:
        for r in range(rounds):
            index.refresh(repo, "main")
            for e in core.plan_edits(repo, projects, 10, 5000 + r):
                core.gitmem_edit(repo, e, "main")
            after.append(core.timed(lambda: index.refresh(repo, "main")))
            for e in core.plan_edits(repo, projects, 10, 9000 + r):
                core.gitmem_edit(repo, e, "main")
            cold.append(core.timed(lambda: core.run_quiet(cmd, root)))
            cached.append(core.timed(lambda: core.run_quiet(cmd, root)))
    return [
        time_row("refresh after 10 commits, in-process", core.median_ms(after), 50),
        ratio_row(
            "`gitmem index` after 10 commits",
            core.median_ms(cold),
            core.median_ms(cached),
            "cached `gitmem index`",
            1.3,
        ),
    ]


def bench_turn(root: Path, turns: int) -> list[Row]:
    fig = bench_session.overhead_figures(root, turns)
    return [time_row("gitmem's time per chat turn, p50", fig["p50"], 10)]


def _peak_mb(cmd: list[str], cwd: Path) -> float:
    """Peak RSS (MB) of ``cmd`` as a process, measured by /usr/bin/time: its child is
    forked from a small process (a child forked from this one would count our pages)."""
    with tempfile.NamedTemporaryFile(suffix=".rss") as out:
        subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", out.name, *cmd],
            cwd=cwd,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=core.CLI_ENV,
        )
        return int(Path(out.name).read_text().split()[-1]) / 1024


def bench_reindex(root: Path, runs: int) -> list[Row]:
    """``index.rebuild`` (what ``gitmem reindex`` runs) in-process against git log, and
    the peak memory of ``gitmem reindex`` and of git log as processes."""
    log = ["git", "log", "--format=%(trailers)", "main"]
    ours: list[float] = []
    base: list[float] = []
    o_m: list[float] = []
    b_m: list[float] = []
    core.rebuild_once(root)  # warm the page cache for both
    for i in range(runs):
        pair = [(ours, lambda: core.rebuild_once(root)), (base, lambda: core.run_quiet(log, root))]
        for out, fn in pair if i % 2 == 0 else pair[::-1]:
            out.append(core.timed(fn))
        o_m.append(_peak_mb([GITMEM, "-C", str(root), "reindex"], root))
        b_m.append(_peak_mb(log, root))
    return [
        ratio_row(
            "reindex (index.rebuild) vs git log",
            core.median_ms(ours),
            core.median_ms(base),
            "git log %(trailers)",
            1.5,
        ),
        ratio_row(
            "`gitmem reindex` peak memory",
            statistics.median(o_m),
            statistics.median(b_m),
            "git log",
            2.0,
            unit="MB",
        ),
    ]


def bench_hooks(root: Path, projects: list[str], runs: int) -> list[Row]:
    """A person's commit of a hand edit to a card, with and without gitmem's hooks (the
    hooks of the gitmem measured: the cached repo has those of the gitmem that built it)."""
    from gitmem.hooks import install

    install(root)
    env = core.CLI_ENV | {k: v for k, v in core.clean_env().items() if k.startswith("GIT_")}
    with_h: list[float] = []
    without: list[float] = []
    for i in range(runs):
        for hooks, out in ((True, with_h), (False, without))[:: 1 if i % 2 == 0 else -1]:
            project = projects[(2 * i + hooks) % len(projects)]
            path = root / card_path(project)
            path.write_text(path.read_text("utf-8") + f"\nA note from a meeting, round {i}.\n")
            subprocess.run(["git", "add", card_path(project)], cwd=root, env=env, check=True)
            cmd = [
                "git",
                *([] if hooks else ["-c", "core.hooksPath=/dev/null"]),
                "commit",
                "-q",
                "-m",
                f"meeting notes {i}",
            ]
            out.append(core.timed(lambda c=cmd: subprocess.run(c, cwd=root, env=env, check=True)))
    return [
        ratio_row(
            "plain `git commit` with gitmem's hooks",
            core.median_ms(with_h),
            core.median_ms(without),
            "without hooks",
            1.5,
        )
    ]


def bench_receive(work: Path, commits: int, repeat: int) -> list[Row]:
    g, p, _ = bench_sync.receive(work, commits, repeat)
    return [
        ratio_row(
            f"receive {commits} commits + 1 local: sync",
            g * 1000,
            p * 1000,
            "git pull --rebase && git push",
            1.3,
        )
    ]


def run_size(n_commits: int, args: argparse.Namespace, work: Path) -> list[Row]:
    cards = 1000 if n_commits >= 10_000 else 100
    src = cached_repo(Params(cards, n_commits, 1), cache_root(args.cache_dir))
    projects: list[str] = meta_of(src)["projects"]
    here = work / str(n_commits)
    here.mkdir()
    want = set(args.rows.split(","))
    if want - {"hooks"}:  # main's caches as any `gitmem index` leaves them (not timed)
        with MemoryRepo(src) as repo:
            index.rendered(repo, "main")
    rows: list[Row] = []
    if "edit" in want:
        rows += bench_edit(src, here, projects, args.edits)
    if "start" in want:
        rows += bench_session_start(core.copy_repo(src, here / "start"), args.runs)
    if "refresh" in want:
        rows += bench_refresh(core.copy_repo(src, here / "refresh"), projects, args.rounds)
    if "turn" in want and not args.no_turns:
        rows += bench_turn(core.copy_repo(src, here / "turn"), args.turns)
    if "reindex" in want:
        rows += bench_reindex(core.copy_repo(src, here / "reindex"), args.runs)
    if "hooks" in want:
        rows += bench_hooks(core.copy_repo(src, here / "hooks"), projects, args.runs)
    for r in rows:
        r.metric = f"{n_commits // 1000}k: {r.metric}"
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000", help="commit counts, comma-separated")
    ap.add_argument("--edits", type=int, default=60)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--turns", type=int, default=30)
    ap.add_argument("--no-turns", action="store_true", help="skip the chat-turn rows")
    ap.add_argument(
        "--rows",
        default=",".join(ROWS),
        help=f"the rows of each size to measure, comma-separated (of {','.join(ROWS)})",
    )
    ap.add_argument("--sync-commits", type=int, default=1000)
    ap.add_argument("--sync-repeat", type=int, default=9)
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--json", dest="json_out", default=None)
    args = ap.parse_args(argv)
    unknown = set(args.rows.split(",")) - set(ROWS)
    if unknown:
        ap.error(f"--rows: no such row {', '.join(sorted(unknown))} (of {','.join(ROWS)})")
    work = Path(tempfile.mkdtemp(prefix="gitmem-bench-scale."))
    print(
        f"# gitmem scale benchmarks; gitmem {core.gitmem_revision()}; "
        f"load {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores"
    )
    try:
        rows: list[Row] = []
        for size in (int(s) for s in args.sizes.split(",") if s):
            rows += run_size(size, args, work)
        if args.sync_commits:
            (work / "sync").mkdir()
            rows += bench_receive(work / "sync", args.sync_commits, args.sync_repeat)
        print(f"load after: {os.getloadavg()[0]:.2f}\n")
        core.report(rows, None)
        if args.json_out:
            Path(args.json_out).write_text(json.dumps([r.__dict__ for r in rows], indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
