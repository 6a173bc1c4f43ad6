"""Budget: gitmem's own time per chat turn <= 10 ms at 100k commits.

A scripted session (``gitmem.run_chat``, in-process, on a repo opened with
``gitmem.open_repo``) against the fake Messages API (``gitmem.fakeapi``) on 127.0.0.1: the
turns recall, remember, search and chat about the client's cards. Each turn's wall time
less the time spent in the API client (its requests and the streamed response, read ahead)
is gitmem's own, in wall time and in the main thread's CPU (the fake API runs in a
thread of its own; the machine may be shared, and wall time holds the two fsyncs of a
turn; ``--api-process`` runs the fake API in a process of its own, so its work does not
hold this one's interpreter lock); the first turn, which also starts the session, is
left out of the medians::

    .venv/bin/python benchmarks/bench_turn.py                  # 100k commits, 60 turns
    .venv/bin/python benchmarks/bench_turn.py --quick          # 10k commits, 12 turns

``--start ROUNDS``: also a session's start, ``gitmem chat`` from the process's start to its first
request (to the fake API in this process), in CPU seconds of the ``gitmem`` process (not
the git it runs, shown apart: the ones ended by then) less its ``import anthropic`` and the SDK's own requests
(``count_tokens``); one-turn sessions in turn on one copy, each starting after the last
one landed, the first (which may build caches) left out of the median.
"""

from __future__ import annotations

import argparse
import contextlib
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


# The fake API in a process of its own (``--api-process``), on its own clock: it prints
# its address and serves until its stdin closes.
_API = """
import sys
from gitmem.fakeapi import FakeAnthropicServer, RuleModel
with FakeAnthropicServer(RuleModel()) as api:
    print(api.base_url, flush=True)
    sys.stdin.read()
"""


@contextlib.contextmanager
def fake_api(clock: ManualClock, own_process: bool) -> Iterator[str]:
    """The fake API's base URL: in a thread of this process (on ``clock``) or apart."""
    if not own_process:
        with FakeAnthropicServer(RuleModel(), clock=clock) as api:
            yield api.base_url
        return
    args = [sys.executable, "-c", _API]
    with subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None and proc.stdin is not None
        try:
            yield proc.stdout.readline().strip()
        finally:
            proc.stdin.close()


def per_turn(
    root: Path, turns: int, cpu: list[float] | None = None, api_process: bool = False
) -> list[float]:
    """gitmem's own seconds per turn, the API's time taken out (wall; ``cpu`` gets the
    main thread's CPU seconds, the API client's taken out, the fake API's thread not in)."""
    clock = ManualClock(1_000_000.0)
    in_api = [0.0, 0.0]
    with fake_api(clock, api_process) as url, gitmem.open_repo(root) as repo:
        sdk = anthropic.Anthropic(api_key="bench", base_url=url, max_retries=0)

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
# import and count_tokens calls apart; the session then goes on to its end.
_CHILD = """
import json, os, resource, sys, time
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
send = Messages.stream
def stream(self, *a, **k):
    if api[0] >= 0:
        got = {"interpreter": t0, "anthropic": t1 - t0, "api": api[0]}
        got["gitmem"] = time.process_time() - t1 - api[0]
        git = resource.getrusage(resource.RUSAGE_CHILDREN)
        got["git"] = git.ru_utime + git.ru_stime
        with open(os.environ["BENCH_OUT"], "w") as fh:
            json.dump(got, fh)
        api[0] = -1e9
    return send(self, *a, **k)
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
    ap.add_argument("--api-process", action="store_true", help="the fake API in a process")
    ap.add_argument("--start", type=int, metavar="ROUNDS", help="a session's start as well")
    ap.add_argument(
        "--signed",
        action="store_true",
        help="the copy signs from now on (allowed_signers committed) and one card was then "
        "edited with plain git: every read checks what it shows (index/provenance.py)",
    )
    args = ap.parse_args()
    turns = 12 if args.quick else args.turns
    common.machine()
    for size in common.sizes(args):
        cpu: list[float] = []
        with common.scratch() as tmp:
            copy = common.copy_of(common.history(size), Path(tmp) / "repo")
            if args.signed:
                block = signed_from_now(copy)
                common.row(f"{size:,} commits, signed: I block's unverified line", block, "")
            own = per_turn(copy, turns, cpu, args.api_process)
        p50, c50 = statistics.median(own[1:]), statistics.median(cpu[1:])
        common.row(f"{size:,} commits, {turns} turns: first turn", common.ms(own[0]), "")
        common.row(f"{size:,} commits: gitmem's own wall time per turn", f"{p50 * 1000:.1f} ms", "")
        common.row(
            f"{size:,} commits: gitmem's own CPU per turn",
            f"{c50 * 1000:.1f} ms",
            "<= 10 ms",
            c50 <= 0.01,
        )
        if args.start:
            start_rows(size, args.start)
    return 0


def signed_from_now(root: Path) -> str:
    """``allowed_signers`` committed (the history before it is from before signing), then
    a plain-git edit of one card; the I block's line that names it, in bytes."""

    def run(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)

    (root / "allowed_signers").write_text("bench@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5\n")
    run("add", "allowed_signers")
    run("commit", "-q", "--no-verify", "--no-gpg-sign", "-m", "signing from now on")
    card = sorted((root / "cards").glob("*.md"))[0]
    card.write_text(card.read_text() + "A line added with plain git.\n")
    run("commit", "-q", "--no-verify", "--no-gpg-sign", "-am", "a plain-git edit")
    with gitmem.open_repo(root) as repo:
        text, _ = gitmem.render_index(repo)
    line = next(ln for ln in text.splitlines() if ln.startswith("Unverified ("))
    return f"{len(line.encode())} bytes: {line[:60]}..."


def start_rows(size: int, rounds: int) -> None:
    with common.scratch() as tmp:
        got = start_cpu(common.copy_of(common.history(size), Path(tmp) / "repo"), rounds)
    rest = got[1:] or got
    for key in ("interpreter", "anthropic", "api", "git"):
        med = statistics.median(r[key] for r in rest)
        common.row(f"{size:,} commits: start CPU, {key}", common.ms(med), "")
    own = statistics.median(r["gitmem"] for r in rest)
    common.row(
        f"{size:,} commits: start CPU, gitmem's own (first round {got[0]['gitmem']:.2f} s)",
        f"{own:.2f} s",
        "<= 0.5 s",
        own <= 0.5,
    )


if __name__ == "__main__":
    raise SystemExit(main())
