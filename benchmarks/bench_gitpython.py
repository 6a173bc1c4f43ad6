"""What GitPython would cost gitmem where it runs git itself, measured in fresh processes.

Prints medians (ms) of:
- reading the identity: gitmem's one ``git config`` process against importing GitPython
  and reading ``Repo.config_reader()``;
- ``gitmem index`` start-up against ``python -c 'import click'`` (interleaved), for this
  checkout and, with ``--before PATH``, another checkout of gitmem (e.g. a worktree of
  an older commit), and whether the command loaded GitPython.

- with ``--edits N``: write_card p50 (ms) on main and on a session branch, N edits with
  a warmed repo (bench_core's ``plan_edits`` / ``gitmem_edit``), each checkout in turn.

    .venv/bin/python benchmarks/bench_gitpython.py REPO [--runs 30] [--before /tmp/old]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

IDENTITY = {
    "git config process": (
        "from pathlib import Path; import sys, time; from gitmem.memory.repo import MemoryRepo\n"
        "r = MemoryRepo(Path(sys.argv[1])); t = time.perf_counter(); r._configured_identity\n"
        "print(time.perf_counter() - t)"
    ),
    "GitPython import + config_reader": (
        "import sys, time; t = time.perf_counter(); import git\n"
        "c = git.Repo(sys.argv[1]).config_reader()\n"
        "c.get_value('user', 'name', ''); c.get_value('user', 'email', '')\n"
        "print(time.perf_counter() - t)"
    ),
}
INDEX = (
    "import sys; from gitmem.cli import main\n"
    "try:\n    main(sys.argv[1:])\nfinally:\n"
    "    sys.stderr.write('GITPYTHON-LOADED\\n' if 'git.util' in sys.modules else '')"
)
EDITS = """
import json, statistics, sys, tempfile
from pathlib import Path
import bench_core as b
from gitmem.memory import session_branches as sessions
from gitmem.memory.repo import MAIN, MemoryRepo
src, n = Path(sys.argv[1]), int(sys.argv[2])
work = Path(tempfile.mkdtemp(prefix="gitmem-bench-gp."))
with MemoryRepo(src) as repo:
    plan = b.plan_edits(repo, b.meta_of(src)["projects"], n, 7)
with MemoryRepo(b.copy_repo(src, work / "m")) as m, MemoryRepo(b.copy_repo(src, work / "s")) as s:
    branch = sessions.start(s, b.SESSION_ID).branch
    b.warm(m)
    b.warm(s)
    tm = [b.timed(lambda: b.gitmem_edit(m, e, MAIN)) for e in plan]
    ts = [b.timed(lambda: b.gitmem_edit(s, e, branch)) for e in plan]
print(json.dumps([round(statistics.median(tm) * 1000, 2), round(statistics.median(ts) * 1000, 2)]))
"""


def _py(code: str, *args: str, tree: Path | str = HERE) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env={**ENV, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        check=False,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("repo", type=Path)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--before", type=Path, default=None)
    ap.add_argument("--edits", type=int, default=0)
    args = ap.parse_args()
    out: dict[str, object] = {}
    for name, code in IDENTITY.items():
        xs = [float(_py(code, str(args.repo)).stdout) for _ in range(args.runs)]
        out[f"identity: {name}"] = round(statistics.median(xs) * 1000, 1)
    trees = {"this checkout": HERE, **({"before": args.before} if args.before else {})}
    times: dict[str, list[float]] = {name: [] for name in [*trees, "import click"]}
    loaded = set()
    for i in range(args.runs + 1):  # the first round warms caches
        for name in list(times)[i % len(times) :] + list(times)[: i % len(times)]:
            began = time.perf_counter()
            if name == "import click":
                _py("import click")
            else:
                got = _py(INDEX, "-C", str(args.repo), "index", tree=trees[name])
                if "GITPYTHON-LOADED" in got.stderr:
                    loaded.add(name)
            if i:
                times[name].append(time.perf_counter() - began)
    base = statistics.median(times["import click"])
    for name in trees:
        med = statistics.median(times[name])
        out[f"gitmem index ({name})"] = f"{med * 1000:.1f} ms, {med / base:.2f}x click"
    out["python -c 'import click'"] = f"{base * 1000:.1f} ms"
    out["GitPython loaded by gitmem index"] = sorted(loaded) or "no"
    for name, tree in trees.items() if args.edits else ():
        env_tree = f"{tree}{os.pathsep}{tree / 'benchmarks'}"
        got = _py(EDITS, str(args.repo), str(args.edits), tree=env_tree)
        out[f"write_card p50 main, session ({name})"] = json.loads(got.stdout or "null")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
