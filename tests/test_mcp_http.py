"""`gitmem mcp --http`: the official MCP client over Streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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
from test_mcp_server import CARD, SERVER, WRITE, _hello, session_branches

from helpers import git

TOKEN = "test-token-0123456789-abcdefghijklmnop"


@dataclass
class Running:
    proc: subprocess.Popen[bytes]
    url: str
    token: str
    first_lines: list[str]

    def stop(self) -> str:
        """SIGTERM, as a service manager stops it; the rest of its stderr."""
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.stderr is not None
        err = self.proc.stderr.read().decode()
        assert self.proc.wait(timeout=30) == 0, err
        return err


@contextmanager
def http_server(
    client: Path, token: str | None = TOKEN, address: str = "127.0.0.1:0"
) -> Iterator[Running]:
    env = dict(os.environ)
    if token is not None:
        env["GITMEM_MCP_TOKEN"] = token
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, "-C", str(client), "mcp", "--http", address],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        assert proc.stderr is not None
        lines: list[str] = []
        while not lines or "serving" not in lines[-1]:
            line = proc.stderr.readline().decode()
            assert line, f"the server exited: {lines}"
            lines.append(line)
        (url,) = re.findall(r"http://127\.0\.0\.1:\d+/mcp", lines[-1])
        given = re.findall(r"this server's token: (\S+)", "".join(lines))
        yield Running(proc, url, token or given[0], lines)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def talk(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """One official-client connection with the bearer token: the tools it lists and
    each call's result."""
    seen: dict[str, Any] = {}

    async def main() -> None:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with (
            http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            seen["tools"] = [t.name for t in (await session.list_tools()).tools]
            seen["results"] = [await session.call_tool(name, args) for name, args in calls]

    anyio.run(main)
    return seen


def text_of(result: types.CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


def test_the_official_client_lists_writes_and_reads_over_http(client: Path) -> None:
    with http_server(client) as server:
        seen = talk(
            server.url,
            server.token,
            [
                ("write_memory_card", WRITE),
                ("read_memory_card", {"project": "acme", "section_id": "budget"}),
            ],
        )
        again = talk(server.url, server.token, [("read_memory_card", {"project": "acme"})])
        err = server.stop()
    assert seen["tools"] == ["read_memory_card", "write_memory_card", "search_history"]
    wrote, read = seen["results"]
    assert text_of(wrote).startswith("Created acme § budget")
    assert (read.is_error, text_of(read)) == (False, CARD)
    assert text_of(again["results"][0]).endswith(CARD)  # a second client sees the session
    assert "1 memory edit landed on main" in err
    assert git(client, "show", "main:cards/acme.md").endswith(CARD)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_with_a_client_connected_lands_its_edit_and_ends_cleanly(
    client: Path, caplog: pytest.LogCaptureFixture, stop: signal.Signals
) -> None:
    """The client keeps its connection and its GET stream open while the signal comes."""
    caplog.set_level(logging.DEBUG, logger="mcp.client.streamable_http")
    with http_server(client) as server:

        async def main() -> tuple[int, bytes]:
            http = create_mcp_http_client(headers={"Authorization": f"Bearer {server.token}"})
            async with (
                http,
                streamable_http_client(server.url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                assert not (await session.call_tool("write_memory_card", WRITE)).is_error
                with anyio.fail_after(20):
                    while "GET SSE connection established" not in caplog.messages:
                        await anyio.sleep(0.05)
                server.proc.send_signal(stop)
                _, err = await anyio.to_thread.run_sync(
                    partial(server.proc.communicate, timeout=20)
                )
                return server.proc.returncode, err

        code, err = anyio.run(main)
    lines = err.decode().splitlines()
    assert code == 0, lines
    assert len(lines) == 1 and lines[0].endswith("ended: 1 memory edit landed on main"), lines
    assert git(client, "show", "main:cards/acme.md").endswith(CARD)
    assert session_branches(client) == []


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_as_soon_as_it_says_serving_ends_it_cleanly(
    client: Path, stop: signal.Signals
) -> None:
    with http_server(client) as server:
        server.proc.send_signal(stop)
        _, err = server.proc.communicate(timeout=20)
    lines = err.decode().splitlines()
    assert server.proc.returncode == 0, lines
    assert len(lines) == 1 and lines[0].endswith("ended: no memory edits"), lines
    assert session_branches(client) == []


def test_no_token_or_a_foreign_origin_or_host_is_refused(client: Path) -> None:
    body = _hello()
    headers = {"Accept": "application/json, text/event-stream"}
    with http_server(client) as server:
        main = git(client, "rev-parse", "main")

        def status(extra: dict[str, str]) -> int:
            reply = httpx2.post(server.url, json=body, headers={**headers, **extra}, timeout=60)
            return reply.status_code

        right = {"Authorization": f"Bearer {TOKEN}"}
        assert status({}) == 401
        assert status({"Authorization": "Bearer wrong"}) == 401
        assert status({"Authorization": TOKEN}) == 401
        assert status({"Authorization": f"Bearer {TOKEN}x"}) == 401
        assert status({"Authorization": f"bearer {TOKEN}"}) == 200  # the scheme's case is free
        assert status({**right, "Origin": "http://evil.example"}) == 403
        assert status({**right, "Host": "evil.example"}) == 421
        assert status({**right, "Origin": server.url.removesuffix("/mcp")}) == 200
        err = server.stop()
    assert "ended: no memory edits" in err
    assert git(client, "rev-parse", "main") == main


def test_a_token_of_spaces_is_refused_before_listening(client: Path) -> None:
    env = {**os.environ, "GITMEM_MCP_TOKEN": " "}
    args = [sys.executable, "-c", SERVER, "-C", str(client), "mcp", "--http", "127.0.0.1:0"]
    done = subprocess.run(args, env=env, capture_output=True, timeout=120)
    err = done.stderr.decode()
    assert done.returncode == 2 and "GITMEM_MCP_TOKEN" in err and len(err.splitlines()) == 1, err


def test_without_the_variable_a_token_is_made_and_printed(client: Path) -> None:
    with http_server(client, token=None) as server:
        (line,) = [line for line in server.first_lines if "token" in line]
        assert "(GITMEM_MCP_TOKEN is not set)" in line and len(server.token) >= 32
        seen = talk(server.url, server.token, [])
        server.stop()
    assert seen["tools"] == ["read_memory_card", "write_memory_card", "search_history"]


def test_a_bad_or_busy_address_is_one_line(client: Path) -> None:
    import socket

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    for address, code, message in [
        ("0.0.0.0:8000", 2, "every interface; bind one address"),
        ("nonsense", 2, "--http takes [HOST:]PORT"),
        ("127.0.0.1:99999", 2, "--http takes [HOST:]PORT"),
        (f"127.0.0.1:{port}", 6, f"cannot listen on 127.0.0.1:{port}: Address already in use"),
    ]:
        proc = subprocess.run(
            [sys.executable, "-c", SERVER, "-C", str(client), "mcp", "--http", address],
            capture_output=True,
            timeout=60,
            check=False,
        )
        lines = proc.stderr.decode().splitlines()
        assert proc.returncode == code and len(lines) == 1 and message in lines[0], lines
    busy.close()
    assert session_branches(client) == []  # refused before a session began


def test_malformed_bodies_get_the_errors_stdio_gives(client: Path) -> None:
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {TOKEN}",
    }
    with http_server(client) as server:
        opened = httpx2.post(server.url, json=_hello(), headers=headers, timeout=60)
        assert opened.status_code == 200
        session = {**headers, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        answers = [
            httpx2.post(server.url, content=body, headers=session, timeout=60)
            for body in [
                b"this is not json",
                b'{"jsonrpc": "2.0", "id": 1}',
                b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": "string"}',
            ]
        ]
        foreign = httpx2.post(
            server.url,
            content=b"{",
            headers={**session, "Origin": "http://evil.example"},
            timeout=60,
        )
        server.stop()
    assert [a.status_code for a in answers] == [400, 400, 400]
    errors = [(a.json()["id"], a.json()["error"]["code"]) for a in answers]
    assert errors == [(None, -32700), (1, -32600), (2, -32602)]
    assert foreign.status_code == 403  # the Origin is refused before the body is read


def test_claude_code_connects_with_the_line_the_docs_show(client: Path) -> None:
    import shlex
    import shutil

    claude = shutil.which("claude")
    if claude is None:
        pytest.skip("Claude Code is not installed (npm install @anthropic-ai/claude-code)")
    doc = (Path(__file__).resolve().parent.parent / "docs" / "mcp.md").read_text()
    (line,) = [x for x in doc.splitlines() if x.startswith("claude mcp add --transport http")]
    with http_server(client) as server:
        port = server.url.split(":")[2].split("/")[0]
        argv = shlex.split(line.replace("PORT", port).replace("TOKEN", server.token))
        added = subprocess.run(argv, cwd=client, capture_output=True, text=True, timeout=120)
        listed = subprocess.run(
            [claude, "mcp", "list"], cwd=client, capture_output=True, text=True, timeout=120
        )
        server.stop()
    assert added.returncode == 0, added.stderr
    (status,) = [x for x in listed.stdout.splitlines() if x.startswith("gitmem:")]
    assert status == f"gitmem: {server.url} (HTTP) - ✔ Connected", listed.stdout
