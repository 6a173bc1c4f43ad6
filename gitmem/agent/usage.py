"""Observability: one line per model response in ``logs/usage.jsonl``, and the report.

While a session runs its lines go to ``.git/gitmem/usage/<session>.jsonl``
(flushed each response); when it ends they are appended to ``logs/usage.jsonl``
on ``main`` in one commit (``Gitmem-Layer: usage``), whatever the review policy:
cost is not memory and is never held back for review.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gitmem.errors import GitmemError
from gitmem.memory import trailers as T
from gitmem.memory.config import Config
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops.publish import commit_files

LOG_PATH = "logs/usage.jsonl"
LAYERS = ("A", "B", "I", "S", "C", "E")


SIMULATED_KEY = "simulated"  # the API key of gitmem's scripted model (--simulated, demo)


@dataclass(frozen=True)
class UsageRecord:
    at: str
    session: str
    message_id: str
    model: str
    purpose: str  # "turn" | "synthesis"
    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    output_tokens: int
    layers: dict[str, int]
    estimated: bool
    tools: list[str]
    full_card_reads: int
    cache_miss_reason: str | None
    layer_hashes: dict[str, str]
    cost_usd: float
    uncached_cost_usd: float
    ttl: str = "5m"
    extra: dict[str, Any] = field(default_factory=dict)
    # each card read by this response's tool calls: {"card", "section" (None: whole), "tokens"}
    card_reads: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def costs(cfg: Config, model: str, usage: dict[str, int], ttl: str) -> tuple[float, float]:
    """(cost, cost had nothing been cached) in dollars, from the price table."""
    price = cfg.price(model)
    if price is None:
        return 0.0, 0.0
    write = price.cache_write_1h if ttl == "1h" else price.cache_write_5m
    inp, cw, cr, out = (
        usage.get(k, 0)
        for k in (
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
            "output_tokens",
        )
    )
    cost = (inp * price.input + cw * write + cr * price.cache_read + out * price.output) / 1e6
    uncached = ((inp + cw + cr) * price.input + out * price.output) / 1e6
    return round(cost, 8), round(uncached, 8)


def live_dir(repo: MemoryRepo) -> Path:
    return repo.private_dir("usage")


def append(repo: MemoryRepo, record: UsageRecord, *, sync: bool = True) -> Path:
    """Write one line to the session's live file; ``sync=False`` leaves the fsync to
    the caller (a chat syncs once per turn). Returns the file's path."""
    path = live_dir(repo) / f"{record.session}.jsonl"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record.to_json(), sort_keys=True) + "\n")
        fh.flush()
        if sync:
            os.fsync(fh.fileno())
    return path


def commit_session(repo: MemoryRepo, session: str) -> str | None:
    """Append a session's live lines to logs/usage.jsonl on main; keep them if that fails."""
    path = live_dir(repo) / f"{session}.jsonl"
    if not path.exists():
        return None
    lines = path.read_bytes()
    message = (
        f"usage: session {session}\n\n{T.SESSION}: {session}\n{T.LAYER}: usage\n{T.ACTOR}: agent\n"
    )

    def build(tip: str) -> dict[str, bytes | None]:
        old = repo.store.read_blob(f"{tip}:{LOG_PATH}") or b""
        if old and not old.endswith(b"\n"):
            old += b"\n"
        return {LOG_PATH: old + lines}

    try:
        sha = commit_files(repo, MAIN, build, message, f"gitmem usage: {session}")
    except GitmemError:
        return None  # e.g. the person is editing logs/usage.jsonl: the live file stays
    path.unlink()
    return sha


def load_usage(repo: MemoryRepo) -> list[dict[str, Any]]:
    """Every usage line: committed on main, then live ones not yet committed."""
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    blobs = [repo.store.read_blob(f"refs/heads/{MAIN}:{LOG_PATH}") or b""]
    blobs += [p.read_bytes() for p in sorted(live_dir(repo).glob("*.jsonl"))]
    for blob in blobs:
        for line in blob.decode("utf-8", "replace").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            key = str(rec.get("message_id")) + str(rec.get("purpose"))
            if isinstance(rec, dict) and key not in seen:
                seen.add(key)
                out.append(rec)
    return out
