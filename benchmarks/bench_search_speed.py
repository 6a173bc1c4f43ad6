"""Search speed in-process: search p50 and opening a hit p50, beside issue 23's budgets.

Memories measured, each a scratch copy of a cached generated one:

- 1,000 cards at 10k and at 100k commits (``generate.py``, via ``common.history``);
- a transcript memory of several thousand turns: the sessions of several seeds of
  ``conversation_memory.py`` written into one repo through gitmem's session path.

The search index and the index are built first (``gitmem.search.cache.build_search_index`` and
``index.build.refresh``, what ``gitmem clone`` and ``init`` do; the time is printed, not
budgeted); then each query runs
through ``gitmem.search_history`` in one open repo, as the agent's tool calls do, and the
first hit of each is opened with ``gitmem.search.passage.open_hit``.

    .venv/bin/python benchmarks/bench_search_speed.py [--sizes 10000,100000] [--seeds 4]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

import common
import conversation_memory as C
import generate

import gitmem
from gitmem.index import build as index_build
from gitmem.search.cache import build_search_index
from gitmem.search.passage import is_ref, open_hit

SEARCH_BUDGET_S = 0.030
DATES = ["in March", "in June", "last month", "in 2025"]  # --dated: one added to each query
NO_BUDGET = " (the budget is for the plain queries)"
OPEN_BUDGET_S = 0.010


def card_queries(n: int, seed: int = 7) -> list[str]:
    """Queries a person might type at the generated memory: a project's name, a topic."""
    rng = random.Random(seed)
    names = generate.project_names(1000)
    out = []
    for _ in range(n):
        project = generate.title_of(rng.choice(names)).split()
        out.append(" ".join([*project[:2], *rng.sample(generate.TOPICS, 1)]).lower())
    return out


def transcripts(seeds: int) -> Path:
    """A transcript memory of ``seeds`` conversations in one repo, built once."""
    path = generate.cache_root() / f"search-speed-transcripts-{seeds}"
    if not (path / ".git").is_dir():
        tmp = path.with_suffix(".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        gitmem.init_repo(tmp)
        names = {C._slug(n): n for pair in C.PEOPLE for n in pair}
        for seed in range(1, seeds + 1):
            C._write(tmp, C.plan(seed)[0], names, cards=False, transcripts=True)
        tmp.rename(path)
    return path


def _ref(hit: gitmem.SearchHit) -> str:
    if is_ref(hit.ref):
        return hit.ref
    return f"{hit.card}/{hit.section}"


def measure(label: str, src: Path, queries: list[str], budget_note: str = "") -> None:
    with common.scratch() as tmp:
        copy = common.copy_of(src, Path(tmp) / "copy")
        for old in (copy / ".git" / "gitmem").glob("search-*"):  # built here, not copied
            old.unlink()
        began = time.perf_counter()
        with gitmem.open_repo(copy) as repo:  # what `gitmem clone` builds
            build_search_index(repo)
            index_build.refresh(repo, "main")
        built = time.perf_counter() - began
        with gitmem.open_repo(copy) as repo:
            first = time.perf_counter()
            gitmem.search_history(repo, queries[0])
            first = time.perf_counter() - first
            took, cpu, opened, refs = [], [], [], []
            for q in queries:
                t, c = time.perf_counter(), time.process_time()
                hits = gitmem.search_history(repo, q)
                took.append(time.perf_counter() - t)
                cpu.append(time.process_time() - c)
                if hits:
                    refs.append(_ref(hits[0]))
            for ref in refs:
                t = time.perf_counter()
                open_hit(repo, ref)
                opened.append(time.perf_counter() - t)
        turns = sum(len(f.read_bytes().splitlines()) for f in (copy / "sessions").glob("*.jsonl"))
    search_p50, open_p50 = statistics.median(took), statistics.median(opened)
    print(f"{label}: {turns:,} transcript lines; {len(queries)} queries{budget_note}")
    common.row(
        "  search index and index built first (as clone does; no budget)", common.ms(built), ""
    )
    common.row("  first search in a new process", f"{first * 1000:.1f} ms", "")
    common.row(
        "  search p50",
        f"{search_p50 * 1000:.1f} ms",
        f"{SEARCH_BUDGET_S * 1000:.0f} ms",
        search_p50 <= SEARCH_BUDGET_S,
    )
    common.row(
        "  search p50, CPU time (the machine's load left out)",
        f"{statistics.median(cpu) * 1000:.1f} ms",
        f"{SEARCH_BUDGET_S * 1000:.0f} ms",
        statistics.median(cpu) <= SEARCH_BUDGET_S,
    )
    common.row(
        "  search p90",
        f"{statistics.quantiles(took, n=10)[-1] * 1000:.1f} ms",
        "",
    )
    common.row(
        f"  opening the first hit p50 ({len(opened)} hits)",
        f"{open_p50 * 1000:.1f} ms",
        f"{OPEN_BUDGET_S * 1000:.0f} ms",
        open_p50 <= OPEN_BUDGET_S,
    )
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common.add_sizes(ap, "10000,100000", "10000")
    ap.add_argument("--seeds", type=int, default=4, help="conversations in the transcript memory")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--dated", action="store_true", help="also the card queries with a date added")
    args = ap.parse_args(argv)
    common.machine()
    for commits in common.sizes(args):
        src = common.history(commits)
        qs = card_queries(args.queries)
        measure(f"1,000 cards, {commits:,} commits", src, qs)
        if args.dated:
            dated = [f"{q} {DATES[i % len(DATES)]}" for i, q in enumerate(qs)]
            measure(f"1,000 cards, {commits:,} commits, dated queries", src, dated, NO_BUDGET)
    if args.seeds:
        src = transcripts(args.seeds)
        qs = [q.text for seed in range(1, args.seeds + 1) for q in C.questions(seed)]
        qs = random.Random(3).sample(qs, min(args.queries, len(qs)))
        measure(f"transcripts of {args.seeds} conversations", src, qs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
