"""SIGTERM to `gitmem mcp --http` with 20 writes in flight: the server stops taking calls,
answers every call it took, then exits; each caller gets its own answer (issue 35, case
8). The official MCP client over HTTP on 127.0.0.1; a ``reference-transaction`` hook
holds the first write until every call has reached the server and the signal is sent."""

from __future__ import annotations

import signal
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import mcp_types as types
import pytest
from mcp.client import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from test_mcp_http import http_server, text_of

from helpers import git

CALLS = 20
HOOK = """#!/bin/sh
[ "$1" = prepared ] || exit 0
[ -e {mark} ] && exit 0
touch {mark}
i=0
while [ ! -e {go} ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done
"""


def write(project: str, n: int) -> dict[str, Any]:
    return {
        "project": project,
        "old_text": "",
        "new_text": f"## Note\nnote {n}\n",
        "index_entry": {"section_id": "note", "keywords": ["note"], "summary": f"note {n}"},
    }


def one_round(
    client: Path, tmp: Path, projects: list[str]
) -> tuple[list[types.CallToolResult | str], str]:
    mark, go = tmp / "held", tmp / "go"
    hook = client / ".git" / "hooks" / "reference-transaction"
    hook.write_text(HOOK.format(mark=mark, go=go))
    hook.chmod(0o755)
    answers: list[types.CallToolResult | str] = ["no answer"] * CALLS
    with http_server(client) as server:

        async def main() -> str:
            http = create_mcp_http_client(headers={"Authorization": f"Bearer {server.token}"})
            started: list[int] = []

            async def seen(response: httpx2.Response) -> None:  # the call reached the server
                if b'"tools/call"' in response.request.content:
                    started.append(response.status_code)

            http.event_hooks["response"] = [seen]
            try:
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
                            answers[n] = await session.call_tool(
                                "write_memory_card", write(projects[n], n)
                            )
                        except Exception as err:  # what the caller is told instead of its answer
                            answers[n] = f"{type(err).__name__}: {err}"

                    async with anyio.create_task_group() as calls:
                        for n in range(CALLS):
                            calls.start_soon(call, n)
                        with anyio.fail_after(60):
                            while len(started) < CALLS or not mark.exists():
                                await anyio.sleep(0.05)
                        server.proc.send_signal(signal.SIGTERM)
                        await anyio.sleep(0.3)  # the signal is handled while the write is held
                        go.touch()
            except BaseExceptionGroup as group:  # the client's transport failed under it
                answers[:] = [a if a != "no answer" else f"transport: {group!r}" for a in answers]
            _, said = await anyio.to_thread.run_sync(partial(server.proc.communicate, timeout=120))
            assert server.proc.returncode == 0, said
            return said.decode()

        err = anyio.run(main)
    for path in (hook, mark, go):
        path.unlink(missing_ok=True)
    return answers, err


@pytest.mark.slow
def test_sigterm_with_twenty_writes_in_flight_answers_every_caller(
    client: Path, tmp_path: Path
) -> None:
    for round_ in range(3):
        projects = [f"r{round_}p{n:02d}" for n in range(CALLS)]
        answers, err = one_round(client, tmp_path, projects)
        told = [a if isinstance(a, str) else text_of(a) for a in answers]
        wrong = [t for p, t in zip(projects, told, strict=True) if not t.startswith(f"Created {p}")]
        assert wrong == [], (round_, wrong)
        assert f"ended: {CALLS} memory edits landed on main" in err, err
        cards = git(client, "ls-tree", "--name-only", "main", "cards/").split()
        assert {f"cards/{p}.md" for p in projects} <= set(cards)
