"""`gitmem mcp` to the letter of JSON-RPC 2.0 and MCP: errors, annotations, templates."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client import ClientSession
from mcp.shared.exceptions import MCPError
from test_mcp_server import SERVER, WRITE, _hello, run, session_branches

from helpers import git


def answers_to(client: Path, lines: list[str]) -> tuple[dict[Any, Any], list[dict[str, Any]]]:
    """Raw lines on the server's stdin after the handshake: its answers by id, and the
    errors with id null in order."""
    hello = [
        json.dumps(_hello(0)),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
    proc = subprocess.run(
        [sys.executable, "-c", SERVER, "-C", str(client), "mcp"],
        input="".join(line + "\n" for line in hello + lines).encode(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert "Traceback" not in proc.stderr.decode()
    by_id: dict[Any, Any] = {}
    no_id: list[dict[str, Any]] = []
    for answer in map(json.loads, proc.stdout.decode().splitlines()):
        assert answer["jsonrpc"] == "2.0"
        if answer["id"] is None:
            no_id.append(answer["error"])
        else:
            by_id[answer["id"]] = answer
    return by_id, no_id


def test_malformed_lines_get_their_json_rpc_errors(client: Path) -> None:
    got, no_id = answers_to(
        client,
        [
            "this is not json",
            '{"jsonrpc": "2.0", "id": 1}',  # a request without a method
            '{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": "string"}',
            '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": [1, 2]}',
            '{"jsonrpc": "1.0", "id": 4, "method": "ping"}',
            '{"jsonrpc": "2.0", "id": 5, "method": 7}',
            "[]",
            '{"jsonrpc": "2.0", "method": "notifications/x", "params": "s"}',  # no answer
            "",  # a blank line is no message
            '{"jsonrpc": "2.0", "id": 6, "method": "ping"}',  # still serving
        ],
    )
    codes = {id_: (a["error"]["code"] if "error" in a else "ok") for id_, a in got.items() if id_}
    assert codes == {1: -32600, 2: -32602, 3: -32602, 4: -32600, 5: -32600, 6: "ok"}
    assert "needs a method" in got[1]["error"]["message"]
    assert [e["code"] for e in no_id] == [-32700, -32600]
    assert no_id[0]["message"].startswith("Parse error")


def test_unknown_tool_and_resource_are_protocol_errors(client: Path, tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    async def scenario(session: ClientSession) -> None:
        tip = git(client, "rev-parse", session_branches(client)[0])
        with pytest.raises(MCPError) as tool:
            await session.call_tool("drop_tables", {})
        with pytest.raises(MCPError) as resource:
            await session.read_resource("gitmem://nope")
        seen["errors"] = tool.value, resource.value
        assert git(client, "rev-parse", session_branches(client)[0]) == tip
        assert not (await session.call_tool("write_memory_card", WRITE)).is_error  # still serving

    run(client, tmp_path, scenario)
    tool, resource = seen["errors"]
    assert tool.code == types.INVALID_PARAMS
    assert tool.message.startswith("unknown tool 'drop_tables'; tools are read_memory_card")
    assert (resource.code, resource.data) == (-32002, {"uri": "gitmem://nope"})


def test_resource_templates_are_listed(client: Path, tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    async def scenario(session: ClientSession) -> None:  # "method not found" before
        seen["templates"] = (await session.list_resource_templates()).resource_templates

    run(client, tmp_path, scenario)
    assert seen["templates"] == []


def test_tools_carry_titles_and_annotations(client: Path, tmp_path: Path) -> None:
    seen: dict[str, types.Tool] = {}

    async def scenario(session: ClientSession) -> None:
        seen.update({t.name: t for t in (await session.list_tools()).tools})

    run(client, tmp_path, scenario)
    hints = {
        name: (tool.annotations.read_only_hint, tool.annotations.destructive_hint)
        for name, tool in seen.items()
        if tool.annotations
    }
    assert hints == {
        "read_memory_card": (True, None),
        "write_memory_card": (False, False),
        "search_history": (True, None),
    }
    write = seen["write_memory_card"].annotations
    assert write is not None and write.idempotent_hint is False
    for tool in seen.values():
        assert tool.title and tool.annotations and tool.annotations.title == tool.title
        assert tool.annotations.open_world_hint is False
