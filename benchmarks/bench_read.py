"""Budget: the read commands people type <= 250 ms wall at 100k commits with a warm cache,
and flat in history size (each <= 1.5x its figure at 1k commits).

Each size is a copy of a generated client whose index cache is warm (one ``gitmem index``
first); every command runs as a process, the sizes interleaved round by round (``--cards``,
``--sections``: the larger sizes of another shape, the smallest generate.py's). Medians::

    .venv/bin/python benchmarks/bench_read.py                  # 1k and 100k commits
    .venv/bin/python benchmarks/bench_read.py --quick          # 1k and 10k
    .venv/bin/python benchmarks/bench_read.py --quick --cards 5000 --sections 2
"""

from __future__ import annotations

import argparse
from pathlib import Path

import common


def commands(root: Path) -> dict[str, list[str]]:
    project = sorted(p.stem for p in (root / "cards").glob("*.md"))[0]
    return {
        "gitmem index": ["index"],
        "gitmem show CARD": ["show", project],
        "gitmem log -n 20": ["log", "-n", "20"],
        "gitmem status": ["status"],
        "gitmem cards": ["cards"],
        "gitmem search budget launch": ["search", "budget launch"],
    }


NAMES = ["gitmem index", "gitmem show CARD", "gitmem log -n 20", "gitmem status"]
NAMES += ["gitmem cards", "gitmem search budget launch"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common.add_sizes(ap, "1000,100000", "1000,10000")
    ap.add_argument("--rounds", type=int, default=11)
    common.add_shape(ap)
    args = ap.parse_args()
    sizes = common.sizes(args)
    rounds = 5 if args.quick else args.rounds
    common.machine()
    shapes = {n: (args.sections, args.cards) if n > min(sizes) else (0, 0) for n in sizes}
    for n in sizes:
        print(f"{n:,} commits: {common.shape(shapes[n][1], shapes[n][0], n)}")
    with common.scratch() as tmp:
        work = Path(tmp)
        env = common.bench_env(work / "home")
        repos = {n: common.copy_of(common.history(n, *shapes[n]), work / str(n)) for n in sizes}
        for root in repos.values():
            common.run([common.GITMEM, "index"], root, env)  # the cache warm
        cases = {
            (size, name): (lambda r=root, a=argv: common.run([common.GITMEM, *a], r, env))
            for size, root in repos.items()
            for name, argv in commands(root).items()
        }
        got = common.interleaved({f"{k[0]} {k[1]}": v for k, v in cases.items()}, rounds)
    small, big = min(sizes), max(sizes)
    for name in NAMES:
        for size in sizes:
            figure = got[f"{size} {name}"]
            if size == big:
                common.row(f"{name} at {size:,}", common.ms(figure), "<= 250 ms", figure <= 0.25)
            else:
                common.row(f"{name} at {size:,}", common.ms(figure), "")
        if big != small:
            ratio = got[f"{big} {name}"] / got[f"{small} {name}"]
            common.row(f"{name} {big:,} / {small:,}", f"{ratio:.2f}x", "<= 1.5x", ratio <= 1.5)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
