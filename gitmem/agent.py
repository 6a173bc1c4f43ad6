"""An agent session on the Claude API: the tool loop, the cached layout, the usage log.

``AgentSession.ask(text)`` records the user's turn (flushed to disk first), then
calls the model until it ends its turn, running memory tools on the session's
branch. Each response appends one usage line. Every N exchanges the synthesis
is rewritten. The index block shown to the model is refreshed only when the
cache has gone cold anyway (or at the next session).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import budget, index, prompt, synthesis, usage
from .errors import ConfigError, ModelError
from .models import minimum_cacheable_tokens
from .repo import MemoryRepo
from .secrets import SecretFound
from .sessions import Session, transcript_file
from .tokencount import LayerCounter
from .tools import TOOLS, MemoryTools
from .transcript import Transcript, now_iso
from .workspace import persona

MAX_STEPS = 16
NOTE_OPEN, NOTE_CLOSE = "<gitmem-note>", "</gitmem-note>"


STATUS_NAMES = {408: "timed out", 409: "conflict", 429: "rate limited", 500: "server error",
                502: "bad gateway", 503: "unavailable", 504: "gateway timeout", 529: "overloaded"}


class RetryWatch:
    """Sees each HTTP attempt the SDK makes, so a UI can say that (and why) it retries.

    An error response is announced as it arrives, before the SDK's back-off sleep; a
    dropped connection only when the next attempt starts (no response to see).
    """

    def __init__(self, on_retry: Callable[[str], None], max_retries: int) -> None:
        self.on_retry, self.max_retries = on_retry, max_retries
        self.answered = False

    @staticmethod
    def _attempt(request: Any) -> int:
        return int(request.headers.get("x-stainless-retry-count", "0") or 0)

    def request(self, request: Any) -> None:
        attempt = self._attempt(request)
        if attempt and not self.answered:
            self.on_retry(f"the connection failed; retrying ({attempt} of {self.max_retries})")
        self.answered = False

    def response(self, response: Any) -> None:
        self.answered = True
        code = int(response.status_code)
        should = response.headers.get("x-should-retry")
        retried = should == "true" or (should != "false" and (code in (408, 409, 429) or code >= 500))
        attempt = self._attempt(response.request) + 1
        if code < 400 or not retried or attempt > self.max_retries:
            return
        wait = response.headers.get("retry-after")
        when = f" in {wait}s" if wait and wait.replace(".", "", 1).isdigit() else ""
        self.on_retry(
            f"the API answered {code} {STATUS_NAMES.get(code, 'error')}; "
            f"retrying{when} ({attempt} of {self.max_retries})"
        )


def make_client(max_retries: int = 2, on_retry: Callable[[str], None] | None = None) -> Any:
    """``anthropic.Anthropic()`` as configured by the environment; a clear error without a key.

    ``on_retry`` hears, before each retry the SDK makes, which one it is and why.
    """
    if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        raise ConfigError(
            "no API key: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another endpoint); "
            "`gitmem demo` runs without one"
        )
    import anthropic

    if on_retry is None:
        return anthropic.Anthropic(max_retries=max_retries)
    watch = RetryWatch(on_retry, max_retries)
    http = anthropic.DefaultHttpxClient(
        event_hooks={"request": [watch.request], "response": [watch.response]}
    )
    return anthropic.Anthropic(max_retries=max_retries, http_client=http)


def _dump(block: Any) -> dict[str, Any]:
    data = block.model_dump(exclude_none=True) if hasattr(block, "model_dump") else dict(block)
    keep = {"text": ("type", "text"), "tool_use": ("type", "id", "name", "input")}
    fields = keep.get(data.get("type", ""))
    return {k: data[k] for k in fields if k in data} if fields else data


@dataclass(frozen=True)
class ToolCall:
    """A memory tool the model called in this turn, with what it returned."""

    name: str
    input: dict[str, Any]
    is_error: bool
    result: str


@dataclass(frozen=True)
class ResponseUsage:
    """One model response's tokens and cost (the usage line it appended)."""

    input_tokens: int  # everything sent: uncached + written to the cache + read from it
    cache_read_tokens: int
    output_tokens: int
    cost_usd: float
    uncached_cost_usd: float


class AgentEvents:
    """What a turn lets a UI show, as it happens. Every method does nothing here: a UI
    overrides the ones it shows. The agent never prints."""

    def waiting(self, model: str) -> None:
        """A request is on its way to ``model``; nothing of the answer has arrived."""

    def text(self, chunk: str) -> None:
        """More of the current text block."""

    def text_end(self) -> None:
        """The current text block is complete."""

    def tool(self, call: ToolCall) -> None:
        """A tool call the model made has run."""

    def response(self, usage: ResponseUsage) -> None:
        """A response is complete (a turn makes one per tool round)."""

    def turn_end(self) -> None:
        """The model ended its turn."""


class _TextOnly(AgentEvents):
    """Plain text for a pipe: each text block's chunks as they come, a new block on a new
    line ("Saving that." then "Done.", not "Saving that.Done.")."""

    def __init__(self, on_text: Callable[[str], None]) -> None:
        self.on_text = on_text
        self.ended = False  # a block ended and nothing followed it yet
        self.last = ""  # the last character written

    def text(self, chunk: str) -> None:
        if not chunk:
            return
        if self.ended and self.last != "\n":
            self.on_text("\n")
        self.ended = False
        self.last = chunk[-1]
        self.on_text(chunk)

    def text_end(self) -> None:
        self.ended = True


class AgentSession:
    def __init__(
        self,
        repo: MemoryRepo,
        session: Session,
        client: Any,
        *,
        clock: Callable[[], float] = time.time,
        warn: Callable[[str], None] = lambda _msg: None,
    ) -> None:
        self.repo, self.session, self.client = repo, session, client
        self.cfg = repo.config
        self.clock, self.warn = clock, warn
        path = transcript_file(repo, session.id)
        self.transcript = Transcript(path, self.cfg.chat_budget_tokens)
        # A crash between a tool call and its result left the call unanswered: the API
        # refuses such a conversation, so record it as interrupted (the turn is pending).
        self.transcript.repair()
        self.tools = MemoryTools(repo, session.branch, session.id, "agent", [path])
        self.counter = LayerCounter(client, self.cfg.model)
        self.persona = persona(repo.root)
        self.rules = prompt.rules_text()
        self._budget_warned = False
        self.index_text = self._index()
        self.synthesis_text = synthesis.current(repo, session.branch)
        self.last_call: float | None = None
        self.previous_id: str | None = None
        self._warned = False
        self._notes: list[str] = []

    # -- the turn -------------------------------------------------------------------
    def ask(
        self,
        text: str,
        on_text: Callable[[str], None] | None = None,
        events: AgentEvents | None = None,
    ) -> str:
        content = [{"type": "text", "text": text}]
        content += [{"type": "text", "text": f"{NOTE_OPEN}{n}{NOTE_CLOSE}"} for n in self._notes]
        self._notes = []
        self.transcript.add_message("user", content)
        return self.answer(on_text, events)

    def note(self, text: str) -> None:
        """Tell the model something with the person's next turn, as a block of its own
        (``/undo``: which edit the person undid, so the model does not count on it)."""
        self._notes.append(text)

    def answer(
        self, on_text: Callable[[str], None] | None = None, events: AgentEvents | None = None
    ) -> str:
        """Run the model until it ends its turn; the pending user turn stays on failure.

        ``events`` sees the turn as it happens (``on_text`` is the short form that sees
        only the text).
        """
        ev = events or (_TextOnly(on_text) if on_text else AgentEvents())
        reply: list[str] = []
        card_tokens = 0
        for _ in range(MAX_STEPS):
            msg = self._call(ev)
            content = [_dump(b) for b in msg.content]
            self.transcript.add_message("assistant", content)
            reply += [b["text"] for b in content if b.get("type") == "text"]
            uses = [b for b in content if b.get("type") == "tool_use"]
            results, called, full_reads = [], [], 0
            reads: list[dict[str, Any]] = []  # which card and section each read was (usage --cards)
            for use in uses:
                res = self.tools.call(use["name"], use.get("input"))
                called.append(use["name"])
                if use["name"] == "read_memory_card" and not (use.get("input") or {}).get("section_id"):
                    full_reads += not res.is_error
                if res.card_text:
                    tokens = self.counter.text(res.text)
                    card_tokens += tokens
                    args = use.get("input") or {}
                    reads.append({"card": str(args.get("project")),
                                  "section": args.get("section_id") or None, "tokens": tokens})
                block: dict[str, Any] = {"type": "tool_result", "tool_use_id": use["id"], "content": res.text}
                if res.is_error:
                    block["is_error"] = True
                results.append(block)
                ev.tool(ToolCall(use["name"], dict(use.get("input") or {}), res.is_error, res.text))
            ev.response(self._log(msg, "turn", called, full_reads, card_tokens, reads))
            if msg.stop_reason != "tool_use" or not results:
                break
            self.transcript.add_message("user", results)
        ev.turn_end()
        self._maybe_synthesise()
        return "".join(reply)

    def _index(self) -> str:
        """The I block, its size counted against limits.index_tokens (warned once above 80 %)."""
        text = index.refresh(self.repo, self.session.branch).render()
        shown, size = budget.block(self.repo, self.session.branch, self.counter, text)
        warning = size.warning()
        if warning and not self._budget_warned:
            self._budget_warned = True
            self.warn(warning)
        return shown

    def _layers(self) -> prompt.Layers:
        return prompt.Layers(self.persona, self.rules, self.index_text, self.synthesis_text)

    def _call(self, ev: AgentEvents) -> Any:
        import anthropic

        now = self.clock()
        if self.last_call is not None and now - self.last_call > self.cfg.ttl_seconds:
            # The cache is cold anyway: showing the fresh index costs nothing extra.
            self.index_text = self._index()
        self._warn_if_uncacheable()
        params = prompt.request(
            self.cfg.model, self.cfg.max_tokens, self._layers(), self.transcript.messages(),
            self.cfg.cache_ttl,
        )
        # null on the first call opts in, so the next call can be compared with this one.
        extra = {"diagnostics": {"previous_message_id": self.previous_id}}
        ev.waiting(self.cfg.model)
        try:
            with self.client.messages.stream(**params, extra_body=extra) as stream:
                for event in stream:
                    if event.type == "text":
                        ev.text(event.text)
                    elif event.type == "content_block_stop" and event.content_block.type == "text":
                        ev.text_end()
                msg = stream.get_final_message()
        except Exception as err:
            # The SDK raises APIError subclasses, except for a stream cut mid-way, which
            # surfaces as the HTTP library's own error: both mean "no answer this time".
            if not isinstance(err, anthropic.APIError) and not type(err).__module__.startswith(
                ("httpx", "httpcore", "h11")
            ):
                raise
            raise ModelError(f"the model API failed: {type(err).__name__}: {err}") from None
        self.last_call = self.clock()
        self.previous_id = msg.id
        return msg

    def _warn_if_uncacheable(self) -> None:
        if self._warned:
            return
        self._warned = True
        prefix = self.counter.text(self.rules + self.persona, TOOLS)
        minimum = minimum_cacheable_tokens(self.cfg.model)
        if prefix < minimum:
            self.warn(
                f"the cached prefix (tools + rules + persona) is about {prefix} tokens, below "
                f"{self.cfg.model}'s minimum of {minimum}: it will not be cached"
            )

    def _log(
        self, msg: Any, purpose: str, tools: list[str], full_reads: int, card: int,
        reads: list[dict[str, Any]] | None = None,
    ) -> ResponseUsage:
        u = msg.usage
        counts = {
            "input_tokens": u.input_tokens or 0,
            "cache_creation_input_tokens": u.cache_creation_input_tokens or 0,
            "cache_read_input_tokens": u.cache_read_input_tokens or 0,
            "output_tokens": u.output_tokens or 0,
        }
        layers = {"A": 0, "B": 0, "I": 0, "S": 0, "C": 0, "E": 0}
        if purpose == "turn":
            layers["A"] = self.counter.text(self.persona)
            layers["B"] = self.counter.text(self.rules, TOOLS)
            layers["I"] = self.counter.text(self.index_text)
            layers["S"] = self.counter.text(self.synthesis_text)
            layers["E"] = card
        total = counts["input_tokens"] + counts["cache_creation_input_tokens"] + counts["cache_read_input_tokens"]
        layers["C"] = max(0, total - sum(layers.values()))
        miss = getattr(getattr(msg, "diagnostics", None), "cache_miss_reason", None)
        cost, uncached = usage.costs(self.cfg, self.cfg.model, counts, self.cfg.cache_ttl)
        usage.append(self.repo, usage.UsageRecord(
            at=now_iso(), session=self.session.id, message_id=msg.id, model=msg.model,
            purpose=purpose, input_tokens=counts["input_tokens"],
            cache_creation_input_tokens=counts["cache_creation_input_tokens"],
            cache_read_input_tokens=counts["cache_read_input_tokens"],
            output_tokens=counts["output_tokens"], layers=layers, estimated=self.counter.estimated,
            tools=tools, full_card_reads=full_reads,
            cache_miss_reason=getattr(miss, "type", None) if miss else None,
            layer_hashes=self._layers().hashes(), cost_usd=cost, uncached_cost_usd=uncached,
            ttl=self.cfg.cache_ttl, card_reads=reads or [],
        ))
        return ResponseUsage(total, counts["cache_read_input_tokens"], counts["output_tokens"],
                             cost, uncached)

    # -- layer S --------------------------------------------------------------------
    def _maybe_synthesise(self) -> None:
        turns, covered = self.transcript.turns(), self.transcript.covered()
        if turns - covered < self.cfg.synthesis_every:
            return
        import anthropic

        req = synthesis.request(self.cfg.model, self.synthesis_text, self.transcript.since_synthesis())
        try:
            msg = self.client.messages.create(**req)
        except anthropic.APIError as err:
            self.warn(f"synthesis skipped, will retry next turn: {err}")
            return
        text = "".join(b.text for b in msg.content if getattr(b, "type", "") == "text")
        if text.strip():
            try:
                synthesis.save(self.repo, self.session, text, turns)
            except SecretFound as err:
                self.warn(f"synthesis not saved, will retry next turn: {err}")
                self._log(msg, "synthesis", [], 0, 0)
                return
            self.synthesis_text = synthesis.current(self.repo, self.session.branch)
            self.transcript.add_synthesis(turns)
        self._log(msg, "synthesis", [], 0, 0)
