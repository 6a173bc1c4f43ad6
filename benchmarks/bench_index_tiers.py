"""The tiered I block (issue 25): its size, a session's cost and gitmem's time per turn at
50, 1,000 and 5,000 cards, and whether the folded block still leads to the right section.

Sizes are generated histories (``generate.py``): 50 and 1,000 cards in 1,000 commits,
5,000 cards in 5,000 (each card is made by a commit of its own), 1,000 cards in 100,000.
For each, with ``limits.index_tokens`` at its default (8,000) and, with ``--untiered``,
at 10^9 (every section, as before the fold):

* the I block's tokens (4 bytes a token, the fake API's count) and its split;
* a 30-turn scripted session (``bench_turn.script``: recall, remember, search, questions)
  against the fake Messages API: the input tokens it sent (uncached + cache writes +
  cache reads) and their price from ``logs/usage.jsonl``; gitmem's own time per turn
  (wall less the API's, ``bench_turn.per_turn``; the first turn, which starts the
  session, shown apart).

Retrieval: the quality memory of ``bench_search_quality.py`` (70 cards, 105 questions)
with generated cards added on top until the memory has 1,000 or 5,000 cards, so the
quality cards are the least recently changed (the hard case for a fold by recency). For
each question: is its section listed in full in the block, else is its card listed with
a word of the question (name, title or keywords), else does ``search_history`` on the
question find it among 10 hits (one call)::

    .venv/bin/python benchmarks/bench_index_tiers.py
    .venv/bin/python benchmarks/bench_index_tiers.py --quick        # no 5,000, no 100k
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
from pathlib import Path

import bench_search_quality as Q
import bench_turn
import common
import generate
import search_memory as M

import gitmem
from gitmem.index import build
from gitmem.memory.transcript import estimate_tokens

TURNS = 30
SIZES = [(50, 1000), (1000, 1000), (5000, 5000), (1000, 100_000)]


def set_budget(root: Path, tokens: int) -> None:
    toml = root / "gitmem.toml"
    text = re.sub(r"\nindex_tokens = [^\n]*", "", toml.read_text())
    toml.write_text(text.replace("[limits]\n", f"[limits]\nindex_tokens = {tokens}\n"))
    generate.git(root, "commit", "-qam", "index budget")


def usage_lines(root: Path) -> list[dict[str, object]]:
    proc = subprocess.run(
        ["git", "show", "main:logs/usage.jsonl"], cwd=root, capture_output=True, text=True
    )
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def session(root: Path, budget: int) -> list[str]:
    set_budget(root, budget)
    with gitmem.open_repo(root) as repo:
        shown, split = build.shown(repo)
        full = build.rendered(repo, full=True)
    before = len(usage_lines(root))
    own = bench_turn.per_turn(root, TURNS)
    lines = usage_lines(root)[before:]
    sent = sum(
        int(str(u[k]))
        for u in lines
        for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    price = sum(float(str(u["cost_usd"])) for u in lines)
    return [
        f"{budget:,}" if budget < 10**9 else "none",
        f"{estimate_tokens(full):,}",
        f"{estimate_tokens(shown):,}",
        f"{len(split.full):,} / {split.lines:,} / {split.named:,}",
        f"{sent / 1e6:.2f} M",
        f"${price:.2f}",
        f"{own[0] * 1000:.0f} ms",
        f"{statistics.median(own[1:]) * 1000:.1f} ms",
    ]


def with_noise(src: Path, dest: Path, total: int) -> Path:
    """A copy of the quality memory with generated cards made on top up to ``total``."""
    shutil.copytree(src, dest, symlinks=True)
    have = {p.stem for p in (dest / "cards").glob("*.md")}
    extra = total - len(have)
    if extra <= 0:
        return dest
    params = generate.Params(extra, extra)
    marks = dest.parent / "noise.marks"
    fi = generate.FastImport(dest, marks)
    history = generate.History(params, fi.sha)
    history.names = [n for n in generate.project_names(extra + len(have)) if n not in have]
    history.epoch = int(generate.git(dest, "log", "-1", "--format=%ct", "main"))
    parent: str | None = generate.git(dest, "rev-parse", "main")
    for c in history.commits():
        fi.commit(c, parent)
        parent = None
    fi.finish()
    marks.unlink()
    generate.git(dest, "reset", "-q", "--hard", "main")
    return dest


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower())) - M_STOP


M_STOP = {"the", "a", "an", "of", "for", "what", "is", "was", "who", "when", "how", "to"}
M_STOP |= {"and", "in", "on", "our", "we", "s", "did", "does", "do", "with", "it", "at"}


def retrieval(root: Path, questions: list[M.Question]) -> list[int]:
    """[section listed in full, else card's line with a word of the question, else card
    named with one, none of these; for every question, found by one search; neither
    pointed to by the block nor found by the search]."""
    got = [0, 0, 0, 0, 0, 0]
    with gitmem.open_repo(root) as repo:
        block, split = build.shown(repo)
        lines = dict(re.findall(r"^- ([a-z0-9-]+)(: .*| \(.*)$", block, re.M))
        named = set(re.findall(r"([a-z0-9-]+) \(\d+\)", block))
        for q in questions:
            asked, before = words(q.text), sum(got[:3])
            if q.card in split.full:
                got[0] += 1
            elif q.card in lines and words(q.card + lines[q.card]) & asked:
                got[1] += 1
            elif q.card in named and words(q.card) & asked:
                got[2] += 1
            hits = gitmem.search_history(repo, q.text, 10)
            found = (q.card, q.section) in [(h.card, h.section) for h in hits]
            got[4] += found
            if sum(got[:3]) == before:
                got[3] += 1
                got[5] += not found
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="50 and 1,000 cards at 1k commits")
    ap.add_argument("--untiered", action="store_true", help="also every section (budget 10^9)")
    ap.add_argument("--retrieval-only", action="store_true", help="no sessions")
    args = ap.parse_args()
    common.machine()
    sizes = [] if args.retrieval_only else SIZES[:2] if args.quick else SIZES
    print(
        "| cards | commits | budget | I full | I sent | cards full / line / named |"
        " 30-turn input | price | first turn | gitmem per turn |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for cards, commits in sizes:
        src = generate.cached_repo(generate.Params(cards, commits))
        for budget in [8000, *([10**9] if args.untiered else [])]:
            with common.scratch() as tmp:
                row = session(common.copy_of(src, Path(tmp) / "repo"), budget)
            print(f"| {cards:,} | {commits:,} | " + " | ".join(row) + " |", flush=True)
    path, _ = Q.memory(15)
    qs = M.questions(Q._replayed_plan(15), 15)
    print(f"\nretrieval, {len(qs)} questions of the quality set (budget 8,000):")
    print(
        "| cards | section listed | card's line with a question word | card named,"
        " with one | neither | search_history finds it (top 10, every question) | missed by both |"
    )
    print("|---|---|---|---|---|---|---|")
    for total in [70, 1000, *([] if args.quick else [5000])]:
        with common.scratch() as tmp:
            got = retrieval(with_noise(path, Path(tmp) / "m", total), qs)
        print(f"| {total:,} | " + " | ".join(str(n) for n in got) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
