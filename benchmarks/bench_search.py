"""Search speed on the large client (1,000 cards, 10,000 commits), and the library choice.

- search p50 in-process (``ranked.search``, a repo kept open, as a session has it);
- what keeping the search index current adds to an edit: ``write_card`` on main, then
  ``search_index.current`` folding that one commit in (p50, p95, and the mean with the
  cache file rewritten every ``SAVE_EVERY`` commits), against ``write_card`` alone;
- a full rebuild (``gitmem reindex``) and a cold start from the cache file;
- the same documents and terms in bm25s and in tantivy: index build, the cost of taking
  in one new document, and query p50 -- what the library comparison in
  ``docs/benchmarks.md`` rests on.

    .venv/bin/python benchmarks/bench_search.py            # 1,000 cards, 10,000 commits
    .venv/bin/python benchmarks/bench_search.py --quick    # a small smoke run
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import Params, cached_repo

from gitmem.memory.edit import write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.search import cache as S
from gitmem.search.documents import CURRENT, GONE, PAST, TURN, Read, text_of
from gitmem.search.ranked import search
from gitmem.search.state import SearchState
from gitmem.search.terms import query_terms, terms

TOPICS = [
    "budget",
    "deadline",
    "who is the contact for",
    "risks",
    "next steps",
    "invoice",
    "what was decided about",
    "launch date",
    "scope of",
    "meeting notes",
]


def ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:.2f} ms"


def p95(xs: list[float]) -> str:
    return f"{sorted(xs)[int(0.95 * (len(xs) - 1))] * 1000:.2f} ms"


def queries(state: SearchState, n: int, rng: random.Random) -> list[str]:
    cards = sorted(state.cards)
    out = []
    for _ in range(n):
        card = rng.choice(cards)
        topic = rng.choice(TOPICS)
        out.append(
            rng.choice(
                [
                    f"{card} {topic}",
                    f"{topic} {card.replace('-', ' ')}?",
                    f"what is the {topic} for {card.split('-')[0]}",
                ]
            )
        )
    return out


def edit_cost(repo: MemoryRepo, rng: random.Random, rounds: int) -> dict[str, list[float]]:
    """write_card alone, the search index folding that one commit in, and a rewrite of
    the cache file (done once every SAVE_EVERY commits)."""
    cards = sorted(S.current(repo).cards)
    plain, fold, saves = [], [], []
    for k in range(rounds):
        card = rng.choice(cards)
        text = (repo.store.read_blob(f"refs/heads/main:cards/{card}.md") or b"").decode()
        sid = next(iter(S.current(repo).cards[card]))
        head = next(ln for ln in text.split("\n") if ln.startswith("## "))
        t0 = time.perf_counter()
        write_card(
            repo,
            card,
            head,
            f"{head}\nbench note {k}",
            IndexEntry.make(sid, ["bench"], f"bench note {k}"),
        )
        t1 = time.perf_counter()
        state = S.current(repo)
        t2 = time.perf_counter()
        plain.append(t1 - t0)
        if state.unsaved:  # the rounds that rewrote the file are timed below
            fold.append(t2 - t1)
    state = S.current(repo)
    for _ in range(5):
        t = time.perf_counter()
        S.save(repo, "main", state)
        saves.append(time.perf_counter() - t)
    return {"plain": plain, "fold": fold, "save": saves}


def bm25s_figures(state: SearchState, read: Read, qs: list[str]) -> dict[str, float]:
    import bm25s

    live = [d for d in state.docs if d.kind != GONE]
    t0 = time.perf_counter()
    corpus = [
        terms(f"{d.card} {d.ref} {d.heading} {d.keywords} {d.summary} {text_of(d, read)}")
        for d in live
    ]
    t1 = time.perf_counter()
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in doc] for doc in corpus]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
    t2 = time.perf_counter()
    times = []
    for q in qs:
        t = time.perf_counter()
        qt = [vocab[t] for t in query_terms(q)[0] if t in vocab]
        if qt:
            scores = retriever.get_scores_from_ids(qt)
            scores.argsort()[-10:]
        times.append(time.perf_counter() - t)
    return {"tokenize": t1 - t0, "index": t2 - t1, "query_p50": statistics.median(times)}


def tantivy_figures(state: SearchState, read: Read, qs: list[str], where: Path) -> dict[str, float]:
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_text_field("body", stored=False, tokenizer_name="whitespace")
    sb.add_integer_field("id", stored=True, indexed=True)
    schema = sb.build()
    where.mkdir(parents=True, exist_ok=True)
    idx = tantivy.Index(schema, path=str(where))
    writer = idx.writer(heap_size=50_000_000, num_threads=1)
    live = [(n, d) for n, d in enumerate(state.docs) if d.kind != GONE]
    t0 = time.perf_counter()
    for n, d in live:
        body = " ".join(
            terms(f"{d.card} {d.ref} {d.heading} {d.keywords} {d.summary} {text_of(d, read)}")
        )
        writer.add_document(tantivy.Document(body=body, id=n))
    writer.commit()
    idx.reload()
    t1 = time.perf_counter()
    adds = []
    for k in range(20):  # one new section value, committed and visible, as one edit would be
        t = time.perf_counter()
        writer.add_document(tantivy.Document(body=f"bench note {k} budget", id=10**7 + k))
        writer.commit()
        idx.reload()
        adds.append(time.perf_counter() - t)
    searcher = idx.searcher()
    times = []
    for q in qs:
        t = time.perf_counter()
        parts = [
            (tantivy.Occur.Should, tantivy.Query.term_query(schema, "body", term))
            for term in query_terms(q)[0]
        ]
        searcher.search(tantivy.Query.boolean_query(parts), 10)
        times.append(time.perf_counter() - t)
    return {
        "index": t1 - t0,
        "add_p50": statistics.median(adds),
        "query_p50": statistics.median(times),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    params = Params(cards=100, commits=1000) if args.quick else Params()
    source = cached_repo(params)
    work = Path(tempfile.mkdtemp())
    root = work / "repo"
    shutil.copytree(source, root, symlinks=True)
    for f in (root / ".git" / "gitmem").glob("search-*"):
        f.unlink()
    rng = random.Random(7)
    rows: list[tuple[str, str, str]] = []
    with MemoryRepo(root) as repo:
        t0 = time.perf_counter()
        state = S.current(repo)  # no cache: a full build, saved
        build = time.perf_counter() - t0
        live = sum(1 for d in state.docs if d.kind != GONE)
        kinds = [sum(1 for d in state.docs if d.kind == k) for k in (CURRENT, PAST, TURN)]
        rows.append(
            (
                "search index build (no cache; what reindex does)",
                f"{build * 1000:.0f} ms",
                f"{live} documents: {kinds[0]} current, {kinds[1]} past, {kinds[2]} turns",
            )
        )
        qs = queries(state, 200, rng)
        for q in qs[:10]:
            search(repo, q)
        times = []
        for q in qs:
            t = time.perf_counter()
            search(repo, q)
            times.append(time.perf_counter() - t)
        rows.append(("search_history p50 (in-process)", ms(times), "goal <= 30 ms"))
        rows.append(("search_history p95 (in-process)", p95(times), ""))
        cost = edit_cost(repo, rng, 40 if args.quick else 100)
        rows.append(("write_card on main p50", ms(cost["plain"]), ""))
        rows.append(
            (
                "search index: fold one new commit p50",
                ms(cost["fold"]),
                "added to an edit; goal <= 2 ms",
            )
        )
        rows.append(("search index: fold one new commit p95", p95(cost["fold"]), ""))
        save = statistics.median(cost["save"])
        every = S.SAVE_EVERY
        mean = statistics.mean(cost["fold"]) + save / every
        rows.append(
            (
                "search index: cache file rewrite p50",
                f"{save * 1000:.0f} ms",
                f"once every {every} commits",
            )
        )
        rows.append(
            (
                "search index per edit, amortized (mean fold + rewrite/every)",
                f"{mean * 1000:.2f} ms",
                "goal <= 2 ms",
            )
        )
    with MemoryRepo(root) as fresh:
        t = time.perf_counter()
        search(fresh, qs[0])
        rows.append(
            (
                "cold start: load the cache file + first search",
                f"{(time.perf_counter() - t) * 1000:.0f} ms",
                "a new process (gitmem search)",
            )
        )
        state = S.current(fresh)
        b = bm25s_figures(state, fresh.store.read_blob, qs)
        rows.append(
            (
                "bm25s: tokenize + index all documents",
                f"{(b['tokenize'] + b['index']) * 1000:.0f} ms",
                "no incremental add: every new commit re-indexes",
            )
        )
        rows.append(("bm25s: query p50", f"{b['query_p50'] * 1000:.2f} ms", ""))
        tv = tantivy_figures(state, fresh.store.read_blob, qs, work / "tantivy")
        rows.append(("tantivy: index all documents", f"{tv['index'] * 1000:.0f} ms", ""))
        rows.append(
            (
                "tantivy: add one document + commit + reload p50",
                f"{tv['add_p50'] * 1000:.2f} ms",
                "what one edit would add",
            )
        )
        rows.append(("tantivy: query p50", f"{tv['query_p50'] * 1000:.2f} ms", ""))
    width = max(len(r[0]) for r in rows)
    print(f"{params.cards} cards, {params.commits} commits")
    for metric, value, note in rows:
        print(f"{metric:<{width}}  {value:>10}  {note}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
