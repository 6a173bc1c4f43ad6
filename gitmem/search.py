"""``search_history``: past session transcripts and memory commit messages."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from . import names
from . import trailers as T
from .history import read_log
from .repo import MAIN, MemoryRepo

MAX_LIMIT = 50
SNIPPET = 160


@dataclass(frozen=True)
class Hit:
    kind: str  # "commit" | "transcript"
    ref: str  # short sha, or "<session>#<turn>"
    date: str
    text: str

    def to_json(self) -> dict[str, str]:
        return asdict(self)

    def line(self) -> str:
        return f"[{self.kind} {self.ref} {self.date[:10]}] {self.text}"


def _matches(text: str, terms: list[str]) -> bool:
    low = text.lower()
    return all(t in low for t in terms)


def _snippet(text: str, terms: list[str]) -> str:
    flat = " ".join(text.split())
    pos = max(0, flat.lower().find(terms[0]) - 40) if terms else 0
    cut = flat[pos : pos + SNIPPET]
    return ("…" if pos else "") + cut + ("…" if pos + SNIPPET < len(flat) else "")


def _transcript_lines(repo: MemoryRepo, branch: str, extra: list[Path]) -> list[tuple[str, bytes]]:
    found: dict[str, bytes] = {}
    for entry in repo.store.read_tree(f"refs/heads/{names.branch(branch)}:sessions"):
        name = entry.name.decode("utf-8", "replace")
        if name.endswith(".jsonl"):
            found[name[:-6]] = repo.store.read_blob(entry.sha) or b""
    for path in extra:  # live transcripts of running sessions win over committed copies
        if path.exists():
            found[path.stem] = path.read_bytes()
    return sorted(found.items())


def search_history(
    repo: MemoryRepo,
    query: str,
    limit: int = 10,
    *,
    branch: str = MAIN,
    live: list[Path] | None = None,
) -> list[Hit]:
    """Newest first: commits whose message matches every term, then transcript turns."""
    terms = [t.lower() for t in query.split() if t.strip()]
    limit = max(1, min(limit, MAX_LIMIT))
    hits: list[Hit] = []
    tip = repo.tip(branch)
    if not terms or tip is None:
        return hits
    # git filters the messages (each term must match, case-insensitive): only hits are parsed.
    grep = ["-i", "--all-match", "--fixed-strings", *(f"--grep={t}" for t in terms)]
    for c in read_log(repo.git, tip, extra=grep, max_count=limit * 4):
        if c.get(T.LAYER):
            continue
        blob = " ".join([c.subject, *c.trailers.values()])
        if _matches(blob, terms):
            where = f"{c.get(T.CARD)} § {c.get(T.SECTION)}: " if c.get(T.CARD) else ""
            hits.append(Hit("commit", c.sha[:7], c.date, where + (c.get(T.SUMMARY) or c.subject)))
    turns: list[Hit] = []
    for sid, data in _transcript_lines(repo, branch, live or []):
        for n, raw in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            try:
                rec = json.loads(raw)
            except ValueError:
                continue
            text = rec.get("text") if isinstance(rec, dict) else None
            if isinstance(text, str) and _matches(text, terms):
                role = rec.get("role", "?")
                turns.append(
                    Hit(
                        "transcript",
                        f"{sid}#{n}",
                        str(rec.get("at", "")),
                        f"{role}: {_snippet(text, terms)}",
                    )
                )
    turns.sort(key=lambda h: (h.date, h.ref), reverse=True)
    return (hits + turns)[:limit]
