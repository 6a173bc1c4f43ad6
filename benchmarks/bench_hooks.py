"""What gitmem's hooks add to a plain ``git commit`` in a memory repo.

A client repo made by ``gitmem init`` (hooks installed); each round commits one
changed file with a message that has no ``Gitmem-`` line, as a person does:

- **no hooks**: ``git -c core.hooksPath=/dev/null commit -q -m ...``;
- **gitmem hooks**: ``git commit -q -m ...`` with the installed ``commit-msg`` (every
  check of a commit is in that one hook);
- **gitmem trailers**: the same, with a ``Gitmem-Card`` trailer block naming the
  card the commit changes (the hook then starts Python to check it).

The three run interleaved, ``--repeat`` rounds each after one warm-up round; the
median and the spread are printed. It reports and never judges: exit status 0.

    .venv/bin/python benchmarks/bench_hooks.py [--repeat 30]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from gitmem.setup.init import init_repo

TRAILERS = (
    "\n\nGitmem-Card: notes\nGitmem-Section: log\nGitmem-Keywords: log\n"
    "Gitmem-Summary: a line of the log\n"
)


def _commit(root: Path, n: int, kind: str) -> float:
    card = root / "cards" / "notes.md"
    card.write_text(f"# notes\n\n## log\nround {n} {kind}\n")
    subprocess.run(["git", "add", "cards/notes.md"], cwd=root, check=True)
    message = f"round {n} {kind}" + (TRAILERS if kind == "gitmem trailers" else "")
    cmd = ["git", "commit", "-q", "-m", message]
    if kind == "no hooks":
        cmd[1:1] = ["-c", "core.hooksPath=/dev/null"]
    start = time.perf_counter()
    subprocess.run(cmd, cwd=root, check=True)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    env = {
        "GIT_AUTHOR_NAME": "Bench",
        "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "Bench",
        "GIT_COMMITTER_EMAIL": "bench@example.com",
    }
    os.environ.update(env)
    kinds = ("no hooks", "gitmem hooks", "gitmem trailers")
    times: dict[str, list[float]] = {k: [] for k in kinds}
    with tempfile.TemporaryDirectory(prefix="gitmem-bench-hooks-") as tmp:
        root = Path(tmp) / "client"
        init_repo(root, "bench")
        for kind in kinds:  # warm-up
            _commit(root, 0, kind)
        for n in range(1, args.repeat + 1):
            for kind in kinds:
                times[kind].append(_commit(root, n, kind))
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    print(
        f"{args.repeat} commits each, interleaved; Python {platform.python_version()}, {git}, "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    for kind in kinds:
        t = sorted(times[kind])
        print(
            f"{kind:16} median {statistics.median(t):6.1f} ms   min {t[0]:6.1f}   max {t[-1]:6.1f}"
        )


if __name__ == "__main__":
    main()
