"""A scripted agent session against the fake Messages API: what the cache layout saves.

    .venv/bin/python benchmarks/bench_session.py            # 60 turns, 50 and 1,000 cards
    .venv/bin/python benchmarks/bench_session.py --quick    # a smoke run

Prints, for a 60-turn session on a generated 50-card client:
  * input cost against the same requests sent uncached (goal <= 0.15x), and against a
    naive layout that puts every card in the system prompt (reported);
  * cache writes of each cached layer against the minimum possible (one per change);
and for a session on a 1,000-card client, gitmem's own time per turn, model excluded
(goal <= 30 ms). Token counts come from the fake API's tokenizer (4 bytes a token).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic

sys.path.insert(0, str(Path(__file__).parent))

from generate import Params, cached_repo

from gitmem.agent import usage
from gitmem.agent.chat import run_chat
from gitmem.fakeapi import FakeAnthropicServer, ManualClock, RuleModel
from gitmem.fakeapi.tokens import block_tokens, tool_tokens
from gitmem.index import build as index
from gitmem.memory.repo import MemoryRepo


def copy_repo(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, symlinks=True)
    return dest


def script(repo: MemoryRepo, turns: int) -> list[str]:
    idx = index.refresh(repo)
    secs = [(c.project, s.id) for c in idx.cards for s in c.sections if s.indexed][:40]
    lines: list[str] = []
    for i in range(turns):
        project, section = secs[(i * 7) % len(secs)]
        kind = i % 6
        if kind == 0:
            lines.append(f"recall {project} {section}")
        elif kind == 1:
            lines.append(f"remember {project} Call notes {i}: spoke with the client about item {i}")
        elif kind == 2:
            lines.append(f"How are things going with {project}, point {i}?")
        elif kind == 3:
            lines.append(f"search {project}")
        elif kind == 4:
            lines.append(f"Thanks, noted for turn {i}.")
        else:
            lines.append(f"recall {project}")
    return lines


def timed_lines(lines: list[str], clock: ManualClock, gap: float) -> Iterator[str]:
    for line in lines:
        clock.advance(gap)
        yield line


def layer_bounds(body: dict[str, Any]) -> dict[str, int]:
    tools = sum(tool_tokens(t) for t in body["tools"])
    sys_blocks = [block_tokens(b) for b in body["system"]]
    return {
        "AB": tools + sys_blocks[0],
        "I": tools + sum(sys_blocks[:2]),
        "S": tools + sum(sys_blocks[:3]),
    }


def cache_writes(reqs: list[Any]) -> tuple[dict[str, int], dict[str, int]]:
    """Writes of each cached layer, and the minimum: one at first, one per change of its prefix."""
    writes = {"AB": 0, "I": 0, "S": 0}
    minimum = {"AB": 0, "I": 0, "S": 0}
    prev: dict[str, str] = {}
    for rec in reqs:
        body, use = rec.body, rec.response["usage"]
        bounds = layer_bounds(body)
        texts = {"AB": repr((body["tools"], body["system"][0]["text"]))}
        texts["I"] = texts["AB"] + body["system"][1]["text"]
        texts["S"] = texts["I"] + body["system"][2]["text"]
        for layer in writes:
            if (
                use["cache_read_input_tokens"] < bounds[layer]
                and use["cache_creation_input_tokens"]
            ):
                writes[layer] += 1
            if prev.get(layer) != texts[layer]:
                minimum[layer] += 1
        prev = texts
    return writes, minimum


def naive_tokens(sdk: anthropic.Anthropic, body: dict[str, Any], cards: str) -> int:
    system = body["system"][0]["text"] + "\n\n# All memory cards\n\n" + cards
    msgs = []
    for m in body["messages"]:
        content = [{k: v for k, v in b.items() if k != "cache_control"} for b in m["content"]]
        msgs.append({"role": m["role"], "content": content})
    got = sdk.messages.count_tokens(
        model=body["model"], system=system, tools=body["tools"], messages=msgs
    )
    return int(got.input_tokens)


def cost_session(root: Path, turns: int) -> None:
    clock = ManualClock(1_000_000.0)
    with FakeAnthropicServer(RuleModel(), clock=clock) as api, MemoryRepo(root) as repo:
        sdk = anthropic.Anthropic(api_key="bench", base_url=api.base_url, max_retries=0)
        lines = script(repo, turns)
        res = run_chat(
            repo,
            timed_lines(lines, clock, 30.0),
            client=sdk,
            write=lambda _t: None,
            warn=lambda m: print("warning:", m),
            clock=clock,
        )
        assert res.failed_turns == 0
        reqs = [
            r
            for r in api.requests
            if r.path.endswith("/v1/messages")
            and r.status == 200
            and len(r.body.get("system") or []) == 3
        ]
        recs = [r for r in usage.load(repo) if r["session"] == res.session]
        price = repo.config.price(repo.config.model)
        assert price is not None
        inp = sum(r["input_tokens"] for r in recs) * price.input
        inp += sum(r["cache_creation_input_tokens"] for r in recs) * price.cache_write_5m
        inp += sum(r["cache_read_input_tokens"] for r in recs) * price.cache_read
        total = sum(
            r["input_tokens"] + r["cache_creation_input_tokens"] + r["cache_read_input_tokens"]
            for r in recs
        )
        uncached = total * price.input
        cards = "\n\n".join(
            (repo.store.read_blob(e.sha) or b"").decode()
            for e in repo.store.read_tree("refs/heads/main:cards")
        )
        naive = sum(naive_tokens(sdk, r.body, cards) for r in reqs) * price.input
        writes, minimum = cache_writes(reqs)
        sdk.close()
    print(
        f"session: {turns} turns, {len(reqs)} agent requests, {len(recs)} usage lines "
        f"(incl. synthesis), model {repo.config.model}"
    )
    print(f"  input tokens sent: {total:,}; input cost ${inp / 1e6:.4f}")
    print(
        f"  vs the same requests uncached: ${uncached / 1e6:.4f}  ratio {inp / uncached:.3f}x "
        f"(goal <= 0.15x: {'met' if inp / uncached <= 0.15 else 'MISSED'})"
    )
    print(
        f"  vs a naive layout with every card in the system prompt, uncached: "
        f"${naive / 1e6:.4f}  ratio {inp / naive:.3f}x"
    )
    for layer in writes:
        print(f"  cache writes of {layer:<2}: {writes[layer]} (minimum possible {minimum[layer]})")


def overhead_session(root: Path, turns: int) -> None:
    fig = overhead_figures(root, turns)
    p50 = fig["p50"]
    print(
        f"gitmem's own time per turn, model excluded, {fig['cards']:,.0f} cards, {turns} turns: "
        f"p50 {p50:.1f} ms, p95 {fig['p95']:.1f} ms, first turn {fig['first']:.1f} ms "
        f"(goal p50 <= 30 ms: {'met' if p50 <= 30 else 'MISSED'}); whole session "
        f"{fig['wall']:.1f} s"
    )


def overhead_figures(root: Path, turns: int) -> dict[str, float]:
    """gitmem's own time per turn (ms; model and SDK excluded): p50, p95, first; wall (s)."""
    clock = ManualClock(1_000_000.0)
    with FakeAnthropicServer(RuleModel(), clock=clock) as api, MemoryRepo(root) as repo:
        sdk = anthropic.Anthropic(api_key="bench", base_url=api.base_url, max_retries=0)
        in_api = [0.0]

        def timing(fn: Callable[..., Any]) -> Callable[..., Any]:
            def wrapped(*a: Any, **k: Any) -> Any:
                t0 = time.perf_counter()
                try:
                    return fn(*a, **k)
                finally:
                    in_api[0] += time.perf_counter() - t0

            return wrapped

        class TimedStream:
            def __init__(self, cm: Any) -> None:
                self.cm = cm

            def __enter__(self) -> Any:
                t0 = time.perf_counter()
                stream = self.cm.__enter__()
                events = list(stream)
                msg = stream.get_final_message()
                in_api[0] += time.perf_counter() - t0
                return _Replay(events, msg)

            def __exit__(self, *exc: Any) -> None:
                self.cm.__exit__(*exc)

        sdk.messages.count_tokens = timing(sdk.messages.count_tokens)  # type: ignore[method-assign]
        sdk.messages.create = timing(sdk.messages.create)  # type: ignore[method-assign]
        real_stream = sdk.messages.stream
        sdk.messages.stream = lambda **k: TimedStream(real_stream(**k))  # type: ignore[method-assign]
        per_turn: list[float] = []
        lines = script(repo, turns)

        def measured() -> Iterator[str]:
            for line in lines:
                in_api[0] = 0.0
                t0 = time.perf_counter()
                clock.advance(20)
                yield line
                per_turn.append((time.perf_counter() - t0 - in_api[0]) * 1000)

        t_start = time.perf_counter()
        run_chat(
            repo, measured(), client=sdk, write=lambda _t: None, warn=lambda _m: None, clock=clock
        )
        wall = time.perf_counter() - t_start
        n_cards = len(index.refresh(repo).cards)
        sdk.close()
    steady = per_turn[1:]  # the first turn also builds the session (index, counts)
    p50 = statistics.median(steady)
    p95 = sorted(steady)[int(0.95 * (len(steady) - 1))]
    return {"p50": p50, "p95": p95, "first": per_turn[0], "wall": wall, "cards": n_cards}


class _Replay:
    """The stream's events and final message, read ahead so the SDK's time is not ours."""

    def __init__(self, events: list[Any], msg: Any) -> None:
        self._events = events
        self.text_stream = iter([e.text for e in events if e.type == "text"])
        self._msg = msg

    def __iter__(self) -> Iterator[Any]:
        return iter(self._events)

    def get_final_message(self) -> Any:
        return self._msg


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--turns", type=int, default=60)
    ap.add_argument("--quick", action="store_true", help="small repos, 12 turns")
    args = ap.parse_args()
    small = Params(cards=50, commits=500) if not args.quick else Params(cards=20, commits=100)
    big = Params(cards=1000, commits=10_000) if not args.quick else Params(cards=100, commits=500)
    turns = 12 if args.quick else args.turns
    with tempfile.TemporaryDirectory(prefix="gitmem-bench-session-") as tmp:
        cost_session(copy_repo(cached_repo(small), Path(tmp) / "small"), turns)
        overhead_session(copy_repo(cached_repo(big), Path(tmp) / "big"), turns)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
