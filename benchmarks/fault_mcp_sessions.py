"""Fault injection on `gitmem mcp` sessions: concurrent appends, then group SIGTERM (seeded).

Each session is the ``gitmem`` console script (``gitmem -C CLIENT mcp``) in a process
group of its own, as an MCP client or a terminal starts it, spoken to in JSON-RPC lines.

* ``append`` rounds: N sessions open on one main, each appends a section of its own
  to one card, all at once, then all leave at once. Every section must be on main and
  no session may wait for review.
* ``stop`` rounds: M sessions, each with a seeded plan (idle; one or two writes; a
  write still unanswered; the client gone, its end running; SIGHUP then SIGTERM; a
  session still starting), then SIGTERM to every process group at once. Rounds
  alternate the review policy (``auto``, ``review``). Every session must exit 0 (or
  die of the signal once it has said how its session ended, or before it began),
  never with a traceback or a git failure; no session branch may be left without an
  edit; an acknowledged edit must be on main or on a branch waiting for review, and on
  main when the session said it landed.

Printed: one line per round (how its sessions ended), then a row per part (tries,
failures, data lost). Exit status 1 when any try failed.

    .venv/bin/python benchmarks/fault_mcp_sessions.py [--seed 22] [--append-rounds 10]
        [--append-sessions 6] [--stop-rounds 5] [--stop-sessions 20]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

GITMEM = str(Path(sys.executable).with_name("gitmem"))
ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GITMEM_", "ANTHROPIC_"))},
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}
PLANS = ("idle", "write", "write2", "unanswered", "left", "hup", "starting")
CARDS = ("alpha", "beta", "gamma")


def git(client: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(client), *args], capture_output=True, env=ENV)
    return proc.stdout.decode()


@dataclass
class Session:
    plan: str
    proc: subprocess.Popen[bytes]
    edits: list[tuple[str, str]] = field(default_factory=list)  # (card, section) asked
    acked: list[tuple[str, str]] = field(default_factory=list)  # answered without error
    err: str = ""

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise EOFError("the server ended")
        return json.loads(line)  # type: ignore[no-any-return]

    def hello(self) -> None:
        params = {"protocolVersion": "2025-11-25", "capabilities": {}}
        params["clientInfo"] = {"name": "fault", "version": "1"}
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        self.answer()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def write(self, card: str, section: str, wait: bool = True) -> None:
        entry = {"section_id": section, "keywords": ["fault"], "summary": f"{section} noted"}
        args = {"project": card, "old_text": "", "new_text": f"## {section}\n{section} text\n"}
        call = {"name": "write_memory_card", "arguments": {**args, "index_entry": entry}}
        self.edits.append((card, section))
        self.send({"jsonrpc": "2.0", "id": len(self.edits), "method": "tools/call", "params": call})
        if wait:
            self.read_answers()

    def read_answers(self) -> None:
        """Note the writes answered so far (blocks until one more line or the end)."""
        got = self.answer()
        if "result" in got and not got["result"].get("isError"):
            self.acked.append(self.edits[int(got["id"]) - 1])

    def finish(self) -> None:
        """After the signal: the rest of its answers, its exit, its stderr."""
        assert self.proc.stdout is not None and self.proc.stderr is not None
        if self.plan == "unanswered":
            with contextlib.suppress(EOFError, ValueError):  # the answer, if it was sent
                self.read_answers()
        self.proc.wait(timeout=180)
        self.err = self.proc.stderr.read().decode(errors="replace")


def spawn(client: Path, plan: str) -> Session:
    cmd = [GITMEM, "-C", str(client), "mcp"]
    pipe = subprocess.PIPE
    proc = subprocess.Popen(
        cmd, stdin=pipe, stdout=pipe, stderr=pipe, env=ENV, start_new_session=True
    )
    return Session(plan, proc)


def new_client(root: Path, policy: str) -> Path:
    client = root / "client"
    subprocess.run([GITMEM, "init", str(client)], env=ENV, capture_output=True, check=True)
    toml = client / "gitmem.toml"
    toml.write_text(toml.read_text().replace('review = "auto"', f'review = "{policy}"'))
    return client


def branches(client: Path) -> list[str]:
    out = git(client, "for-each-ref", "--format=%(refname)", "refs/heads/gitmem/session/")
    return out.split()


def on(client: Path, rev: str, card: str, section: str) -> bool:
    return f"## {section}\n" in git(client, "show", f"{rev}:cards/{card}.md")


def in_parallel(jobs: list[Any]) -> list[BaseException]:
    errors: list[BaseException] = []

    def run(job: Any) -> None:
        try:
            job()
        except Exception as exc:  # a try that failed is counted, not raised
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(j,)) for j in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


# -- concurrent appends ------------------------------------------------------------------


def append_round(root: Path, n: int, rnd: int) -> tuple[int, int]:
    """(failures, lost) of one round of ``n`` concurrent appends to one card."""
    client = new_client(root, "auto")
    first = spawn(client, "write")
    first.hello()
    first.write("alpha", "base")
    first.proc.stdin.close()  # type: ignore[union-attr]
    first.finish()
    sessions = [spawn(client, "write") for _ in range(n)]
    in_parallel([s.hello for s in sessions])
    in_parallel([lambda s=s, i=i: s.write("alpha", f"r{rnd}-s{i}") for i, s in enumerate(sessions)])
    for s in sessions:
        s.proc.stdin.close()  # type: ignore[union-attr]
    in_parallel([s.finish for s in sessions])
    left = branches(client)
    landed = [s for s in sessions if s.proc.returncode == 0 and "1 memory edit landed" in s.err]
    failures = len(sessions) - len(landed) + sum(len(s.edits) - len(s.acked) for s in sessions)
    lost = sum(  # acknowledged, and neither on main nor waiting for review
        1
        for s in sessions
        for e in s.acked
        if not on(client, "main", *e) and not any(on(client, b, *e) for b in left)
    )
    return failures, lost


# -- group SIGTERM ------------------------------------------------------------------------


def prepare(client: Path, s: Session, rng: random.Random, tag: str) -> None:
    """Bring a session to the point where its plan wants the signal."""
    if s.plan == "starting":
        return
    s.hello()
    writes = {"write": 1, "write2": 2, "left": 1, "hup": 1}.get(s.plan, 0)
    for k in range(writes):
        s.write(rng.choice(CARDS), f"{tag}-{k}")


def stop_round(root: Path, m: int, rng: random.Random, rnd: int, policy: str) -> tuple[int, int]:
    """(failures, lost) of one round: ``m`` sessions, then SIGTERM to every group."""
    client = new_client(root, policy)
    start = git(client, "rev-parse", "main")
    plans = [rng.choice(PLANS) for _ in range(m)]
    sessions = [spawn(client, p) for p in plans if p != "starting"]
    seeds = [rng.random() for _ in sessions]
    in_parallel(
        [
            lambda s=s, k=k: prepare(client, s, random.Random(seeds[k]), f"r{rnd}-s{k}")
            for k, s in enumerate(sessions)
        ]
    )
    for k, s in enumerate(sessions):
        if s.plan == "unanswered":
            s.write(rng.choice(CARDS), f"r{rnd}-s{k}-u", wait=False)
        elif s.plan == "left":
            s.proc.stdin.close()  # type: ignore[union-attr]
    sessions += [spawn(client, "starting") for p in plans if p == "starting"]
    time.sleep(rng.uniform(0.0, 0.3))
    for s in sessions:
        if s.plan == "hup":
            os.killpg(s.proc.pid, signal.SIGHUP)
        os.killpg(s.proc.pid, signal.SIGTERM)
    in_parallel([s.finish for s in sessions])
    failures, lost = check_stop(client, sessions)
    moved = git(client, "rev-parse", "main") != start
    return failures + (policy == "review" and moved), lost  # under review main stays


def outcome(s: Session) -> str:
    if s.proc.returncode != 0:
        return "ended, then died of the signal" if "ended:" in s.err else "died before it began"
    for words in ("landed on main", "wait", "no memory edits"):
        if words in s.err:
            return {"wait": "waits for review", "no memory edits": "left nothing"}.get(words, words)
    return "other"


def check_stop(client: Path, sessions: list[Session]) -> tuple[int, int]:
    failures = lost = 0
    seen = Counter(outcome(s) for s in sessions)
    print("  " + ", ".join(f"{n} {what}" for what, n in sorted(seen.items())))
    left = branches(client)
    pending = [b for b in left if git(client, "rev-list", "--count", f"main..{b}").strip() != "0"]
    failures += len(left) - len(pending)  # a session branch without an edit
    for s in sessions:
        ended = "gitmem mcp: session " in s.err  # it said how its session ended
        bad = "Traceback" in s.err or "git cat-file" in s.err or "failed (" in s.err
        by_signal = s.proc.returncode in (-signal.SIGTERM, -signal.SIGHUP)
        # A stop may come once the end is over (the client left first), or before the
        # session began: the process dies of it then, with nothing left to do.
        fine = s.proc.returncode == 0 or (by_signal and (ended or s.plan == "starting"))
        if bad or not fine:
            failures += 1
            print(f"  {s.plan}: exit {s.proc.returncode}: {s.err.strip()[-300:]}")
        landed = "landed on main" in s.err
        for card, section in s.acked:
            if on(client, "main", card, section):
                continue
            if landed or not any(on(client, b, card, section) for b in pending):
                lost += 1
                print(f"  {s.plan}: {card} § {section} acknowledged, not on main or pending")
    return failures, lost


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--append-rounds", type=int, default=10)
    ap.add_argument("--append-sessions", type=int, default=6)
    ap.add_argument("--stop-rounds", type=int, default=5)
    ap.add_argument("--stop-sessions", type=int, default=20)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    rows = []
    total = [0, 0, 0]
    for rnd in range(args.append_rounds):
        with tempfile.TemporaryDirectory(prefix="gitmem-fault-") as tmp:
            failed, lost = append_round(Path(tmp), args.append_sessions, rnd)
        print(f"append round {rnd}: {args.append_sessions} sessions, {failed} failed, {lost} lost")
        total = [total[0] + args.append_sessions, total[1] + failed, total[2] + lost]
    rows.append(("concurrent appends", args.append_rounds, *total))
    total = [0, 0, 0]
    for rnd in range(args.stop_rounds):
        policy = ("auto", "review")[rnd % 2]
        with tempfile.TemporaryDirectory(prefix="gitmem-fault-") as tmp:
            failed, lost = stop_round(Path(tmp), args.stop_sessions, rng, rnd, policy)
        print(
            f"stop round {rnd} ({policy}): {args.stop_sessions} sessions, {failed} failed, {lost} lost"
        )
        total = [total[0] + args.stop_sessions, total[1] + failed, total[2] + lost]
    rows.append(("group SIGTERM", args.stop_rounds, *total))
    for what, rounds, tries, failed, lost in rows:
        print(f"{what}: {rounds} rounds, {tries} sessions, {failed} failures, {lost} lost")
    return 1 if any(r[3] or r[4] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
