"""Layer C: the session transcript, appended and flushed before each request.

One JSON object a line. ``message`` records hold an API message (role, content
blocks) and its plain text for search; ``synthesis`` records say that the
synthesis now covers every turn before ``covers``. The window of turns sent to
the model moves only at a synthesis, so between two syntheses the message prefix
is byte-stable and the cache keeps hitting.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def plain_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            parts.append(
                f"[{block.get('name')} {json.dumps(block.get('input'), ensure_ascii=False)}]"
            )
        elif kind == "tool_result":
            inner = block.get("content")
            parts.append(inner if isinstance(inner, str) else plain_text(inner))
    return "\n".join(p for p in parts if p)


def estimate_tokens(text: str) -> int:
    return -(-len(text.encode("utf-8")) // 4)


INTERRUPTED = (
    "interrupted: the session stopped before this call's result was recorded. It may have "
    "taken effect: check (read the card, search) before repeating it."
)


def interrupted(tool_use_id: str) -> dict[str, Any]:
    """The error result that stands for a call whose result was never recorded."""
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": INTERRUPTED,
        "is_error": True,
    }


class Transcript:
    def __init__(self, path: Path, budget_tokens: int = 20000) -> None:
        self.path = path
        self.budget = budget_tokens
        self.records: list[dict[str, Any]] = []
        self._torn = False
        # With ``defer_sync`` each record is written (a crashed process loses nothing) and
        # made durable by ``sync``, which a chat calls once per turn: one fsync, not one a record.
        self.defer_sync = False
        self._unsynced = False
        if path.exists():
            data = path.read_bytes()
            self._torn = bool(data) and not data.endswith(b"\n")
            for line in data.decode("utf-8", "replace").splitlines():
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue  # a torn last line after a crash: the reply in flight is lost
                if isinstance(rec, dict):
                    self.records.append(rec)

    def _append(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        with open(self.path, "a", encoding="utf-8") as fh:
            if self._torn:  # end the torn line first, or this record would be glued to it
                fh.write("\n")
                self._torn = False
            fh.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
            fh.flush()
            if self.defer_sync:
                self._unsynced = True
            else:
                os.fsync(fh.fileno())

    def sync(self) -> None:
        """Make the records written since the last sync durable (``defer_sync``)."""
        if self._unsynced:
            self._unsynced = False
            fsync_path(self.path)

    def add_message(self, role: str, content: list[dict[str, Any]]) -> None:
        turn = self.turns() + (1 if role == "user" and _is_user_text(content) else 0)
        self._append(
            {
                "type": "message",
                "at": now_iso(),
                "role": role,
                "turn": turn,
                "content": content,
                "text": plain_text(content),
            }
        )

    def add_synthesis(self, covers: int) -> None:
        self._append({"type": "synthesis", "at": now_iso(), "covers": covers})

    def messages_records(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("type") == "message"]

    def turns(self) -> int:
        return max((int(r.get("turn", 0)) for r in self.messages_records()), default=0)

    def covered(self) -> int:
        return max(
            (int(r["covers"]) for r in self.records if r.get("type") == "synthesis"), default=0
        )

    def since_synthesis(self) -> list[dict[str, Any]]:
        covered = self.covered()
        return [r for r in self.messages_records() if int(r.get("turn", 0)) > covered]

    def window_start(self) -> int:
        """First turn sent to the model: moves only when a synthesis covers older turns."""
        start = 1
        for upto, rec in enumerate(self.records):
            if rec.get("type") != "synthesis":
                continue
            sent = [
                r
                for r in self.records[:upto]
                if r.get("type") == "message" and int(r.get("turn", 0)) >= start
            ]
            if sum(estimate_tokens(r.get("text", "")) for r in sent) > self.budget:
                start = int(rec["covers"]) + 1
        return start

    def messages(self) -> list[dict[str, Any]]:
        """API messages from the window start, in the shape the API requires.

        Consecutive same-role messages are merged (blank texts and empty messages left
        out); the first is the user's. Every ``tool_use`` is answered by ``tool_result``
        blocks leading the next message -- an unanswered call (a crash between a call
        and its result) by an ``interrupted`` error result -- and a ``tool_result``
        answering nothing is left out.
        """
        start = self.window_start()
        out: list[dict[str, Any]] = []
        unanswered: list[str] = []  # tool_use ids of the last message, an assistant's

        def push(role: str, blocks: list[dict[str, Any]]) -> None:
            if not blocks:
                return
            if out and out[-1]["role"] == role:
                out[-1]["content"] = out[-1]["content"] + blocks
            else:
                out.append({"role": role, "content": blocks})

        for rec in self.messages_records():
            if int(rec.get("turn", 0)) < start:
                continue
            blocks = [b for b in rec.get("content") or [] if isinstance(b, dict) and not _blank(b)]
            if rec.get("role") == "assistant":
                if not out:
                    continue  # the conversation opens with the user
                blocks = [b for b in blocks if b.get("type") != "tool_result"]
                push("assistant", blocks)
                unanswered += [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
                continue
            results: dict[str, dict[str, Any]] = {}
            for b in blocks:
                if b.get("type") == "tool_result" and b.get("tool_use_id") in unanswered:
                    results.setdefault(str(b["tool_use_id"]), b)
            rest = [b for b in blocks if b.get("type") not in ("tool_result", "tool_use")]
            push("user", [results.get(i) or interrupted(i) for i in unanswered] + rest)
            unanswered = []
        if unanswered:
            push("user", [interrupted(i) for i in unanswered])
        return out

    def repair(self) -> bool:
        """Record ``interrupted`` results for calls a crash left unanswered at the end.

        The turn is then pending: the model hears what happened and finishes it.
        """
        msgs = self.messages_records()
        if not msgs or msgs[-1].get("role") != "assistant":
            return False
        ids = [
            str(b.get("id"))
            for b in msgs[-1].get("content") or []
            if isinstance(b, dict) and b.get("type") == "tool_use"
        ]
        if ids:
            self.add_message("user", [interrupted(i) for i in ids])
        return bool(ids)

    def mark(self) -> tuple[int, int]:
        """Where the transcript ends now (records, bytes), for ``drop_since``."""
        size = self.path.stat().st_size if self.path.exists() else 0
        return len(self.records), size

    def drop_since(self, mark: tuple[int, int]) -> None:
        """Forget what was recorded after ``mark`` (a turn that is taken back)."""
        self.records = self.records[: mark[0]]
        if self.path.exists():
            os.truncate(self.path, mark[1])
            fsync_path(self.path)
        self._torn = False

    def pending(self) -> bool:
        """True when the last message awaits the model (a user turn or tool results)."""
        msgs = self.messages_records()
        return bool(msgs) and msgs[-1]["role"] == "user"


def _blank(block: dict[str, Any]) -> bool:
    """A text block the API refuses (a reply may come back with one, or with no content)."""
    return block.get("type") == "text" and not str(block.get("text", "")).strip()


def _is_user_text(content: list[dict[str, Any]]) -> bool:
    return any(b.get("type") == "text" for b in content)


def fsync_path(path: Path) -> None:
    """fsync a file already written and closed (best effort if it is gone)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
