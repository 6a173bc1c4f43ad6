"""`gitmem chat` as a real process: lines on stdin, replies on stdout, and a kill -9 mid-session."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem.fakeapi import FakeAnthropicServer, RuleModel

from helpers import git

GITMEM = str(Path(sys.executable).with_name("gitmem"))


@pytest.fixture
def api() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(RuleModel()) as server:
        yield server


def env_for(api: FakeAnthropicServer) -> dict[str, str]:
    return {**os.environ, "ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": api.base_url}


def read_line(proc: subprocess.Popen[bytes], timeout: float = 30.0) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    buf = b""
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        assert left > 0, f"no reply within {timeout}s (got {buf!r})"
        ready, _, _ = select.select([proc.stdout], [], [], left)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 1)
            assert chunk, "gitmem chat exited early"
            buf += chunk
    return buf.decode()


def test_chat_reads_one_turn_per_line_and_lands_the_session(client: Path, api: FakeAnthropicServer) -> None:
    proc = subprocess.run(
        [GITMEM, "-C", str(client), "chat"],
        input=b"remember acme Budget: 40k agreed on the call\nrecall acme budget\nhello\n",
        capture_output=True, env=env_for(api), timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().splitlines() == [
        "Saved.", "## Budget", 'Noted: "hello" (I saw 3 system blocks and 3 tools.)'
    ]
    assert "landed on main" in proc.stderr.decode()
    assert "40k agreed" in (client / "cards/acme.md").read_text()
    assert git(client, "status", "--porcelain") == ""


def test_kill_9_mid_session_loses_no_committed_edit(client: Path, api: FakeAnthropicServer) -> None:
    proc = subprocess.Popen([GITMEM, "-C", str(client), "chat", "--session", "s1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env_for(api))
    assert proc.stdin is not None
    proc.stdin.write(b"remember acme Budget: 40k agreed\n")
    proc.stdin.flush()
    assert read_line(proc) == "Saved.\n"
    proc.stdin.write(b"remember acme Risks: the launch may slip\n")
    proc.stdin.flush()
    assert read_line(proc) == "Saved.\n"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream:
            stream.close()
    card = git(client, "show", "gitmem/session/s1:cards/acme.md")
    assert "40k agreed" in card and "launch may slip" in card
    assert subprocess.run(["git", "fsck", "--strict"], cwd=client, capture_output=True).returncode == 0
    live = (client / ".git/gitmem/sessions/s1.jsonl").read_text().splitlines()
    assert sum(1 for line in live if json.loads(line).get("role") == "user") >= 2
    resumed = subprocess.run([GITMEM, "-C", str(client), "chat", "--resume", "s1"],
                             input=b"recall acme risks\n", capture_output=True, env=env_for(api),
                             timeout=120, check=False)
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert resumed.stdout.decode() == "## Risks\n"
    main_card = git(client, "show", "main:cards/acme.md")
    assert "40k agreed" in main_card and "launch may slip" in main_card
    transcript = git(client, "show", "main:sessions/s1.jsonl")
    texts = [json.loads(line)["text"] for line in transcript.splitlines()]
    assert texts[0] == "remember acme Budget: 40k agreed" and "recall acme risks" in texts


def test_resume_of_an_unknown_session_is_a_one_line_error(client: Path, api: FakeAnthropicServer) -> None:
    proc = subprocess.run([GITMEM, "-C", str(client), "chat", "--resume", "nope"], input=b"",
                          capture_output=True, env=env_for(api), timeout=60, check=False)
    assert proc.returncode == 3
    assert proc.stderr.decode().splitlines() == ["gitmem: error: no session 'nope' to resume"]


def test_an_oversized_search_neither_kills_chat_nor_drops_its_input(
    client: Path, api: FakeAnthropicServer
) -> None:
    toml = client / "gitmem.toml"
    toml.write_text(toml.read_text().replace("max_tokens = 2048", "max_tokens = 64000"))
    git(client, "commit", "-qam", "room for a long tool call")
    lines = ["search " + "q" * 131072, "remember acme Budget: 40k agreed", "hello"]
    proc = subprocess.run([GITMEM, "-C", str(client), "chat"], input="\n".join(lines).encode() + b"\n",
                          capture_output=True, env=env_for(api), timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    said = proc.stdout.decode().splitlines()
    assert said[0].startswith("That failed: Error: query is 131072 bytes, over the limit of 2048")
    assert said[1:] == ["Saved.", 'Noted: "hello" (I saw 3 system blocks and 3 tools.)']
    assert "Traceback" not in proc.stderr.decode()
    assert "40k agreed" in git(client, "show", "main:cards/acme.md")
