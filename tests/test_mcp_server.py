"""`gitmem mcp` driven by the official MCP client over stdio, checked in git."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from gitmem.agent.tools import TOOLS
from gitmem.index import build as index
from gitmem.memory.cards import digests
from gitmem.memory.repo import MemoryRepo
from gitmem.ops.history import read_log

from helpers import git

SERVER = "from gitmem.cli import main; main()"
ENTRY = {"section_id": "budget", "keywords": ["budget", "q3"], "summary": "Q3 budget is 30k"}
CARD = "## Budget\n30k\n"
WRITE: dict[str, Any] = {"project": "acme", "old_text": "", "new_text": CARD, "index_entry": ENTRY}


@asynccontextmanager
async def connect(client: Path, errlog: Path) -> AsyncIterator[ClientSession]:
    """The server as an MCP client starts it: a subprocess (this interpreter, this env)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", SERVER, "-C", str(client), "mcp"],
        env=dict(os.environ),  # the hermetic test environment, not the user's
        cwd=str(client),
    )
    with open(errlog, "w") as err:
        async with (
            stdio_client(params, errlog=err) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def run(client: Path, tmp: Path, scenario: Callable[[ClientSession], Awaitable[None]]) -> str:
    """Run ``scenario`` over one connection; returns the server's stderr after it exited."""

    async def main() -> None:
        async with connect(client, tmp / "mcp.err") as session:
            await scenario(session)

    anyio.run(main)
    return (tmp / "mcp.err").read_text()


def session_branches(client: Path) -> list[str]:
    out = git(client, "for-each-ref", "--format=%(refname:short)", "refs/heads/gitmem/session/")
    return out.split()


def text_of(result: types.CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


def test_tools_have_the_chat_schemas_and_the_index_is_a_resource(
    client: Path, tmp_path: Path
) -> None:
    seen: dict[str, Any] = {}

    async def scenario(session: ClientSession) -> None:
        seen["tools"] = (await session.list_tools()).tools
        assert not (await session.call_tool("write_memory_card", WRITE)).is_error
        seen["resources"] = (await session.list_resources()).resources
        seen["index"] = await session.read_resource("gitmem://index")
        (branch,) = session_branches(client)
        with MemoryRepo(client) as repo:
            seen["expected"] = index.refresh(repo, branch).render()
        seen["instructions"] = session.instructions

    run(client, tmp_path, scenario)
    tools = {t.name: t for t in seen["tools"]}
    assert list(tools) == [t["name"] for t in TOOLS]
    for spec in TOOLS:
        assert tools[spec["name"]].input_schema == spec["input_schema"]
        assert tools[spec["name"]].description == spec["description"]
    (resource,) = seen["resources"]
    assert (str(resource.uri), resource.mime_type) == ("gitmem://index", "text/markdown")
    (contents,) = seen["index"].contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.mime_type == "text/markdown"
    assert contents.text == seen["expected"]
    assert "- budget: Q3 budget is 30k [budget, q3]" in contents.text
    assert "<memory-index>" in (seen["instructions"] or "")


def test_writes_commit_on_the_session_branch_and_land_when_the_client_leaves(
    client: Path, tmp_path: Path
) -> None:
    seen: dict[str, Any] = {}

    async def scenario(session: ClientSession) -> None:
        (branch,) = session_branches(client)
        seen["branch"] = branch
        created = await session.call_tool("write_memory_card", WRITE)
        assert not created.is_error and text_of(created).startswith("Created acme § budget")
        tip = git(client, "rev-parse", branch).strip()
        seen["tip"] = tip
        bad: list[tuple[str, dict[str, Any] | None, str]] = [
            ("write_memory_card", {**WRITE, "old_text": "40k"}, "old_text not found"),
            (
                "write_memory_card",
                {k: v for k, v in WRITE.items() if k != "index_entry"},
                "index_entry",
            ),
            (
                "write_memory_card",
                {**WRITE, "project": 5},
                "project is required and must be a string",
            ),
            ("write_memory_card", {**WRITE, "colour": "red"}, "unexpected field(s): colour"),
            (
                "write_memory_card",
                {**WRITE, "index_entry": {**ENTRY, "keywords": "q3"}},
                "keywords",
            ),
            ("write_memory_card", {**WRITE, "project": "../etc"}, "invalid project name"),
            ("write_memory_card", None, "index_entry must be an object"),
            (
                "read_memory_card",
                {"project": "acme", "section_id": 3},
                "section_id must be a string",
            ),
            ("search_history", {"query": "x", "limit": 0}, "limit must be an integer from 1 to 50"),
        ]
        for name, args, message in bad:
            result = await session.call_tool(name, args)
            assert result.is_error, (name, args)
            assert text_of(result).startswith("Error: ") and message in text_of(result), text_of(
                result
            )
            assert git(client, "rev-parse", branch).strip() == tip, (name, args)
        read = await session.call_tool(
            "read_memory_card", {"project": "acme", "section_id": "budget"}
        )
        assert (read.is_error, text_of(read)) == (False, CARD)
        found = await session.call_tool("search_history", {"query": "budget"})
        assert tip[:7] in text_of(found)

    err = run(client, tmp_path, scenario)
    assert session_branches(client) == []  # auto review policy: landed and archived
    (commit,) = read_log(MemoryRepo(client).git, "main", max_count=1)
    assert commit.sha == seen["tip"]  # fast-forward: the very commit the session made
    session = seen["branch"].rsplit("/", 1)[1]
    assert commit.trailers == {
        "Gitmem-Card": "acme",
        "Gitmem-Section": "budget",
        "Gitmem-Keywords": "budget, q3",
        "Gitmem-Summary": "Q3 budget is 30k",
        "Gitmem-Digest": digests(git(client, "show", "main:cards/acme.md"))["budget"],
        "Gitmem-Session": session,
        "Gitmem-Actor": "mcp",
    }
    assert git(client, "rev-parse", f"refs/gitmem/archive/{session}").strip() == seen["tip"]
    assert f"session {session} ended: 1 memory edit landed on main" in err


def test_review_policy_leaves_the_session_for_review(client: Path, tmp_path: Path) -> None:
    toml = client / "gitmem.toml"
    toml.write_text(toml.read_text().replace('review = "auto"', 'review = "review"'))
    main = git(client, "rev-parse", "main")

    async def scenario(session: ClientSession) -> None:
        assert not (await session.call_tool("write_memory_card", WRITE)).is_error

    err = run(client, tmp_path, scenario)
    (branch,) = session_branches(client)
    assert git(client, "rev-parse", "main") == main
    assert git(client, "log", "-1", "--format=%s", branch).strip() == "acme: Q3 budget is 30k"
    assert "ended: 1 memory edit waits for review: `gitmem review" in err


def test_a_read_only_connection_leaves_no_branch(client: Path, tmp_path: Path) -> None:
    main = git(client, "rev-parse", "main")

    async def scenario(session: ClientSession) -> None:
        result = await session.call_tool("read_memory_card", {"project": "nope"})
        assert result.is_error and "no card 'nope'" in text_of(result)

    run(client, tmp_path, scenario)
    assert session_branches(client) == []
    assert git(client, "rev-parse", "main") == main


def test_sigterm_ends_the_session_even_while_stdin_stays_open(client: Path) -> None:
    import json
    import signal
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, "-C", str(client), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        }
        proc.stdin.write(json.dumps(hello).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1  # serving: signals are handled
        (branch,) = session_branches(client)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)  # stdin is still open: only the signal can end it
        err = proc.communicate()[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    session = branch.rsplit("/", 1)[1]
    assert session_branches(client) == []
    assert git(client, "rev-parse", "-q", "--verify", f"refs/gitmem/archive/{session}").strip()
    assert f"session {session} ended" in err.decode()


def test_an_oversized_search_is_a_clear_tool_error(client: Path, tmp_path: Path) -> None:
    async def scenario(session: ClientSession) -> None:
        assert not (await session.call_tool("write_memory_card", WRITE)).is_error
        huge = await session.call_tool("search_history", {"query": "b" * 131072})
        assert huge.is_error
        assert text_of(huge) == (
            "Error: query is 131072 characters; at most 1000: search with a few words "
            "(client or project name and the topic)"
        )
        many = await session.call_tool("search_history", {"query": "budget " * 200})
        assert many.is_error and "query is 1400 characters; at most 1000" in text_of(many)
        found = await session.call_tool("search_history", {"query": "budget"})  # still serving
        assert not found.is_error and "acme § budget" in text_of(found)

    err = run(client, tmp_path, scenario)
    assert "Traceback" not in err


def _hello(id_: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }


def test_stdin_from_dev_null_or_a_file_ends_cleanly(client: Path, tmp_path: Path) -> None:
    import json
    import subprocess

    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"not json\n\x00\xff\xfe{]\n" + bytes(range(256)) + b'\n{"jsonrpc": 1}')
    valid = tmp_path / "valid.jsonl"
    valid.write_text(
        json.dumps(_hello())
        + "\n"
        + json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
        + "\n"
    )
    main = git(client, "rev-parse", "main")
    for source in (os.devnull, garbage, valid):
        with open(source, "rb") as stdin:
            proc = subprocess.run(
                [sys.executable, "-c", SERVER, "-C", str(client), "mcp"],
                stdin=stdin,
                capture_output=True,
                timeout=60,
                check=False,
            )
        err = proc.stderr.decode()
        assert proc.returncode == 0, (source, err)
        assert "Traceback" not in err and "unexpected error" not in err, (source, err)
        assert err.count("\n") == 1 and "ended: no memory edits" in err, (source, err)
        if source == valid:
            (answer,) = [json.loads(line) for line in proc.stdout.decode().splitlines()]
            assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "gitmem"
        assert session_branches(client) == []
    assert git(client, "rev-parse", "main") == main


def test_every_request_in_a_file_on_stdin_is_answered(client: Path, tmp_path: Path) -> None:
    import json
    import subprocess

    requests: list[dict[str, Any]] = [
        _hello(),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": "w",
            "method": "tools/call",
            "params": {"name": "write_memory_card", "arguments": WRITE},
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "search_history", "arguments": {"query": "budget"}},
        },
        {"jsonrpc": "2.0", "id": 5, "method": "no/such/method"},
    ]
    wire = tmp_path / "requests.jsonl"
    wire.write_text("".join(json.dumps(r) + "\n" for r in requests))
    with open(wire, "rb") as stdin:
        proc = subprocess.run(
            [sys.executable, "-c", SERVER, "-C", str(client), "mcp"],
            stdin=stdin,
            capture_output=True,
            timeout=60,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr.decode()
    answers = {a["id"]: a for a in map(json.loads, proc.stdout.decode().splitlines())}
    assert sorted(answers, key=str) == [1, 2, 4, 5, "w"]
    assert [t["name"] for t in answers[2]["result"]["tools"]] == [t["name"] for t in TOOLS]
    assert answers["w"]["result"]["content"][0]["text"].startswith("Created acme § budget")
    assert "current acme § budget" in answers[4]["result"]["content"][0]["text"]
    assert "error" in answers[5]
    assert "1 memory edit landed on main" in proc.stderr.decode()
    assert git(client, "show", "main:cards/acme.md").endswith(CARD)


@pytest.mark.slow
def test_a_failing_or_missing_wire_is_one_line_and_the_session_still_ends(
    client: Path, tmp_path: Path
) -> None:
    import json
    import subprocess

    wire = tmp_path / "requests.jsonl"
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "write_memory_card", "arguments": WRITE},
    }
    wire.write_text(json.dumps(_hello()) + "\n" + json.dumps(call) + "\n")
    server = [sys.executable, "-c", SERVER, "-C", str(client), "mcp"]

    # The client stops reading before the answers: a disconnect, the write still lands.
    with open(wire, "rb") as stdin:
        proc = subprocess.Popen(server, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 0, err
    assert "Traceback" not in err and "1 memory edit landed on main" in err, err
    assert git(client, "show", "main:cards/acme.md").endswith(CARD)

    # Answers that cannot be written (a full disk behind stdout).
    listing = tmp_path / "list.jsonl"
    listing.write_text(
        json.dumps(_hello())
        + "\n"
        + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        + "\n"
    )
    with open(listing, "rb") as stdin, open("/dev/full", "wb") as full:
        done = subprocess.run(
            server, stdin=stdin, stdout=full, stderr=subprocess.PIPE, timeout=60, check=False
        )
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 6, lines
    assert len(lines) == 1 and lines[0].startswith(
        "gitmem: error: the connection to the MCP client failed ([Errno 28] No space left on device)"
    ), lines
    assert lines[0].endswith("ended: no memory edits")

    # No stdin or no stdout at all.
    for redirect in ("<&-", "</dev/null >&-"):
        shell = " ".join(f"'{a}'" for a in server) + " " + redirect
        closed = subprocess.run(["sh", "-c", shell], capture_output=True, timeout=60, check=False)
        assert closed.returncode == 6, closed.stderr
        assert closed.stderr.decode().splitlines() == [
            "gitmem: error: stdin or stdout is closed: gitmem mcp talks to its client over both"
        ]
    assert session_branches(client) == []


def test_the_end_of_input_waits_only_for_requests_that_get_an_answer() -> None:
    import json

    import anyio

    from gitmem.bridges.mcp_server import _Asked

    async def main() -> None:
        asked = _Asked()
        for message in [
            _hello(1),
            {"jsonrpc": "2.0", "id": "x", "method": "tools/list"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ]:
            asked.read(json.dumps(message) + "\n")
        asked.read("not json\n")
        assert asked.waiting == {"1", "'x'"}
        asked.answered(types.JSONRPCResponse(jsonrpc="2.0", id=1, result={}))
        asked.read(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": "x"},
                }
            )
            + "\n"
        )
        assert asked.waiting == set()
        with anyio.fail_after(1):
            await asked.all_answered()
        asked.read(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}) + "\n")
        asked.IDLE_S = 0.05  # never answered: the wait gives up
        with anyio.fail_after(5):
            await asked.all_answered()

    anyio.run(main)
