"""`gitmem mcp --http` refuses what would expose it: every spelling of "all interfaces",
a non-loopback address without a chosen token, a short token, two Authorization headers,
and it slows down guessing. Real server processes on 127.0.0.1, raw HTTP requests."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
from test_mcp_http import TOKEN, http_server, talk
from test_mcp_server import SERVER, _hello, session_branches

HEADERS = [("Accept", "application/json, text/event-stream")]
ALL_INTERFACES = [
    "0:0",
    "0x0:0",
    "0.0:0",
    "00.0.0.0:0",
    "0.0.0.0:0",
    "[::ffff:0.0.0.0]:0",
    "[::]:0",
    ":::0",
    "[0:0:0:0:0:0:0:0]:0",
]


def refused(client: Path, addresses: list[str], token: str | None) -> list[tuple[int, str]]:
    """Each address given to `gitmem mcp --http`, run at once: exit code and stderr lines.
    A server that starts instead is killed after 60 s and counts as exit -1."""
    env = {**os.environ, **({"GITMEM_MCP_TOKEN": token} if token else {})}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SERVER, "-C", str(client), "mcp", "--http", address],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
        )
        for address in addresses
    ]
    seen = []
    for proc in procs:
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            seen.append((-1, err.decode()))
            continue
        seen.append((proc.returncode, err.decode()))
    return seen


def test_every_spelling_of_all_interfaces_is_refused(client: Path) -> None:
    for address, (code, err) in zip(
        ALL_INTERFACES, refused(client, ALL_INTERFACES, TOKEN), strict=True
    ):
        lines = err.splitlines()
        assert code == 2 and len(lines) == 1, (address, lines)
        assert "every interface" in lines[0] and address in lines[0], (address, lines)
    assert session_branches(client) == []


def test_an_address_not_loopback_needs_a_token_the_user_set(client: Path) -> None:
    ((code, err),) = refused(client, ["10.9.8.7:0"], None)
    lines = err.splitlines()
    assert code == 2 and len(lines) == 1, lines
    assert "not loopback" in lines[0] and "GITMEM_MCP_TOKEN" in lines[0], lines


def test_a_short_token_is_refused_before_listening(client: Path) -> None:
    ((code, err),) = refused(client, ["127.0.0.1:0"], "a")
    lines = err.splitlines()
    assert code == 2 and len(lines) == 1, lines
    assert "GITMEM_MCP_TOKEN is 1 characters" in lines[0] and "32" in lines[0], lines
    assert session_branches(client) == []


def test_a_loopback_number_binds_loopback_and_other_host_names_are_refused(
    client: Path,
) -> None:
    """2130706433 is 127.0.0.1 as the socket binds it; a Host of 0:PORT (every interface
    as a client spells it) or the bare number is not this server's name."""
    with http_server(client, address="2130706433:0") as server:
        port = server.url.split(":")[2].split("/")[0]
        auth = [("Authorization", f"Bearer {TOKEN}")]

        def status(host: str) -> int:
            headers = [*HEADERS, *auth, ("Host", host)]
            return httpx2.post(server.url, json=_hello(), headers=headers, timeout=60).status_code

        assert [status(f"0:{port}"), status(f"2130706433:{port}"), status(f"0.0.0.0:{port}")] == [
            421,
            421,
            421,
        ]
        assert status(f"127.0.0.1:{port}") == 200
        server.stop()


def test_two_authorization_headers_are_refused_whichever_is_right(client: Path) -> None:
    with http_server(client) as server:
        right, wrong = ("Authorization", f"Bearer {TOKEN}"), ("Authorization", "Bearer wrong")

        def answer(auth: list[tuple[str, str]]) -> tuple[int, str]:
            reply = httpx2.post(server.url, json=_hello(), headers=[*HEADERS, *auth], timeout=60)
            return reply.status_code, reply.text

        assert answer([wrong, right]) == (
            400,
            "refused: a request with two Authorization headers\n",
        )
        assert answer([right, wrong])[0] == 400
        assert answer([right, right])[0] == 400
        assert answer([right])[0] == 200
        server.stop()


def test_failed_attempts_are_slowed_and_the_right_token_still_served(client: Path) -> None:
    """Six wrong guesses sent at once wait their turn, each longer than the last: together
    over two seconds (the waits are 0.05, 0.1 ... 1 s). The right token then connects."""
    with http_server(client) as server:

        def guess(n: int) -> int:
            auth = ("Authorization", f"Bearer guess-{n}")
            reply = httpx2.post(server.url, json=_hello(), headers=[*HEADERS, auth], timeout=60)
            return reply.status_code

        began = time.monotonic()
        with ThreadPoolExecutor(6) as pool:
            codes = list(pool.map(guess, range(6)))
        took = time.monotonic() - began
        assert codes == [401] * 6
        assert took >= 2.0, took
        seen = talk(server.url, TOKEN, [])
        server.stop()
    assert seen["tools"] == ["read_memory_card", "write_memory_card", "search_history"]
