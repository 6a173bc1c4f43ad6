"""Layer S: every N exchanges the model rewrites ``synthesis.md`` from the last one."""

from __future__ import annotations

from typing import Any

from gitmem.memory import secrets
from gitmem.memory import trailers as T
from gitmem.memory.repo import MemoryRepo
from gitmem.ops.publish import commit_files
from gitmem.review.session_branches import Session

PATH = "synthesis.md"
MAX_INPUT_CHARS = 60000

INSTRUCTIONS = """<<synthesis>> You maintain the running synthesis of an assistant's work for one \
client: a compact Markdown summary (at most 300 words) of what happened recently, the open \
questions and the next steps. Rewrite it from the previous synthesis and the exchanges since. \
Keep what still matters, drop what is settled or stale, never invent. Reply with the new \
synthesis only."""


def current(repo: MemoryRepo, branch: str) -> str:
    raw = repo.store.read_blob(f"refs/heads/{branch}:{PATH}")
    return raw.decode("utf-8", "replace") if raw else ""


def request(model: str, previous: str, exchanges: list[dict[str, Any]]) -> dict[str, Any]:
    lines = [f"{r['role']}: {r.get('text', '')}" for r in exchanges]
    body = "\n".join(lines)[-MAX_INPUT_CHARS:]
    user = f"Previous synthesis:\n\n{previous.strip()}\n\nExchanges since:\n\n{body}\n"
    return {
        "model": model,
        "max_tokens": 1024,
        "system": [{"type": "text", "text": INSTRUCTIONS}],
        "messages": [{"role": "user", "content": user}],
    }


def save(repo: MemoryRepo, session: Session, text: str, covers: int) -> str | None:
    body = text.strip() + "\n"
    secrets.check([(PATH, body)], repo.config.secrets_allow)
    message = (
        f"synthesis: through turn {covers}\n\n{T.SESSION}: {session.id}\n"
        f"{T.LAYER}: synthesis\n{T.ACTOR}: agent\n"
    )
    return commit_files(
        repo,
        session.branch,
        lambda _tip: {PATH: body.encode()},
        message,
        f"gitmem synthesis: {session.id}",
    )
