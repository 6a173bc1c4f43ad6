"""The JSON-RPC 2.0 error a line from an MCP client gets when it is not a valid message.

The ``mcp`` package drops such lines without an answer (it logs them at debug level);
JSON-RPC 2.0 requires one: -32700 for a line that is not JSON, -32600 for an object
that is not a request, -32602 for a request whose ``params`` is not an object. The
stdio server checks each line with ``wire_error`` before the package sees it.
"""

from __future__ import annotations

import json

import mcp_types as types

# MCP 2025-11-25, server/resources: "Resource not found" is -32002.
RESOURCE_NOT_FOUND = -32002


def wire_error(line: str) -> types.JSONRPCError | None:
    """The error answering ``line``; None for a valid message, a blank line, or a
    malformed notification (JSON-RPC never answers a notification)."""
    if not line.strip():
        return None
    try:
        data = json.loads(line)
    except ValueError:
        return _error(None, types.PARSE_ERROR, "Parse error: the line is not JSON")
    if not isinstance(data, dict):
        return _error(
            None,
            types.INVALID_REQUEST,
            "Invalid Request: a message is one JSON object (batches are not supported)",
        )
    raw_id = data.get("id")
    valid_id = isinstance(raw_id, str) or (isinstance(raw_id, int) and not isinstance(raw_id, bool))
    id_ = raw_id if valid_id else None
    reason = _invalid_request(data, valid_id)
    if not reason and _valid(line):
        return None
    if reason or "method" not in data:
        return _error(
            id_, types.INVALID_REQUEST, f"Invalid Request: {reason or 'not a valid response'}"
        )
    if "id" not in data:
        return None
    return _error(id_, types.INVALID_PARAMS, "Invalid params: params must be an object")


def _valid(line: str) -> bool:
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        return False
    return True


def _invalid_request(data: dict[str, object], valid_id: bool) -> str:
    """Why ``data`` is not a request object; empty if it may be one (or a response)."""
    if data.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "id" in data and not valid_id:
        return "id must be a string or an integer"
    if "method" not in data:
        return "" if "result" in data or "error" in data else "a request needs a method"
    if not isinstance(data["method"], str):
        return "method must be a string"
    return ""


def _error(id_: str | int | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=id_, error=types.ErrorData(code=code, message=message)
    )
