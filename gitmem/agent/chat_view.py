"""What the chat shows, as plain text: the banner, one line per tool call, the turn footer.

No terminal here: ``cli/chat_screen.py`` styles these lines with rich.
"""

from __future__ import annotations

from dataclasses import dataclass

from gitmem.agent.events import ResponseUsage, ToolCall

POLICY = {
    "auto": "edits land on main when the session ends",
    "review": "edits wait for `gitmem review` when the session ends",
}


def banner(client: str, model: str, session: str, policy: str) -> list[str]:
    return [
        f"gitmem chat · client {client} · model {model}",
        f"session {session} · review policy {policy}: {POLICY.get(policy, policy)}",
        "/help lists commands · /end or Ctrl-D ends the session",
    ]


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")


def _where(card: object, section: object) -> str:
    return f"{card} § {section}" if section else str(card)


def tool_line(call: ToolCall) -> str:
    """One line saying what a tool call did: card § section written, card read, search query."""
    args = call.input
    card = args.get("project", "?")
    if call.name == "write_memory_card":
        entry = args.get("index_entry") or {}
        where = _where(card, entry.get("section_id") if isinstance(entry, dict) else None)
        return (
            f"✗ writing {where} failed: {_first_line(call.result)}"
            if call.is_error
            else (f"✎ {where} written")
        )
    if call.name == "read_memory_card":
        where = _where(card, args.get("section_id"))
        return (
            f"✗ reading {where} failed: {_first_line(call.result)}"
            if call.is_error
            else (f"▸ read {where}")
        )
    if call.name == "search_history":
        query = args.get("query", "")
        if call.is_error:
            return f'✗ search "{query}" failed: {_first_line(call.result)}'
        hits = len([ln for ln in call.result.splitlines() if ln.strip()])
        found = (
            "no match"
            if call.result.strip().lower().startswith("no ")
            else (f"{hits} match" + ("" if hits == 1 else "es"))
        )
        return f'⌕ searched "{query}": {found}'
    state = "failed" if call.is_error else "done"
    return f"• {call.name} {state}"


@dataclass
class TurnTotals:
    """The responses of one turn, added up for its footer."""

    requests: int = 0
    input_tokens: int = 0
    cache_read_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    uncached_cost_usd: float = 0.0

    def add(self, u: ResponseUsage) -> None:
        self.requests += 1
        self.input_tokens += u.input_tokens
        self.cache_read_tokens += u.cache_read_tokens
        self.output_tokens += u.output_tokens
        self.cost_usd += u.cost_usd
        self.uncached_cost_usd += u.uncached_cost_usd

    def footer(self) -> str:
        share = self.cache_read_tokens / self.input_tokens if self.input_tokens else 0.0
        return (
            f"{self.input_tokens:,} in ({share:.0%} cached) · {self.output_tokens:,} out · "
            f"${self.cost_usd:.4f} (uncached ${self.uncached_cost_usd:.4f})"
        )
