"""Recall on the conversation memory (``conversation_memory.py``): gitmem beside the
standard BM25 (``standard_bm25.py``) and memgit, by turn, by section and both in one repo.

A question counts at k when one of its answers is among the first k hits: a turn is
(session, turn, role); a section is card § section. The baselines search the documents
gitmem does: a turn's text, or a section's card title, heading, index summary and text.
The ``month`` questions are answered by several turns (each one counts), the others by one.
The ``spread`` questions are answered by two turns of one session (the one that names
the thing, the reply that says how it went): their own rows count one found (any) and
both found (all); ``all`` leaves them out.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import conversation_memory as C
from standard_bm25 import StandardBM25

import gitmem

Key = tuple[str, ...]  # ("turn", session, turn, role) or ("section", card, section)
KS = (1, 5, 10)

MEMGIT_RUNNER = r"""
import json, sys
from datetime import datetime, timezone
from memgit.models import Mnemonic
from memgit.scorer import score
data = json.load(sys.stdin)
now = datetime(2026, 1, 1, tzinfo=timezone.utc)
mems = [Mnemonic(type_code="pj", slug=d["slug"], timestamp=now, rule=d["rule"], tags=[],
                 desc=d["rule"], body=d["body"], project="chat") for d in data["docs"]]
json.dump([[r.mnemonic.slug for r in score(q, mems, top_k=10, now=now)]
           for q in data["queries"]], sys.stdout)
"""


def memory(cache: Path, seed: int, kind: str) -> Path:
    """The repo of ``kind`` (transcripts, cards or both) for ``seed``, built once."""
    path = cache / f"conversation-v2-{kind}-{seed}"
    if not (path / ".git").is_dir():
        tmp = path.with_suffix(".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        C.build(tmp, seed, transcripts=kind != "cards", cards=kind != "transcripts")
        tmp.rename(path)
    return path


def _hit_key(hit: Any, lines: dict[tuple[str, int], Key]) -> Key:
    f = hit.fields
    if f.get("kind") == "transcript":
        session, _, n = str(f.get("ref", "")).partition("#")
        if "turn" in f and "role" in f:
            return ("turn", session, str(f["turn"]), str(f["role"]))
        return lines.get((session, int(n or 0)), ("line", session, n))
    return ("section", str(hit.card), str(hit.section))


def documents(seed: int, kind: str) -> list[tuple[Key, str]]:
    """What the baselines search, one document per turn and/or per card section: the
    text gitmem indexes for it (a section: card title, heading, index summary, text)."""
    sessions, _ = C.plan(seed)
    names = {t.speaker.lower(): t.speaker for turns in sessions for t in turns}
    docs: list[tuple[Key, str]] = []
    for turns in sessions:
        if kind != "cards":
            docs += [(("turn", t.session, str(t.turn), t.role), t.text) for t in turns]
        if kind != "transcripts":
            sid, day = turns[0].session, turns[0].at[:10]
            for card, text in C.card_sections(turns).items():
                summary = f"What {names[card]} said on {day}"
                docs.append((("section", card, sid), f"{names[card]}\n{sid}\n{summary}\n{text}"))
    return docs


def answers(q: C.Question, kind: str) -> set[Key]:
    out: set[Key] = set()
    if kind != "cards":
        out |= {("turn", s, str(n), r) for s, n, r in q.answers}
    if kind != "transcripts":
        out |= {("section", c, s) for c, s in q.sections}
    return out


def gitmem_rankings(path: Path, seed: int, qs: list[str]) -> list[list[Key]]:
    sessions, _ = C.plan(seed)
    lines = {
        (t.session, i + 1): ("turn", t.session, str(t.turn), t.role)
        for turns in sessions
        for i, t in enumerate(turns)
    }
    with gitmem.open_repo(path) as repo:
        return [[_hit_key(h, lines) for h in gitmem.search_history(repo, q, 10)] for q in qs]


def bm25_rankings(docs: list[tuple[Key, str]], qs: list[str]) -> list[list[Key]]:
    bm = StandardBM25([text for _, text in docs])
    return [[docs[i][0] for i in bm.rank(q)] for q in qs]


def memgit_rankings(py: Path, docs: list[tuple[Key, str]], qs: list[str]) -> list[list[Key]]:
    slugs = {f"d{i}": key for i, (key, _) in enumerate(docs)}
    payload = {
        "docs": [{"slug": f"d{i}", "rule": t[:80], "body": t} for i, (_, t) in enumerate(docs)],
        "queries": qs,
    }
    proc = subprocess.run(
        [str(py), "-c", MEMGIT_RUNNER],
        input=json.dumps(payload).encode(),
        capture_output=True,
        check=True,
    )
    return [[slugs[s] for s in ranked] for ranked in json.loads(proc.stdout)]


def recall(rankings: list[list[Key]], gold: list[set[Key]], k: int, every: bool = False) -> float:
    """The share of questions with one of their answers (``every``: all of them) in the
    first ``k``."""
    got = sum(
        (g <= set(r[:k])) if every else bool(set(r[:k]) & g)
        for r, g in zip(rankings, gold, strict=True)
    )
    return got / max(len(gold), 1)


def report(cache: Path, seed: int, label: str, memgit: Callable[[], Path] | None) -> None:
    """Print R@1/R@5/R@10 by question kind for each memory and system."""
    qs = C.questions(seed)
    texts = [q.text for q in qs]
    kinds = sorted({q.kind for q in qs})
    for kind in ("transcripts", "cards", "both"):
        path = memory(cache, seed, kind)
        docs = documents(seed, kind)
        systems = {
            "gitmem": gitmem_rankings(path, seed, texts),
            "standard BM25": bm25_rankings(docs, texts),
        }
        if memgit is not None and kind != "both":
            try:
                systems["memgit"] = memgit_rankings(memgit(), docs, texts)
            except (subprocess.CalledProcessError, OSError) as exc:
                print(f"memgit could not run: {exc}")
        gold = [answers(q, kind) for q in qs]
        print(f"\n{label}, {kind}: {len(docs)} documents, {len(qs)} questions")
        head = " | ".join(f"{s} R@1/5/10" for s in systems)
        print(f"| questions | n | {head} |\n|---|---|" + "---|" * len(systems))
        for sub in ["all", *kinds, "spread, all turns"]:
            every = sub == "spread, all turns"
            kind_ = "spread" if every else sub
            idx = [
                i
                for i, q in enumerate(qs)
                if (q.kind != "spread" if sub == "all" else q.kind == kind_)
            ]
            cells = []
            for ranks in systems.values():
                r = [ranks[i] for i in idx]
                g = [gold[i] for i in idx]
                cells.append(" / ".join(f"{recall(r, g, k, every):.2f}" for k in KS))
            print(f"| {sub} | {len(idx)} | " + " | ".join(cells) + " |")
