"""Search quality: gitmem beside BM25 baselines and memgit, on two memories, in one run.

First the conversation memory (``conversation_eval.py``: months of conversations between
two people, recall by turn, by section and both in one repo; the first seed is the
development set, the others held out), then the consultant's memory below.

The memory and the questions come from ``benchmarks/search_memory.py`` (seeded): a
consultant's 30 clients, 70 cards, about 490 sections and 560 real gitmem commits with
about 55 knowledge updates; 105 questions (72 natural, 33 keyword), each labelled with
the card § section that answers it. Every third question is held out as a validation
set; both sets are reported.

Systems, each given the same memory:

- **gitmem**: ``gitmem.search_history`` on the repo (current sections with their
  index entries, past values, transcripts).
- **standard BM25**: ``standard_bm25.py`` (bm25s, k1 = 1.2, b = 0.75, PyStemmer's
  Snowball English stems, bm25s's English stop list) over the current card sections,
  each the fields gitmem indexes: card name and title, heading, index keywords and
  summary, text.
- **memgit**: memgit's own BM25 scorer (``memgit.scorer.score``, what ``memgit search``
  runs) over one memgit ``Mnemonic`` per current section (slug ``card--section``, rule =
  the index summary, tags = the index keywords, desc = the heading, body = the text,
  project = the card). memgit 0.13 requires ``mcp<2`` and gitmem needs ``mcp>=2``, so it
  runs in a virtualenv of its own (made under the cache directory with pip), fed the same
  documents and queries as JSON.

A hit@k counts a question when its card § section is among the first k results.

    .venv/bin/python benchmarks/bench_search_quality.py
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import conversation_eval
import notes_fresh
import notes_memory
import search_memory as M
from common import memgit_python
from standard_bm25 import StandardBM25

import gitmem
from gitmem import MemoryRepo

MEMORY_VERSION = 3  # bump when search_memory.py changes what it writes

Ranker = Callable[[str], list[tuple[str, str]]]

MEMGIT_RUNNER = r"""
import json, sys
from datetime import datetime, timezone
from memgit.models import Mnemonic
from memgit.scorer import score
data = json.load(sys.stdin)
now = datetime(2026, 1, 1, tzinfo=timezone.utc)
mems = [Mnemonic(type_code="pj", slug=d["slug"], timestamp=now, rule=d["rule"],
                 tags=d["tags"], desc=d["desc"], body=d["body"], project=d["project"])
        for d in data["docs"]]
out = []
for q in data["queries"]:
    out.append([r.mnemonic.slug for r in score(q, mems, top_k=10, now=now)])
json.dump(out, sys.stdout)
"""


def cache_dir() -> Path:
    base = os.environ.get("GITMEM_BENCH_CACHE") or str(Path(tempfile.gettempdir()) / "gitmem-bench")
    path = Path(base)
    path.mkdir(parents=True, exist_ok=True)
    return path


def memory(seed: int) -> tuple[Path, list[M.Card]]:
    path = cache_dir() / f"search-memory-v{MEMORY_VERSION}-{seed}"
    cards = M.plan(seed)
    if not (path / ".git").is_dir():
        shutil.rmtree(path, ignore_errors=True)
        tmp = path.with_suffix(".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        cards = M.build(tmp, seed)
        tmp.rename(path)
    else:
        cards = _replayed_plan(seed)
    return path, cards


def _replayed_plan(seed: int) -> list[M.Card]:
    """The plan as ``build`` leaves it (updates applied), without writing a repo."""
    scratch = Path(tempfile.mkdtemp())
    try:
        return M.build(scratch / "m", seed)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def sections_at_tip(repo: MemoryRepo) -> list[dict[str, Any]]:
    """Every indexed section at main's tip, through the public API."""
    out = []
    for card in gitmem.read_index(repo).cards:
        for sec in card.sections:
            body = gitmem.read_card(repo, card.project, sec.id).split("\n", 1)
            out.append(
                {
                    "card": card.project,
                    "section": sec.id,
                    "title": card.title,
                    "heading": sec.heading,
                    "text": body[1] if len(body) > 1 else "",
                    "keywords": ", ".join(sec.keywords),
                    "summary": sec.summary or "",
                }
            )
    return out


def gitmem_ranker(repo: MemoryRepo) -> Ranker:
    def rank(q: str) -> list[tuple[str, str]]:
        return [(h.card, h.section) for h in gitmem.search_history(repo, q, 10)]

    return rank


def standard_ranker(secs: list[dict[str, Any]]) -> Ranker:
    """The standard BM25 (``standard_bm25.py``) over the fields gitmem indexes."""
    bm = StandardBM25(
        [
            f"{s['card']}\n{s['title']}\n{s['heading']}\n{s['keywords']}\n{s['summary']}\n{s['text']}"
            for s in secs
        ]
    )

    def rank(q: str) -> list[tuple[str, str]]:
        return [(secs[i]["card"], secs[i]["section"]) for i in bm.rank(q)]

    return rank


def memgit_rankings(
    py: Path, secs: list[dict[str, Any]], qs: list[str]
) -> list[list[tuple[str, str]]]:
    docs = [
        {
            "slug": f"{s['card']}--{s['section']}",
            "rule": s["summary"] or s["heading"],
            "tags": [k.strip() for k in s["keywords"].split(",") if k.strip()],
            "desc": s["heading"],
            "body": s["text"],
            "project": s["card"],
        }
        for s in secs
    ]
    proc = subprocess.run(
        [str(py), "-c", MEMGIT_RUNNER],
        input=json.dumps({"docs": docs, "queries": qs}).encode(),
        capture_output=True,
        check=True,
    )
    out = json.loads(proc.stdout)
    return [[tuple(slug.split("--", 1)) for slug in ranked] for ranked in out]  # type: ignore[misc]


def hits(rankings: list[list[tuple[str, str]]], qs: list[M.Question], k: int) -> int:
    return sum((q.card, q.section) in r[:k] for q, r in zip(qs, rankings, strict=True))


def notes_report(seed: int, fresh: bool) -> None:
    """Section recall on a notes memory: ``notes_memory.py``'s (development) or, ``fresh``,
    ``notes_fresh.py``'s (held out)."""
    book = notes_fresh if fresh else None
    path = cache_dir() / f"notes-v1-{'fresh-' if fresh else ''}{seed}"
    if not (path / ".git").is_dir():
        tmp = path.with_suffix(".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        notes_memory.build(tmp, seed, book)
        tmp.rename(path)
    qs = notes_memory.plan(seed, book)[1]
    with gitmem.open_repo(path) as repo:
        secs = sections_at_tip(repo)
        systems = {"gitmem": gitmem_ranker(repo), "standard BM25": standard_ranker(secs)}
        got = {name: [rank(q.text) for q in qs] for name, rank in systems.items()}
    label = "notes_fresh.py, held out" if fresh else "notes_memory.py, development"
    print(f"\nnotes memory seed {seed} ({label}): {len(secs)} sections, {len(qs)} questions")
    print("| system | R@1 / R@5 / R@10 |\n|---|---|")
    for name, ranks in got.items():
        cells = [
            sum((q.card, q.section) in r[:k] for q, r in zip(qs, ranks, strict=True)) / len(qs)
            for k in (1, 5, 10)
        ]
        print(f"| {name} | " + " / ".join(f"{c:.2f}" for c in cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--memgit-python", help="a Python with memgit installed")
    ap.add_argument("--show-misses", action="store_true")
    ap.add_argument(
        "--conversation-seeds",
        default="1,2",
        help="seeds of the conversation memory: the first is the development set, the "
        "others are held out (empty: skip it)",
    )
    ap.add_argument("--only-conversation", action="store_true")
    ap.add_argument("--notes-seed", type=int, default=7, help="the notes memory's seed")
    args = ap.parse_args()
    notes_report(args.notes_seed, fresh=False)
    notes_report(args.notes_seed, fresh=True)
    seeds = [int(s) for s in args.conversation_seeds.split(",") if s]
    for n, seed in enumerate(seeds):
        label = f"conversation seed {seed} ({'development' if n == 0 else 'held out'})"
        conversation_eval.report(
            cache_dir(), seed, label, lambda: memgit_python(args.memgit_python)
        )
    if args.only_conversation:
        return
    path, _ = memory(args.seed)
    cards = _replayed_plan(args.seed)
    qs = M.questions(cards, args.seed)
    texts = [q.text for q in qs]
    work = Path(tempfile.mkdtemp()) / "m"
    shutil.copytree(path, work, symlinks=True)
    (work / ".git" / "gitmem").mkdir(exist_ok=True)
    for f in (work / ".git" / "gitmem").glob("search-*"):
        f.unlink()
    with gitmem.open_repo(work) as repo:
        t0 = time.perf_counter()
        gitmem.search_history(repo, "warm", 1)  # builds the search index
        build_ms = (time.perf_counter() - t0) * 1000
        secs = sections_at_tip(repo)
        systems: dict[str, list[list[tuple[str, str]]]] = {}
        lat: dict[str, float] = {}
        for name, make in [
            ("gitmem", lambda: gitmem_ranker(repo)),
            ("standard BM25", lambda: standard_ranker(secs)),
        ]:
            ranker = make()
            times, out = [], []
            for q in texts:
                t = time.perf_counter()
                out.append(ranker(q))
                times.append((time.perf_counter() - t) * 1000)
            systems[name], lat[name] = out, statistics.median(times)
        try:
            t = time.perf_counter()
            systems["memgit"] = memgit_rankings(memgit_python(args.memgit_python), secs, texts)
            lat["memgit"] = (time.perf_counter() - t) * 1000 / len(texts)
        except (subprocess.CalledProcessError, OSError) as exc:
            print(f"memgit could not run: {exc}", file=sys.stderr)
    n_commits = subprocess.run(
        ["git", "rev-list", "--count", "main"], cwd=work, capture_output=True, text=True
    ).stdout.strip()
    updated = sum(len(c.updated) for c in cards)
    print(
        f"memory: {len(cards)} cards, {len(secs)} sections, {n_commits} commits, "
        f"{updated} knowledge updates; {len(qs)} questions "
        f"({sum(q.style == 'natural' for q in qs)} natural, "
        f"{sum(q.style == 'keyword' for q in qs)} keyword, {sum(q.past for q in qs)} about "
        f"past values); search index built in {build_ms:.0f} ms"
    )
    subsets = {
        "all": list(range(len(qs))),
        "natural": [i for i, q in enumerate(qs) if q.style == "natural"],
        "keyword": [i for i, q in enumerate(qs) if q.style == "keyword"],
        "past": [i for i, q in enumerate(qs) if q.past],
        "dev (2/3)": [i for i in range(len(qs)) if i % 3 != 2],
        "validation (1/3)": [i for i in range(len(qs)) if i % 3 == 2],
        "validation natural": [i for i, q in enumerate(qs) if i % 3 == 2 and q.style == "natural"],
    }
    names = list(systems)
    print("| questions | n | " + " | ".join(f"{s} hit@1/3/5" for s in names) + " |")
    print("|---|---|" + "---|" * len(names))
    for label, idx in subsets.items():
        sub = [qs[i] for i in idx]
        row = [label, str(len(idx))]
        for s in names:
            ranks = [systems[s][i] for i in idx]
            row.append(" / ".join(f"{hits(ranks, sub, k) / len(idx):.2f}" for k in (1, 3, 5)))
        print("| " + " | ".join(row) + " |")
    allq = list(range(len(qs)))
    g3 = hits(systems["gitmem"], qs, 3)
    for s in names[1:]:
        other = hits(systems[s], qs, 3)
        print(f"hit@3 gitmem / {s}: {g3} / {other} = {g3 / max(other, 1):.2f}x")
    print("median latency per query (ms): " + ", ".join(f"{s} {lat[s]:.2f}" for s in lat))
    if args.show_misses:
        for i in allq:  # the development set only: validation misses stay unseen
            if i % 3 != 2 and (qs[i].card, qs[i].section) not in systems["gitmem"][i][:3]:
                print(
                    f"miss [{qs[i].style}] {qs[i].text!r} -> {qs[i].card} § {qs[i].section}; "
                    f"got {systems['gitmem'][i][:3]}"
                )
    shutil.rmtree(work.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
