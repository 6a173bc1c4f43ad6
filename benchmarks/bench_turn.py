"""Budget: gitmem's own time per chat turn <= 10 ms at 100k commits.

A scripted session (``gitmem.run_chat``, in-process, on a repo opened with
``gitmem.open_repo``) against the fake Messages API (``gitmem.fakeapi``) on 127.0.0.1: the
turns recall, remember, search and chat about the client's cards. Each turn's wall time
less the time spent in the API client (its requests and the streamed response, read ahead)
is gitmem's own; the first turn, which also starts the session, is left out of the
median::

    .venv/bin/python benchmarks/bench_turn.py                  # 100k commits, 60 turns
    .venv/bin/python benchmarks/bench_turn.py --quick          # 10k commits, 12 turns

``--start``: a session's start, ``gitmem chat`` from the process's start to its first
request (to the fake API in this process), in CPU seconds of the ``gitmem`` process less
its ``import anthropic`` and the SDK's own requests (``count_tokens``); median of rounds
on one copy, the first (which may build caches) left out.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import common

import gitmem
from gitmem.fakeapi import FakeAnthropicServer, ManualClock, RuleModel


def script(repo: gitmem.MemoryRepo, turns: int) -> list[str]:
    index = gitmem.read_index(repo)
    secs = [(c.project, s.id) for c in index.cards for s in c.sections if s.summary][:40]
    lines: list[str] = []
    for i in range(turns):
        project, section = secs[(i * 7) % len(secs)]
        lines.append(
            [
                f"recall {project} {section}",
                f"remember {project} Call notes {i}: spoke with the client about item {i}",
                f"How are things going with {project}, point {i}?",
                f"search {project}",
                f"Thanks, noted for turn {i}.",
                f"recall {project}",
            ][i % 6]
        )
    return lines


class _Replay:
    """A stream's events and final message, read ahead so the SDK's time is not gitmem's."""

    def __init__(self, events: list[Any], msg: Any) -> None:
        self._events = events
        self.text_stream = iter([e.text for e in events if e.type == "text"])
        self._msg = msg

    def __iter__(self) -> Iterator[Any]:
        return iter(self._events)

    def get_final_message(self) -> Any:
        return self._msg


def per_turn(root: Path, turns: int, cpu: list[float] | None = None) -> list[float]:
    """gitmem's own seconds per turn, the API's time taken out (wall; ``cpu`` gets the
    main thread's CPU seconds, the API client's taken out, the fake API's thread not in)."""
    clock = ManualClock(1_000_000.0)
    in_api = [0.0, 0.0]
    with FakeAnthropicServer(RuleModel(), clock=clock) as api, gitmem.open_repo(root) as repo:
        sdk = anthropic.Anthropic(api_key="bench", base_url=api.base_url, max_retries=0)

        def timing(fn: Callable[..., Any]) -> Callable[..., Any]:
            def wrapped(*a: Any, **k: Any) -> Any:
                start, start_cpu = time.perf_counter(), time.thread_time()
                try:
                    return fn(*a, **k)
                finally:
                    in_api[0] += time.perf_counter() - start
                    in_api[1] += time.thread_time() - start_cpu

            return wrapped

        def stream(**k: Any) -> Any:
            start, start_cpu = time.perf_counter(), time.thread_time()
            with real_stream(**k) as s:
                events = list(s)
                msg = s.get_final_message()
            in_api[0] += time.perf_counter() - start
            in_api[1] += time.thread_time() - start_cpu
            return _Stream(_Replay(events, msg))

        real_stream = sdk.messages.stream
        sdk.messages.count_tokens = timing(sdk.messages.count_tokens)  # type: ignore[method-assign]
        sdk.messages.create = timing(sdk.messages.create)  # type: ignore[method-assign]
        sdk.messages.stream = stream  # type: ignore[method-assign]
        lines = script(repo, turns)
        own: list[float] = []

        def measured() -> Iterator[str]:
            for line in lines:
                in_api[:] = [0.0, 0.0]
                start, start_cpu = time.perf_counter(), time.thread_time()
                clock.advance(20)
                yield line
                own.append(time.perf_counter() - start - in_api[0])
                if cpu is not None:
                    cpu.append(time.thread_time() - start_cpu - in_api[1])

        gitmem.run_chat(
            repo, measured(), client=sdk, write=lambda _t: None, warn=lambda _m: None, clock=clock
        )
        sdk.close()
    return own


class _Stream:
    """What ``messages.stream(...)`` returns: a context manager around the replay."""

    def __init__(self, replay: _Replay) -> None:
        self._replay = replay

    def __enter__(self) -> _Replay:
        return self._replay

    def __exit__(self, *exc: object) -> None:
        return None


# Run as ``python -c`` in the ``gitmem chat`` process: CPU at its first request, the SDK's
# import and count_tokens calls apart; then it exits without ending the session.
_CHILD = """
import json, os, sys, time
t0 = time.process_time()
import anthropic
from anthropic.resources.messages import Messages
t1, api = time.process_time(), [0.0]
count = Messages.count_tokens
def counted(self, *a, **k):
    s = time.process_time()
    try:
        return count(self, *a, **k)
    finally:
        api[0] += time.process_time() - s
def stream(self, *a, **k):
    got = {"interpreter": t0, "anthropic": t1 - t0, "api": api[0]}
    got["gitmem"] = time.process_time() - t1 - api[0]
    with open(os.environ["BENCH_OUT"], "w") as fh:
        json.dump(got, fh)
    os._exit(0)
Messages.count_tokens, Messages.stream = counted, stream
from gitmem.cli import main
sys.argv = ["gitmem", "chat"]
main()
"""


def start_cpu(root: Path, rounds: int) -> list[dict[str, float]]:
    """CPU seconds of ``gitmem chat``'s start, per round (see the module's docstring)."""
    got: list[dict[str, float]] = []
    with FakeAnthropicServer(RuleModel()) as api:
        env = {**os.environ, "ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "bench"}
        env["BENCH_OUT"] = str(root.parent / "start.json")
        for _ in range(rounds):
            subprocess.run(
                [sys.executable, "-c", _CHILD], cwd=root, env=env, input=b"hello\n", check=True
            )
            got.append(json.loads(Path(env["BENCH_OUT"]).read_text()))
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common.add_sizes(ap, "100000", "10000")
    ap.add_argument("--turns", type=int, default=60)
    ap.add_argument("--start", type=int, metavar="ROUNDS", help="a session's start instead")
    args = ap.parse_args()
    if args.start:
        return start_main(args)
    turns = 12 if args.quick else args.turns
    common.machine()
    for size in common.sizes(args):
        with common.scratch() as tmp:
            own = per_turn(common.copy_of(common.history(size), Path(tmp) / "repo"), turns)
        p50 = statistics.median(own[1:])
        common.row(f"{size:,} commits, {turns} turns: first turn", common.ms(own[0]), "")
        common.row(
            f"{size:,} commits: gitmem's own time per turn",
            f"{p50 * 1000:.1f} ms",
            "<= 10 ms",
            p50 <= 0.01,
        )
    return 0


def start_main(args: argparse.Namespace) -> int:
    common.machine()
    for size in common.sizes(args):
        with common.scratch() as tmp:
            got = start_cpu(common.copy_of(common.history(size), Path(tmp) / "repo"), args.start)
        rest = got[1:] or got
        for key in ("interpreter", "anthropic", "api"):
            med = statistics.median(r[key] for r in rest)
            common.row(f"{size:,} commits: start CPU, {key}", common.ms(med), "")
        own = statistics.median(r["gitmem"] for r in rest)
        common.row(
            f"{size:,} commits: start CPU, gitmem's own (first round {got[0]['gitmem']:.2f} s)",
            f"{own:.2f} s",
            "<= 0.5 s",
            own <= 0.5,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
