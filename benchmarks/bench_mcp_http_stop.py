"""``gitmem mcp --http`` stops within 1 s of SIGTERM: seconds from the signal to the
process's exit, with the official client connected (one edit made, its GET stream open)
and with none. A repo made by ``gitmem init``; medians::

    .venv/bin/python benchmarks/bench_mcp_http_stop.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import anyio
import anyio.to_thread
import common
from mcp.client import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TOKEN = "bench-token-0123456789-abcdefghijklmnop"
WRITE = {
    "project": "acme",
    "old_text": "",
    "new_text": "## Budget\n30k\n",
    "index_entry": {"section_id": "budget", "keywords": ["budget"], "summary": "30k"},
}


class Seen(logging.Handler):
    """The client's log lines: its GET stream's opening is logged, nothing else says it."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def start(root: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    cmd = [common.GITMEM, "mcp", "--http", "127.0.0.1:0"]
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    assert proc.stderr is not None
    line = ""
    while "serving" not in line:
        line = proc.stderr.readline().decode()
        if not line:
            raise SystemExit("gitmem mcp --http exited before serving")
    return proc, re.findall(r"http://\S+/mcp", line)[0]


def stopped(proc: subprocess.Popen[bytes]) -> float:
    """SIGTERM; seconds until the process has exited (exit 0, or the benchmark stops)."""
    begin = time.perf_counter()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    took = time.perf_counter() - begin
    if proc.returncode:
        raise SystemExit(f"gitmem mcp --http exited {proc.returncode}: {err.decode()}")
    return took


def with_client(root: Path, env: dict[str, str], seen: Seen) -> float:
    proc, url = start(root, env)

    async def main() -> float:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        async with (
            http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            seen.messages.clear()
            await session.initialize()
            await session.call_tool("write_memory_card", WRITE)
            with anyio.fail_after(60):
                while "GET SSE connection established" not in seen.messages:
                    await anyio.sleep(0.02)
            return await anyio.to_thread.run_sync(stopped, proc)

    try:
        return anyio.run(main)
    finally:
        proc.kill()
        proc.wait()


def without_client(root: Path, env: dict[str, str]) -> float:
    return stopped(start(root, env)[0])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    common.machine()
    seen = Seen()
    client_log = logging.getLogger("mcp.client.streamable_http")
    client_log.setLevel(logging.DEBUG)
    client_log.addHandler(seen)
    with common.scratch() as tmp:
        work = Path(tmp)
        env = common.bench_env(work / "home") | {"GITMEM_MCP_TOKEN": TOKEN}
        root = work / "client"
        common.run([common.GITMEM, "init", str(root)], work, env)
        got = common.interleaved(
            {
                "client": lambda: with_client(root, env, seen),
                "none": lambda: without_client(root, env),
            },
            args.rounds,
        )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{args.rounds} rounds; load {load} at the end")
    for name, what in (("client", "a client connected, GET stream open"), ("none", "no client")):
        figure = common.ms(got[name])
        common.row(f"SIGTERM to exit, {what}", figure, "<= 1 s", got[name] <= 1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
