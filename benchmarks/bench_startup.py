"""Start-up: ``gitmem index`` on a small repo <= 3x ``python -c 'import click'``; ``gitmem
import NOTES --dry-run`` (no SDK); ``gitmem chat``'s first prompt in a terminal <= 1 s
(a pty; the SDK may still be loading); ``gitmem mcp`` answering ``initialize`` <= 1.6x
``python -c 'import mcp.server.lowlevel'``; ``python -c 'import anthropic'`` for reference.

A repo made by ``gitmem init`` with one ``gitmem write``; the processes run in turn,
round by round, with the same interpreter. Medians::

    .venv/bin/python benchmarks/bench_startup.py [--rounds 31]
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import common


def to_prompt(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Seconds from starting ``cmd`` in a terminal to its ``you>`` prompt; then Ctrl-D."""
    master, slave = pty.openpty()
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    shown = b""
    try:
        while b"you>" not in shown:
            if not select.select([master], [], [], 60)[0]:
                raise SystemExit(f"no prompt from {' '.join(cmd)}: {shown!r}")
            shown += os.read(master, 65536)
        took = time.perf_counter() - start
        os.write(master, b"\x04")
        while select.select([master], [], [], 60)[0]:
            try:
                if not os.read(master, 65536):
                    break
            except OSError:  # the terminal closed with the process
                break
        proc.wait(timeout=60)
    finally:
        proc.kill()
        os.close(master)
    return took


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def to_initialized(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Seconds from starting ``cmd`` (an MCP server on stdio) to its answer to
    ``initialize``; then its stdin is closed and it ends."""
    start = time.perf_counter()
    pipe = subprocess.PIPE
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdin=pipe, stdout=pipe, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    proc.stdin.flush()
    line = proc.stdout.readline()
    took = time.perf_counter() - start
    if b'"result"' not in line:
        raise SystemExit(f"no answer to initialize from {' '.join(cmd)}: {line!r}")
    proc.stdin.close()
    proc.wait(timeout=60)
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=31)
    ap.add_argument("--quick", action="store_true", help="11 rounds")
    args = ap.parse_args()
    common.machine()
    with common.scratch() as tmp:
        work = Path(tmp)
        env = common.bench_env(work / "home")
        root = work / "small"
        common.run([common.GITMEM, "init", str(root)], work, env)
        note = ["--old", "", "--new", "## Budget\n\nQ3 budget: 30k\n", "--section", "budget"]
        note += ["--keywords", "budget,q3", "--summary", "Q3 budget is 30k"]
        common.run([common.GITMEM, "write", "acme-website", *note], root, env)
        notes = work / "notes"
        notes.mkdir()
        (notes / "globex.md").write_text("# Globex\n\nline one\nline two\n")
        # no request is made before the prompt: the endpoint is never contacted
        chat_env = env | {"ANTHROPIC_API_KEY": "unused", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
        chat_env["TERM"] = "xterm"
        got = common.interleaved(
            {
                "index": lambda: common.run([common.GITMEM, "index"], root, env),
                "import": lambda: common.run(
                    [common.GITMEM, "import", str(notes), "--dry-run"], root, env
                ),
                "chat": lambda: to_prompt([common.GITMEM, "chat"], root, chat_env),
                "mcp": lambda: to_initialized([common.GITMEM, "mcp"], root, env),
                "lowlevel": lambda: common.run(
                    [sys.executable, "-c", "import mcp.server.lowlevel"], root, env
                ),
                "click": lambda: common.run([sys.executable, "-c", "import click"], root, env),
                "anthropic": lambda: common.run(
                    [sys.executable, "-c", "import anthropic"], root, env
                ),
            },
            11 if args.quick else args.rounds,
            warmup=2,
        )
    ratio = got["index"] / got["click"]
    common.row("gitmem index (small repo)", common.ms(got["index"]), "")
    common.row("gitmem import NOTES --dry-run (one 3-line note)", common.ms(got["import"]), "")
    common.row("gitmem chat: start to first prompt (pty)", common.ms(got["chat"]), "<= 1 s")
    common.row("python -c 'import click'", common.ms(got["click"]), "")
    common.row("python -c 'import anthropic' (reference)", common.ms(got["anthropic"]), "")
    common.row("gitmem index / import click", f"{ratio:.2f}x", "<= 3x", ratio <= 3)
    common.row("chat's prompt within 1 s", common.ms(got["chat"]), "<= 1 s", got["chat"] <= 1)
    common.row("gitmem mcp: start to initialize answered", common.ms(got["mcp"]), "")
    common.row("python -c 'import mcp.server.lowlevel'", common.ms(got["lowlevel"]), "")
    mcp = got["mcp"] / got["lowlevel"]
    common.row("mcp initialize / import mcp.server.lowlevel", f"{mcp:.2f}x", "<= 1.6x", mcp <= 1.6)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
