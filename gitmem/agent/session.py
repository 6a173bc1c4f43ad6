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
from pathlib import Path
from typing import Any

from gitmem.agent import budget, prompt, synthesis, usage
from gitmem.agent.events import AgentEvents, ResponseUsage, TextOnly, ToolCall
from gitmem.agent.token_count import LayerCounter
from gitmem.agent.tools import TOOLS, MemoryTools
from gitmem.errors import GitmemError, ModelError
from gitmem.features.session_live import transcript_file
from gitmem.index import provenance
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.secrets import SecretFound
from gitmem.memory.transcript import Transcript, fsync_path, now_iso
from gitmem.models import minimum_cacheable_tokens
from gitmem.review.session_branches import Session
from gitmem.setup.workspace import persona

MAX_STEPS = 16
NOTE_OPEN, NOTE_CLOSE = "<gitmem-note>", "</gitmem-note>"


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
        self.transcript.defer_sync = True  # made durable once per turn (``_sync``)
        self._usage_path: Path | None = None
        # layer -> (its text, token count, hash): counted and hashed once per change
        self._layer_stats: dict[str, tuple[str, int, str]] = {}
        # A crash between a tool call and its result left the call unanswered: the API
        # refuses such a conversation, so record it as interrupted (the turn is pending).
        self.transcript.repair()
        self.tools = MemoryTools(repo, session.branch, session.id, "agent", [path])
        self.counter = LayerCounter(client, self.cfg.model)
        note = provenance.persona_note(repo)  # persona.md unverified: one line, byte-stable
        self.persona = f"{note}\n{persona(repo.root)}" if note else persona(repo.root)
        self.rules = prompt.rules_text()
        self._budget_warned = False
        self._index_text: str | None = None  # made at first use: counting it may need the API
        self.synthesis_text = synthesis.current(repo, session.branch)
        self.last_call: float | None = None
        self.last_sent = 0.0  # when the newest request was sent (the session's clock)
        self._index_file = path.with_name(f"{path.stem}.index.txt")  # the I last sent
        self._sent_index: str | None = None
        if self.transcript.records:
            self._resume_warm()
        self.previous_id: str | None = None
        self._warned = False
        self._notes: list[str] = []

    def _resume_warm(self) -> None:
        """A resumed session whose cache is still warm sends the index it sent last (kept
        beside the transcript), not a recomputed one that would re-write the cache from
        the index on; it says so when the index changed meanwhile. Once the cache goes
        cold, ``_call`` shows the fresh index as for any session."""
        try:
            made_at, _, kept = self._index_file.read_text("utf-8").partition("\n")
        except (OSError, UnicodeDecodeError):
            return
        last = None
        for rec in usage.load_usage(self.repo):
            if rec.get("session") == self.session.id and rec.get("purpose") == "turn":
                last = rec
        sent = (last or {}).get("extra", {}).get("sent")
        if last is None or not isinstance(sent, int | float):
            return
        if last.get("layer_hashes", {}).get("I") != prompt.layer_hash(kept):
            return  # not the index that request sent
        if self.clock() - sent > self.cfg.ttl_seconds:
            return  # cold: the fresh index costs nothing extra
        if kept != self.index_text and self._changed_by_others(made_at):
            self.warn(
                "the index changed since this session's last request; the session keeps the "
                "index it was sent while the cache is warm and shows the new one once it "
                "goes cold (read_memory_card shows any card as it is now)"
            )
        self.index_text = self._sent_index = kept
        self.last_call = float(sent)

    def _changed_by_others(self, since: str) -> bool:
        """Whether memory edits other than this session's own (which its conversation
        already holds) landed on the branch after ``since``."""
        from gitmem.memory import trailers as T
        from gitmem.ops.history import read_log

        try:
            log = read_log(self.repo.git, f"{since}..{self.session.branch}")
        except GitmemError:
            return True  # that commit is gone: say so rather than guess
        return any(c.get(T.SESSION) != self.session.id and c.get(T.LAYER) is None for c in log)

    def _keep_sent_index(self) -> None:
        """Keep the index about to be sent beside the transcript (when it changed), with
        the branch tip it was made at."""
        if self._sent_index == self.index_text:
            return
        tmp = self._index_file.with_name(f"{self._index_file.name}.{os.getpid()}.tmp")
        try:
            tip = self.repo.tip(self.session.branch)
            tmp.write_text(f"{tip}\n{self.index_text}", "utf-8")
            os.replace(tmp, self._index_file)
        except OSError:
            return  # only a saving on resume is lost
        self._sent_index = self.index_text

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
        ev = events or (TextOnly(on_text) if on_text else AgentEvents())
        try:
            return self._answer(ev)
        finally:
            self._sync()

    def _sync(self) -> None:
        """One durable point per turn: the transcript and the usage lines written in it."""
        self.transcript.sync()
        if self._usage_path is not None:
            fsync_path(self._usage_path)
            self._usage_path = None

    def _answer(self, ev: AgentEvents) -> str:
        reply: list[str] = []
        card_tokens = 0  # card text this turn's tool results put in the conversation
        for _ in range(MAX_STEPS):
            sent_cards = card_tokens  # in the request about to be made (not its answer's)
            msg = self._call(ev)
            content = [prompt.as_sent(b) for b in msg.content]
            self.transcript.add_message("assistant", content)
            reply += [b["text"] for b in content if b.get("type") == "text"]
            uses = [b for b in content if b.get("type") == "tool_use"]
            results, called, full_reads = [], [], 0
            reads: list[dict[str, Any]] = []  # which card and section each read was (usage --cards)
            for use in uses:
                res = self.tools.call(use["name"], use.get("input"))
                called.append(use["name"])
                if use["name"] == "read_memory_card" and not (use.get("input") or {}).get(
                    "section_id"
                ):
                    full_reads += not res.is_error
                if res.card_text:
                    tokens = self.counter.text(res.text)
                    card_tokens += tokens
                    args = use.get("input") or {}
                    reads.append(
                        {
                            "card": str(args.get("project")),
                            "section": args.get("section_id") or None,
                            "tokens": tokens,
                        }
                    )
                block: dict[str, Any] = {
                    "type": "tool_result",
                    "tool_use_id": use["id"],
                    "content": res.text,
                }
                if res.is_error:
                    block["is_error"] = True
                results.append(block)
                ev.tool(ToolCall(use["name"], dict(use.get("input") or {}), res.is_error, res.text))
            ev.response(self._log(msg, "turn", called, full_reads, sent_cards, reads))
            if msg.stop_reason != "tool_use" or not results:
                break
            self.transcript.add_message("user", results)
        ev.turn_end()
        self._maybe_synthesise()
        return "".join(reply)

    @property
    def index_text(self) -> str:
        """The rendered index, kept card by card."""
        if self._index_text is None:
            self._index_text = self._index()
        return self._index_text

    @index_text.setter
    def index_text(self, text: str) -> None:
        self._index_text = text

    def _index(self) -> str:
        """The I block, its size counted against limits.index_tokens (warned once above 80 %)."""
        shown, size = budget.block(self.repo, self.session.branch, self.counter)
        warning = size.warning()
        if warning and not self._budget_warned:
            self._budget_warned = True
            self.warn(warning)
        return shown

    def _layers(self) -> prompt.Layers:
        return prompt.Layers(self.persona, self.rules, self.index_text, self.synthesis_text)

    def _call(self, ev: AgentEvents) -> Any:
        import anthropic

        now = self.last_sent = self.clock()
        if self.last_call is not None and now - self.last_call > self.cfg.ttl_seconds:
            # The cache is cold anyway: showing the fresh index costs nothing extra.
            self.index_text = self._index()
        self._warn_if_uncacheable()
        self._keep_sent_index()
        params = prompt.request(
            self.cfg.model,
            self.cfg.max_tokens,
            self._layers(),
            self.transcript.messages(),
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
        """Warn when no breakpoint's prefix reaches the model's minimum cacheable length
        (a short A+B is still cached within the prefix that ends at I or S)."""
        if self._warned:
            return
        self._warned = True
        minimum = minimum_cacheable_tokens(self.cfg.model)
        prefix = sum(
            self._layer(name, text)[0]
            for name, text in (
                ("A", self.persona),
                ("B", self.rules),
                ("I", self.index_text),
                ("S", self.synthesis_text),
            )
        )
        if prefix < minimum:
            self.warn(
                f"the cached prefix (tools + rules + persona, index, synthesis) is about "
                f"{prefix} tokens, below {self.cfg.model}'s minimum of {minimum}: none of "
                "these layers will be cached"
            )

    def _log(
        self,
        msg: Any,
        purpose: str,
        tools: list[str],
        full_reads: int,
        card: int,
        reads: list[dict[str, Any]] | None = None,
    ) -> ResponseUsage:
        u = msg.usage
        kinds = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        counts = {k: getattr(u, k) or 0 for k in (*kinds, "output_tokens")}
        layers = {"A": 0, "B": 0, "I": 0, "S": 0, "C": 0, "E": 0}
        if purpose == "turn":
            layers["A"] = self._layer("A", self.persona)[0]
            layers["B"] = self._layer("B", self.rules)[0]
            layers["I"] = self._layer("I", self.index_text)[0]
            layers["S"] = self._layer("S", self.synthesis_text)[0]
            layers["E"] = card
        total = sum(counts[k] for k in kinds)
        layers["C"] = max(0, total - sum(layers.values()))
        miss = getattr(getattr(msg, "diagnostics", None), "cache_miss_reason", None)
        cost, uncached = usage.costs(self.cfg, self.cfg.model, counts, self.cfg.cache_ttl)
        simulated = getattr(self.client, "api_key", None) == usage.SIMULATED_KEY
        self._usage_path = usage.append(
            self.repo,
            usage.UsageRecord(
                at=now_iso(),
                session=self.session.id,
                message_id=msg.id,
                model=msg.model,
                purpose=purpose,
                input_tokens=counts["input_tokens"],
                cache_creation_input_tokens=counts["cache_creation_input_tokens"],
                cache_read_input_tokens=counts["cache_read_input_tokens"],
                output_tokens=counts["output_tokens"],
                layers=layers,
                estimated=self.counter.estimated,
                tools=tools,
                full_card_reads=full_reads,
                cache_miss_reason=getattr(miss, "type", None) if miss else None,
                layer_hashes={
                    "AB": self._layer("AB", self.rules + self.persona)[1],
                    "I": self._layer("I", self.index_text)[1],
                    "S": self._layer("S", self.synthesis_text)[1],
                },
                cost_usd=cost,
                uncached_cost_usd=uncached,
                ttl=self.cfg.cache_ttl,
                card_reads=reads or [],
                # the request's time: `gitmem usage` tells an expired cache by it (gap > TTL)
                extra={
                    "sent": round(self.last_sent, 3),
                    **({"simulated": True} if simulated else {}),
                },
            ),
            sync=False,
        )
        return ResponseUsage(
            total, counts["cache_read_input_tokens"], counts["output_tokens"], cost, uncached
        )

    def _layer(self, name: str, text: str) -> tuple[int, str]:
        """(token count, hash) of a layer's text, computed again only when it changed
        (``AB``'s count is not needed: it is only hashed)."""
        got = self._layer_stats.get(name)
        if got is None or got[0] != text:  # equal strings: identity, or one memcmp
            count = 0
            if name != "AB":
                count = self.counter.text(text, TOOLS) if name == "B" else self.counter.text(text)
            got = (text, count, prompt.layer_hash(text))
            self._layer_stats[name] = got
        return got[1], got[2]

    def _maybe_synthesise(self) -> None:
        turns, covered = self.transcript.turns(), self.transcript.covered()
        if turns - covered < self.cfg.synthesis_every:
            return
        import anthropic

        req = synthesis.request(
            self.cfg.model, self.synthesis_text, self.transcript.since_synthesis()
        )
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
