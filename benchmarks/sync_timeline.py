"""Where a receiving ``gitmem sync`` spends its time: each git process it starts, when it
starts and when gitmem has its answer, in ms from the first line of the console script.

The scenario is ``bench_sync.py --receive``'s (1,000 new commits on the remote, one local
commit, through ``git daemon`` on 127.0.0.1). Each run is on a fresh copy; the timeline of
the run with the median total is printed, with the phases ``docs/benchmarks.md`` reports.

    .venv/bin/python benchmarks/sync_timeline.py [--commits 1000] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_sync

from gitmem.memory.repo import MemoryRepo

# Run as the console script would be (argv[0] "gitmem"), git's processes watched.
_WATCHED = """
import json, subprocess, sys, time
T0 = time.perf_counter()
real_init, real_wait = subprocess.Popen.__init__, subprocess.Popen._wait
seen = []
def init(self, args, *a, **k):
    self._t = time.perf_counter() - T0
    real_init(self, args, *a, **k)
    self._words = " ".join(str(x) for x in args[:3])
    seen.append(self)
def wait(self, *a, **k):
    done = real_wait(self, *a, **k)
    if not hasattr(self, "_end"):
        self._end = time.perf_counter() - T0
    return done
subprocess.Popen.__init__, subprocess.Popen._wait = init, wait
out = sys.argv.pop(1)
def report():
    rows = [[p._t, getattr(p, "_end", None), p._words] for p in seen]
    open(out, "w").write(json.dumps({"rows": rows, "end": time.perf_counter() - T0}))
import atexit
atexit.register(report)
sys.argv[0] = "gitmem"
from gitmem.cli import main
main()
"""


Row = tuple[float, float | None, str]  # start, end (ms), the command's first words


def one_run(work: Path, base: Path, url_root: str, n: int) -> tuple[float, list[Row]]:
    """(total ms, the git processes) of one receiving sync on fresh copies."""
    laptop, desktop = bench_sync.fresh(work, base, f"t{n}", url_root, True)
    bench_sync.gitmem_sync(laptop)
    with MemoryRepo(desktop) as repo:
        bench_sync.edit(repo, 45, 1)
    subprocess.run(
        [bench_sync.GITMEM, "-C", str(desktop), "index"],
        env=bench_sync.ENV,
        capture_output=True,
        check=True,
    )
    out = work / f"t{n}.json"
    # run from the temporary folder: `python -c` puts the current one first on sys.path
    subprocess.run(
        [sys.executable, "-c", _WATCHED, str(out), "-C", str(desktop), "sync"],
        env=bench_sync.ENV,
        capture_output=True,
        check=True,
        cwd=work,
    )
    data = json.loads(out.read_text())
    rows = [(t * 1000, e * 1000 if e is not None else None, w) for t, e, w in data["rows"]]
    return data["end"] * 1000, rows


def phases(rows: list[Row], end: float) -> dict[str, float]:
    fetch = next(r for r in rows if r[2].startswith("git fetch"))
    push = next(r for r in rows if r[2].startswith("git push"))
    assert fetch[1] is not None and push[1] is not None
    return {
        "first fetch begins": fetch[0],
        "git fetch": fetch[1] - fetch[0],
        "from the fetch's end to the push's start": push[0] - fetch[1],
        "git push": push[1] - push[0],
        "after the push": end - push[1],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--commits", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gitmem-sync-timeline-") as tmp:
        work = Path(tmp)
        base = bench_sync.prepare(work, args.commits)
        with bench_sync.git_daemon(work) as port:
            runs = [one_run(work, base, f"git://127.0.0.1:{port}", n) for n in range(args.runs)]
    runs.sort(key=lambda run: run[0])
    end, rows = runs[len(runs) // 2]
    print(
        f"receive {args.commits} + 1 local: the run with the median total of {args.runs} "
        f"({end:.1f} ms in-process; all: {' '.join(f'{r[0]:.0f}' for r in runs)})"
    )
    for start, stop, words in rows:
        print(f"  {start:7.1f} {f'{stop:7.1f}' if stop is not None else '      -'}  {words}")
    for name, ms in phases(rows, end).items():
        print(f"  {name}: {ms:.1f} ms")


if __name__ == "__main__":
    main()
