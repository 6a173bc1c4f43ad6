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


def test_chat_reads_one_turn_per_line_and_lands_the_session(
    client: Path, api: FakeAnthropicServer
) -> None:
    proc = subprocess.run(
        [GITMEM, "-C", str(client), "chat"],
        input=b"remember acme Budget: 40k agreed on the call\nrecall acme budget\nhello\n",
        capture_output=True,
        env=env_for(api),
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().splitlines() == [
        "Saved.",
        "## Budget",
        "40k agreed on the call",
        'Noted: "hello" (I saw 3 system blocks and 3 tools.)',
    ]
    assert "landed on main" in proc.stderr.decode()
    assert "40k agreed" in (client / "cards/acme.md").read_text()
    assert git(client, "status", "--porcelain") == ""


@pytest.mark.slow
def test_kill_9_mid_session_loses_no_committed_edit(client: Path, api: FakeAnthropicServer) -> None:
    proc = subprocess.Popen(
        [GITMEM, "-C", str(client), "chat", "--session", "s1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env_for(api),
    )
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
    assert (
        subprocess.run(["git", "fsck", "--strict"], cwd=client, capture_output=True).returncode == 0
    )
    live = (client / ".git/gitmem/sessions/s1.jsonl").read_text().splitlines()
    assert sum(1 for line in live if json.loads(line).get("role") == "user") >= 2
    resumed = subprocess.run(
        [GITMEM, "-C", str(client), "chat", "--resume", "s1"],
        input=b"recall acme risks\n",
        capture_output=True,
        env=env_for(api),
        timeout=120,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert resumed.stdout.decode() == "## Risks\nthe launch may slip\n"
    main_card = git(client, "show", "main:cards/acme.md")
    assert "40k agreed" in main_card and "launch may slip" in main_card
    transcript = git(client, "show", "main:sessions/s1.jsonl")
    texts = [json.loads(line)["text"] for line in transcript.splitlines()]
    assert texts[0] == "remember acme Budget: 40k agreed" and "recall acme risks" in texts


def test_resume_of_an_unknown_session_is_a_one_line_error(
    client: Path, api: FakeAnthropicServer
) -> None:
    proc = subprocess.run(
        [GITMEM, "-C", str(client), "chat", "--resume", "nope"],
        input=b"",
        capture_output=True,
        env=env_for(api),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 3
    assert proc.stderr.decode().splitlines() == [
        "gitmem: error: no session 'nope' to resume; `gitmem review --all` lists the sessions"
    ]


def test_an_oversized_search_neither_kills_chat_nor_drops_its_input(
    client: Path, api: FakeAnthropicServer
) -> None:
    toml = client / "gitmem.toml"
    toml.write_text(toml.read_text().replace("max_tokens = 2048", "max_tokens = 64000"))
    git(client, "commit", "-qam", "room for a long tool call")
    lines = ["search " + "q" * 131072, "remember acme Budget: 40k agreed", "hello"]
    proc = subprocess.run(
        [GITMEM, "-C", str(client), "chat"],
        input="\n".join(lines).encode() + b"\n",
        capture_output=True,
        env=env_for(api),
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    said = proc.stdout.decode().splitlines()
    assert said[0].startswith("That failed: Error: query is 131072 characters; at most 1000")
    assert said[1:] == ["Saved.", 'Noted: "hello" (I saw 3 system blocks and 3 tools.)']
    assert "Traceback" not in proc.stderr.decode()
    assert "40k agreed" in git(client, "show", "main:cards/acme.md")


def crash_after_the_call(client: Path, api: FakeAnthropicServer, session: str) -> str:
    """A session killed while its tool ran: the call is in the transcript, its result is not.

    Runs a real session, kills it, and cuts the live transcript right after the assistant's
    tool_use record (how kill -9 during the tool call leaves it). Returns the call's id.
    """
    proc = subprocess.Popen(
        [GITMEM, "-C", str(client), "chat", "--session", session],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env_for(api),
    )
    assert proc.stdin is not None
    proc.stdin.write(b"remember acme Budget: 40k agreed\n")
    proc.stdin.flush()
    assert read_line(proc) == "Saved.\n"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream:
            stream.close()
    live = client / f".git/gitmem/sessions/{session}.jsonl"
    lines = live.read_text().splitlines(keepends=True)
    cut = next(
        i
        for i, line in enumerate(lines)
        if '"tool_use"' in line and json.loads(line)["role"] == "assistant"
    )
    live.write_text("".join(lines[: cut + 1]))
    (use,) = [b for b in json.loads(lines[cut])["content"] if b["type"] == "tool_use"]
    return str(use["id"])


def assert_every_request_valid(api: FakeAnthropicServer) -> list[dict[str, object]]:
    from gitmem.fakeapi.validate import validate_messages_request

    sent = [r for r in api.requests if r.path.endswith("/v1/messages")]
    assert sent and [r.status for r in sent] == [200] * len(sent), [r.response for r in sent]
    for r in sent:
        validate_messages_request(r.body)
    return [r.body for r in sent]


@pytest.mark.slow
def test_resume_answers_a_call_a_crash_left_unanswered(
    client: Path, api: FakeAnthropicServer
) -> None:
    tool_id = crash_after_the_call(client, api, "s1")
    before = len(assert_every_request_valid(api))
    resumed = subprocess.run(
        [GITMEM, "-C", str(client), "chat", "--resume", "s1"],
        input=b"recall acme budget\nhello\n",
        capture_output=True,
        env=env_for(api),
        timeout=120,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert "warning" not in resumed.stderr.decode(), resumed.stderr.decode()
    said = resumed.stdout.decode().splitlines()
    assert said[0].startswith("That failed: interrupted: the session stopped before")
    assert said[1:] == [
        "## Budget",
        "40k agreed",
        'Noted: "hello" (I saw 3 system blocks and 3 tools.)',
    ]
    bodies = assert_every_request_valid(api)
    first = bodies[before:][0]["messages"]
    assert isinstance(first, list)
    (answer,) = [b for b in first[-1]["content"] if b["type"] == "tool_result"]
    assert answer["tool_use_id"] == tool_id and answer["is_error"] is True
    transcript = [
        json.loads(line) for line in git(client, "show", "main:sessions/s1.jsonl").splitlines()
    ]
    results = [
        b
        for r in transcript
        for b in r["content"]
        if b["type"] == "tool_result" and b["tool_use_id"] == tool_id
    ]
    assert [b["is_error"] for b in results] == [True]  # recorded once, as interrupted
    assert "40k agreed" in git(client, "show", "main:cards/acme.md")


@pytest.mark.slow
def test_ask_resumes_a_transcript_an_earlier_resume_left_invalid(
    client: Path, api: FakeAnthropicServer
) -> None:
    # Before the repair, a resume appended the next user turn after the unanswered call:
    # every later request carried it and the API refused them all.
    tool_id = crash_after_the_call(client, api, "s2")
    live = client / ".git/gitmem/sessions/s2.jsonl"
    turn = {
        "type": "message",
        "at": "2025-11-30T10:20:00Z",
        "role": "user",
        "turn": 2,
        "content": [{"type": "text", "text": "are you there?"}],
        "text": "are you there?",
    }
    with open(live, "a") as fh:
        fh.write(json.dumps(turn) + "\n")
    before = len(assert_every_request_valid(api))
    asked = subprocess.run(
        [GITMEM, "-C", str(client), "ask", "--resume", "s2", "recall acme budget"],
        capture_output=True,
        env=env_for(api),
        timeout=120,
        check=False,
    )
    assert asked.returncode == 0, asked.stderr.decode()
    said = asked.stdout.decode().splitlines()
    assert said[0].startswith("That failed: interrupted:") and said[1:] == [
        "## Budget",
        "40k agreed",
    ]
    bodies = assert_every_request_valid(api)[before:]
    messages = bodies[0]["messages"]
    assert isinstance(messages, list)
    results = [b for m in messages for b in m["content"] if b["type"] == "tool_result"]
    assert [(b["tool_use_id"], b["is_error"]) for b in results] == [(tool_id, True)]
