"""`gitmem redact` while a session is running (an MCP connection open) is refused before
anything is rewritten, naming the session; a session whose process was killed (its lock
file left, no process holding it) does not block it."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
from mcp.client import ClientSession
from test_mcp_server import SERVER, WRITE, connect
from test_mcp_stop import hold_the_end

from gitmem import GitMemoryTool, MemoryRepo

from helpers import git, snapshot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import secrets_corpus as corpus

AWS = corpus.aws_access_key(random.Random(23))


def gitmem(client: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SERVER, "-C", str(client), *args],
        capture_output=True,
        text=True,
        check=False,
    )


def person_commits_a_secret(client: Path) -> None:
    (client / "cards/notes.md").write_text(f"# notes\n\n## Keys\nstaging key {AWS}\n")
    git(client, "add", "cards/notes.md")
    git(client, "commit", "-qm", "my notes", "--no-verify")


def state(client: Path) -> dict[str, str]:
    """Everything but the object store: a refused redact may leave unreferenced objects."""
    return {k: v for k, v in snapshot(client).items() if not k.startswith(".git/objects/")}


def live_sessions(client: Path) -> list[str]:
    return sorted(p.stem for p in (client / ".git/gitmem/live").glob("*.lock"))


def test_redact_is_refused_while_an_mcp_session_runs(client: Path, tmp_path: Path) -> None:
    person_commits_a_secret(client)
    seen: dict[str, Any] = {}

    async def scenario(session: ClientSession) -> None:
        assert not (await session.call_tool("write_memory_card", WRITE)).is_error
        (sid,) = live_sessions(client)
        before = state(client)
        seen.update(sid=sid, refused=gitmem(client, "redact"))
        assert state(client) == before  # nothing rewritten, nothing recorded
        assert not (await session.call_tool("read_memory_card", {"project": "acme"})).is_error

    async def main() -> None:
        async with connect(client, tmp_path / "mcp.err") as session:
            await scenario(session)

    anyio.run(main)
    refused, sid = seen["refused"], seen["sid"]
    assert refused.returncode == 4, refused.stderr
    assert refused.stdout == ""
    (line,) = refused.stderr.strip().splitlines()
    assert f"session {sid} (process " in line and "still running" in line, line
    assert "end it first" in line and "nothing was rewritten" in line, line
    assert AWS in git(client, "log", "-p", "main")

    done = gitmem(client, "redact")  # the connection closed: the session ended
    assert done.returncode == 0, done.stderr
    assert AWS not in git(client, "log", "-p", "--all")
    assert gitmem(client, "scan", "--history").returncode == 0


def started_server(client: Path) -> subprocess.Popen[bytes]:
    """`gitmem mcp` as a client starts it, once its session has started (initialize answered)."""
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, "-C", str(client), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ),
    )
    assert server.stdin is not None and server.stdout is not None
    info = {"name": "test", "version": "0"}
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": info}
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    server.stdin.write(json.dumps(hello).encode() + b"\n")
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["id"] == 1
    return server


def killed(server: subprocess.Popen[bytes]) -> None:
    os.kill(server.pid, signal.SIGKILL)
    assert server.wait() == -signal.SIGKILL
    assert server.stdin is not None and server.stdout is not None
    server.stdin.close()
    server.stdout.close()


def test_a_killed_session_does_not_block_redact(client: Path) -> None:
    person_commits_a_secret(client)
    crashed = started_server(client)
    (dead,) = live_sessions(client)
    killed(crashed)
    running = started_server(client)
    (sid,) = set(live_sessions(client)) - {dead}
    assert live_sessions(client) == sorted([dead, sid])  # the killed one's lock file is left

    before = state(client)
    refused = gitmem(client, "redact")
    assert refused.returncode == 4, refused.stderr
    assert f"session {sid} (process {running.pid}) is still running" in refused.stderr
    assert dead not in refused.stderr  # held by no process: not running
    assert state(client) == before

    killed(running)
    done = gitmem(client, "redact", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["record"]
    assert AWS not in git(client, "log", "-p", "--all")


def test_a_session_started_while_redact_runs_begins_from_the_rewritten_history(
    client: Path, tmp_path: Path
) -> None:
    """A program with the repo open already (no open to wait in) starts the memory tool's
    session while a redact moves main: it waits, and begins from the history without
    the secret."""
    person_commits_a_secret(client)
    mark, go = hold_the_end(client, tmp_path)  # redact stops at its first ref move
    made: list[GitMemoryTool] = []
    with MemoryRepo(client) as repo:
        redact = subprocess.Popen(
            [sys.executable, "-c", SERVER, "-C", str(client), "redact"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            for _ in range(400):
                if mark.exists() or redact.poll() is not None:
                    break
                time.sleep(0.05)
            assert mark.exists(), redact.communicate()
            starting = threading.Thread(target=lambda: made.append(GitMemoryTool(repo)))
            starting.start()  # past redact's check for running sessions
            starting.join(timeout=2)  # a gitmem without the wait made its branch here
            go.touch()
            _out, err = redact.communicate(timeout=60)
            starting.join(timeout=60)
        finally:
            go.touch()
            if redact.poll() is None:
                redact.kill()
        assert redact.returncode == 0, err
        (tool,) = made
        try:
            branch = tool.branch
            main = git(client, "rev-parse", "main").strip()
            assert git(client, "merge-base", branch, "main").strip() == main
            assert AWS not in git(client, "log", "-p", "--all")
        finally:
            tool.finish()
