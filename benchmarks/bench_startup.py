"""Budget: ``gitmem index`` on a small repo <= 3x ``python -c 'import click'`` (start-up);
``python -c 'import anthropic'`` for reference.

A repo made by ``gitmem init`` with one ``gitmem write``; the three processes run in turn,
round by round, with the same interpreter. Medians::

    .venv/bin/python benchmarks/bench_startup.py [--rounds 31]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import common


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=31)
    ap.add_argument("--quick", action="store_true", help="11 rounds")
    args = ap.parse_args()
    common.machine()
    with common.scratch() as tmp:
        work = Path(tmp)
        env = common.bench_env(work / "home")
        root = work / "small"
        common.run([common.GITMEM, "init", str(root)], work, env)
        note = ["--old", "", "--new", "## Budget\n\nQ3 budget: 30k\n", "--section", "budget"]
        note += ["--keywords", "budget,q3", "--summary", "Q3 budget is 30k"]
        common.run([common.GITMEM, "write", "acme-website", *note], root, env)
        got = common.interleaved(
            {
                "index": lambda: common.run([common.GITMEM, "index"], root, env),
                "click": lambda: common.run([sys.executable, "-c", "import click"], root, env),
                "anthropic": lambda: common.run(
                    [sys.executable, "-c", "import anthropic"], root, env
                ),
            },
            11 if args.quick else args.rounds,
            warmup=2,
        )
    ratio = got["index"] / got["click"]
    common.row("gitmem index (small repo)", common.ms(got["index"]), "")
    common.row("python -c 'import click'", common.ms(got["click"]), "")
    common.row("python -c 'import anthropic' (reference)", common.ms(got["anthropic"]), "")
    common.row("gitmem index / import click", f"{ratio:.2f}x", "<= 3x", ratio <= 3)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
