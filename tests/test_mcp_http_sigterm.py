"""SIGTERM to `gitmem mcp --http` with 20 writes sent: the server stops taking calls,
answers every call it took, then exits; each caller gets its own true answer (issue 35,
case 8): its write made and landed, or the 503 that says it was not made, never an error
for a write that was made. The official MCP client over HTTP on 127.0.0.1; a
``reference-transaction`` hook holds the first write until the signal is sent (the
server runs one tool call at a time, so the calls sent behind it wait unread)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest
from mcp.client import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from test_mcp_http import http_server, text_of

from helpers import git

CALLS = 20
# Holds the first write: a session branch moved from a commit (its start creates it).
HOOK = """#!/bin/sh
[ "$1" = prepared ] || exit 0
grep -q '^[0-9a-f]*[1-9a-f][0-9a-f]* [0-9a-f]* refs/heads/gitmem/session/' || exit 0
[ -e {mark} ] && exit 0
touch {mark}
i=0
while [ ! -e {go} ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done
"""


def note_arguments(project: str, n: int) -> dict[str, Any]:
    """The `write_memory_card` arguments that add note n to `project`."""
    return {
        "project": project,
        "old_text": "",
        "new_text": f"## Note\nnote {n}\n",
        "index_entry": {"section_id": "note", "keywords": ["note"], "summary": f"note {n}"},
    }


STOPPING = "gitmem mcp is stopping: the call was not made"


def held_first_write(client: Path, tmp: Path) -> tuple[Path, Path]:
    """Install the hook; returns (the file it makes when it holds, the file that frees it)."""
    mark, go = tmp / "held", tmp / "go"
    hook = client / ".git" / "hooks" / "reference-transaction"
    hook.write_text(HOOK.format(mark=mark, go=go))
    hook.chmod(0o755)
    return mark, go


def one_round(client: Path, tmp: Path, projects: list[str]) -> tuple[list[str], str]:
    """Send a write per project, SIGTERM while the first is held; what each caller is
    told, and what the server said as it stopped."""
    mark, go = held_first_write(client, tmp)
    answers = ["no answer"] * len(projects)
    with http_server(client) as server:

        async def main() -> None:
            http = create_mcp_http_client(headers={"Authorization": f"Bearer {server.token}"})
            async with (
                http,
                streamable_http_client(server.url, http_client=http) as (read, write_),
                ClientSession(read, write_) as session,
            ):
                await session.initialize()
                # As every client does before it calls a tool; else the client lists
                # the tools on the first answer, and the stopped server cannot reply.
                await session.list_tools()

                async def call(n: int) -> None:
                    try:
                        got = await session.call_tool(
                            "write_memory_card", note_arguments(projects[n], n)
                        )
                        answers[n] = text_of(got)
                    except Exception as err:  # what the caller is told instead of its answer
                        answers[n] = f"{type(err).__name__}: {err}"

                async with anyio.create_task_group() as calls:
                    for n in range(len(projects)):
                        calls.start_soon(call, n)
                    with anyio.fail_after(60):
                        while not mark.exists():
                            await anyio.sleep(0.05)
                    await anyio.sleep(0.5)  # the other calls are sent meanwhile
                    server.proc.send_signal(signal.SIGTERM)
                    await anyio.sleep(0.3)  # the signal is handled while the write is held
                    go.touch()

        anyio.run(main)
        _, said = server.proc.communicate(timeout=120)
        assert server.proc.returncode == 0, said
    for path in (mark, go):
        path.unlink()
    return answers, said.decode()


@pytest.mark.slow
def test_sigterm_with_twenty_writes_sent_tells_each_caller_the_truth(
    client: Path, tmp_path: Path
) -> None:
    for round_ in range(3):
        projects = [f"r{round_}p{n:02d}" for n in range(CALLS)]
        answers, err = one_round(client, tmp_path, projects)
        made = {p for p, a in zip(projects, answers, strict=True) if a.startswith(f"Created {p}")}
        told = {p: a for p, a in zip(projects, answers, strict=True) if p not in made}
        assert all(a == f"MCPError: {STOPPING}" for a in told.values()), (round_, told)
        assert projects[0] in made  # the held write was in flight: it is answered
        assert f"ended: {len(made)} memory edit" in err, err
        cards = set(git(client, "ls-tree", "--name-only", "main", "cards/").split())
        assert {c for c in cards if c.startswith(f"cards/r{round_}")} == {
            f"cards/{p}.md" for p in made
        }


@pytest.mark.slow
def test_a_call_sent_after_sigterm_is_refused_with_503_and_not_made(
    client: Path, tmp_path: Path
) -> None:
    mark, go = held_first_write(client, tmp_path)
    late = {"jsonrpc": "2.0", "id": 99, "method": "tools/call"}
    late["params"] = {"name": "write_memory_card", "arguments": note_arguments("late", 99)}
    with http_server(client) as server:
        auth = {"Authorization": f"Bearer {server.token}"}
        headers = {**auth, "Accept": "application/json, text/event-stream"}
        got: dict[str, Any] = {}

        async def main() -> None:
            http = create_mcp_http_client(headers=auth)
            async with (
                http,
                streamable_http_client(server.url, http_client=http) as (read, write_),
                ClientSession(read, write_) as session,
                httpx2.AsyncClient(headers=headers, timeout=60) as other,
                anyio.create_task_group() as calls,
            ):
                await session.initialize()
                await session.list_tools()

                async def held() -> None:
                    got["held"] = text_of(
                        await session.call_tool("write_memory_card", note_arguments("held", 1))
                    )

                async def after() -> None:
                    got["late"] = await other.post(server.url, json=late)

                calls.start_soon(held)
                with anyio.fail_after(60):
                    while not mark.exists():
                        await anyio.sleep(0.05)
                server.proc.send_signal(signal.SIGTERM)
                await anyio.sleep(0.3)
                calls.start_soon(after)
                await anyio.sleep(0.3)  # sent: the server reads it once the held write ends
                go.touch()

        anyio.run(main)
        _, said = server.proc.communicate(timeout=120)
    assert got["held"].startswith("Created held"), got
    refused = got["late"]
    assert refused.status_code == 503 and refused.json()["error"]["message"] == STOPPING
    assert server.proc.returncode == 0, said
    cards = git(client, "ls-tree", "--name-only", "main", "cards/").split()
    assert "cards/held.md" in cards and "cards/late.md" not in cards
