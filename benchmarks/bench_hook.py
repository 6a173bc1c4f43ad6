"""A plain ``git commit`` of a hand edit with gitmem's hooks against one without, in one
client made by ``gitmem clone`` (both commits signed, as a clone sets them up). Budget:
with hooks <= 1.5x without. Each round edits a card and commits it once each way, the
two cases in turn (the order reversed every other round), medians::

    .venv/bin/python benchmarks/bench_hook.py --sizes 10000 --rounds 11
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Callable
from pathlib import Path

import common

BUDGET = 1.5


def case(desk: Path, env: dict[str, str], card: Path, hooks: bool) -> Callable[[], float]:
    """One hand edit of ``card`` committed with ``git commit -am``, timed."""
    count = itertools.count()
    plain = () if hooks else common.PLAIN

    def once() -> float:
        card.write_text(
            card.read_text()
            + f"\n- typed by hand, {'hooked' if hooks else 'plain'} {next(count)}\n"
        )
        return common.run(["git", *plain, "commit", "-q", "-am", "by hand"], desk, env)

    return once


def measure(size: int, rounds: int) -> None:
    with common.scratch() as tmp:
        work = Path(tmp)
        env = common.bench_env(work / "home")
        desk = work / "desk"
        common.run([common.GITMEM, "clone", str(common.history(size)), str(desk)], work, env)
        cards = sorted((desk / "cards").glob("*.md"))
        got = common.interleaved(
            {
                "hooked": case(desk, env, cards[0], hooks=True),
                "plain": case(desk, env, cards[1], hooks=False),
            },
            rounds,
        )
        ratio = got["hooked"] / got["plain"]
        print(f"{size:,} commits:")
        common.row("  git commit with gitmem's hooks", common.ms(got["hooked"]), "")
        common.row("  git commit without", common.ms(got["plain"]), "")
        common.row("  with / without", f"{ratio:.2f}x", f"<= {BUDGET}x", ratio <= BUDGET)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common.add_sizes(ap, "10000,100000", "1000")
    ap.add_argument("--rounds", type=int, default=11)
    args = ap.parse_args()
    common.machine()
    for size in common.sizes(args):
        measure(size, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
