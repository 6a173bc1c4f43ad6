"""``search_history``: past session transcripts and memory commit messages."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from . import names
from . import trailers as T
from .errors import InvalidInput
from .history import read_log
from .names import check_utf8
from .repo import MAIN, MemoryRepo

MAX_LIMIT = 50
SNIPPET = 160
# The terms go to ``git log --grep`` on its command line: a bounded query keeps it far
# below the kernel's limits (128 KiB for one argument), whatever text the model sends.
MAX_QUERY_BYTES = 2048
MAX_TERMS = 32


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


def query_terms(query: str) -> list[str]:
    """The query's words, lowercased; a query too long for a search is refused."""
    size = len(check_utf8(query, "query").encode("utf-8"))
    if size > MAX_QUERY_BYTES:
        raise InvalidInput(
            f"query is {size} bytes, over the limit of {MAX_QUERY_BYTES} bytes: "
            "search for a few distinctive words"
        )
    if "\0" in query:
        raise InvalidInput("query must not contain a NUL character")
    terms = [t.lower() for t in query.split() if t.strip()]
    if len(terms) > MAX_TERMS:
        raise InvalidInput(
            f"query has {len(terms)} words, over the limit of {MAX_TERMS}: "
            "search for a few distinctive words"
        )
    return terms


def search_history(
    repo: MemoryRepo,
    query: str,
    limit: int = 10,
    *,
    branch: str = MAIN,
    live: list[Path] | None = None,
) -> list[Hit]:
    """Newest first: commits whose message matches every term, then transcript turns."""
    terms = query_terms(query)
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
