"""What one `gitmem ask` / `gitmem chat` run did, as one JSON document: for each
exchange the user's text, the reply, the tool calls with their results, and the usage
of its API calls; plus the totals and how the session ended.

Built after the run from the session's transcript (``.git/gitmem/sessions/<id>.jsonl``)
and its usage lines, so the chat loop itself stays as it is. Each model response is one
assistant message in the transcript and one "turn" usage line, in the same order.
"""

from __future__ import annotations

from typing import Any

from gitmem.agent import usage
from gitmem.agent.chat import ChatResult
from gitmem.features.session_live import transcript_file
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.transcript import Transcript

_COUNTS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)


def first_turn(repo: MemoryRepo, session_id: str | None) -> int:
    """The first turn number the coming run answers (for a resumed session: its next
    turn, or the last one when that still waits for its answer)."""
    if not session_id:
        return 1
    t = Transcript(transcript_file(repo, session_id))
    return t.turns() if t.pending() else t.turns() + 1


def _usage_sum(lines: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {k: sum(int(r.get(k) or 0) for r in lines) for k in _COUNTS}
    out["cost_usd"] = round(sum(float(r.get("cost_usd") or 0.0) for r in lines), 6)
    out["requests"] = len(lines)
    return out


def report(repo: MemoryRepo, result: ChatResult, start: int) -> dict[str, Any]:
    """The run's document: ``result.to_json()`` plus ``exchanges``, ``reply`` and ``usage``."""
    records = Transcript(transcript_file(repo, result.session)).messages_records()
    lines = [
        r
        for r in usage.load_usage(repo)
        if r.get("session") == result.session and r.get("purpose") == "turn"
    ]
    exchanges: dict[int, dict[str, Any]] = {}
    calls: dict[str, dict[str, Any]] = {}
    answered = 0  # assistant messages seen: the index of their usage line
    for rec in records:
        turn = int(rec.get("turn", 0))
        content = rec.get("content") or []
        if rec.get("role") == "assistant":
            answered += 1
        if turn < start:
            continue
        ex = exchanges.setdefault(
            turn, {"turn": turn, "user": "", "reply": "", "tool_calls": [], "_usage": []}
        )
        for block in content:
            kind = block.get("type")
            if rec.get("role") == "user" and kind == "text":
                ex["user"] += block.get("text", "")
            elif kind == "text":  # each text block a paragraph of its own, as on screen
                text = block.get("text", "")
                ex["reply"] += ("\n\n" if ex["reply"] and text else "") + text
            elif kind == "tool_use":
                call = {
                    "id": block.get("id"),
                    "name": block.get("name"),
                    "input": block.get("input"),
                    "result": None,
                    "is_error": False,
                }
                calls[str(block.get("id"))] = call
                ex["tool_calls"].append(call)
            elif kind == "tool_result" and str(block.get("tool_use_id")) in calls:
                found = calls[str(block.get("tool_use_id"))]
                found["result"] = block.get("content")
                found["is_error"] = bool(block.get("is_error"))
        if rec.get("role") == "assistant" and answered <= len(lines):
            ex["_usage"].append(lines[answered - 1])
    done = [exchanges[k] for k in sorted(exchanges)]
    used: list[dict[str, Any]] = []
    for ex in done:
        mine = ex.pop("_usage")
        used += mine
        ex["usage"] = _usage_sum(mine)
    doc = result.to_json()
    doc["exchanges"] = done
    doc["reply"] = done[-1]["reply"] if done else ""
    doc["usage"] = _usage_sum(used)
    return doc
