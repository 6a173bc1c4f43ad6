"""`--json` prints exactly one JSON document on stdout, for every command that has it;
`ask --json` and `chat --json` carry the reply, the tool calls and the usage."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest

from gitmem.cli.app import all_commands
from gitmem.fakeapi import FakeAnthropicServer, RuleModel

from helpers import Result, git, gm

# Commands whose stdout is not a document of gitmem's: a protocol, a script, a show.
NO_JSON = {"mcp", "completion", "demo"}


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(RuleModel()) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        yield server


def one_document(res: Result) -> Any:
    """stdout parsed as exactly one JSON document (json.loads refuses anything after it)."""
    assert res.out.strip(), f"nothing on stdout (exit {res.code}): {res.err}"
    return json.loads(res.out)


def json_commands() -> set[str]:
    return {
        name
        for name, cmd in all_commands().items()
        if any(isinstance(p, click.Option) and "--json" in p.opts for p in cmd.params)
    }


def test_ask_json_is_one_document_with_reply_tool_calls_and_usage(
    client: Path, api: FakeAnthropicServer
) -> None:
    res = gm("-C", str(client), "ask", "--json", "remember acme Budget: 40k agreed")
    assert res.code == 0, res.err
    doc = one_document(res)
    assert doc["reply"] == "Saved."
    (exchange,) = doc["exchanges"]
    assert exchange["user"] == "remember acme Budget: 40k agreed"
    assert exchange["reply"] == "Saved."
    (call,) = exchange["tool_calls"]
    assert call["name"] == "write_memory_card" and call["input"]["project"] == "acme"
    assert call["is_error"] is False and call["result"]
    # two API calls (the tool call, then the answer), as the usage log has them
    logged = [json.loads(x) for x in (client / "logs/usage.jsonl").read_text().splitlines()]
    assert doc["usage"]["requests"] == 2 == len(logged)
    assert doc["usage"]["output_tokens"] == sum(r["output_tokens"] for r in logged) > 0
    assert exchange["usage"] == doc["usage"]
    assert doc["finish"]["landed"] and doc["finish"]["session"] == doc["session"]


def test_chat_json_covers_each_turn_and_only_this_run(
    client: Path, api: FakeAnthropicServer
) -> None:
    first = gm(
        "-C",
        str(client),
        "chat",
        "--json",
        "--session",
        "20261130-000000-json",
        stdin="recall acme budget\nhello\n",
    )
    assert first.code == 0, first.err
    doc = one_document(first)
    assert [e["user"] for e in doc["exchanges"]] == ["recall acme budget", "hello"]
    assert doc["exchanges"][1]["reply"].startswith('Noted: "hello"')
    assert doc["reply"] == doc["exchanges"][1]["reply"]
    assert doc["turns"] == 2
    again = gm("-C", str(client), "ask", "--json", "--resume", "20261130-000000-json", "again")
    assert again.code == 0, again.err
    later = one_document(again)
    assert [e["user"] for e in later["exchanges"]] == ["again"]
    assert [e["turn"] for e in later["exchanges"]] == [3]


def test_every_json_command_prints_one_document(
    client: Path, api: FakeAnthropicServer, tmp_path: Path
) -> None:
    c = str(client)
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(client, "remote", "add", "origin", str(bare))
    write = [
        "write",
        "acme",
        "--old",
        "",
        "--new",
        "## Budget\n30k\n",
        "--section",
        "budget",
        "--keywords",
        "budget",
        "--summary",
        "budget is 30k",
    ]
    runs: list[tuple[str, list[str]]] = [
        ("init", ["init", str(tmp_path / "other")]),
        ("clients", ["clients"]),
        ("install-hooks", ["-C", c, "install-hooks"]),
        ("write", ["-C", c, *write]),
        ("show", ["-C", c, "show", "acme"]),
        ("index", ["-C", c, "index"]),
        ("reindex", ["-C", c, "reindex"]),
        ("log", ["-C", c, "log"]),
        ("recover", ["-C", c, "recover"]),
        ("ask", ["-C", c, "ask", "hello"]),
        ("chat", ["-C", c, "chat"]),
        ("usage", ["-C", c, "usage"]),
        ("review", ["-C", c, "review", "--all"]),
        ("sync", ["-C", c, "sync"]),
        ("revert", ["-C", c, "revert", "HEAD"]),
    ]
    seen: set[str] = set()
    for name, args in runs:
        res = gm(*args, "--json", stdin="hello\n")
        assert res.code == 0, (name, res.err)
        one_document(res)
        seen.add(name)
    # A command added later (not in the table above) still prints one document, even
    # for its error when it needs arguments
    for name in sorted(json_commands() - seen - NO_JSON):
        one_document(gm("-C", c, name, "--json"))
    assert json_commands() >= seen


def test_errors_with_json_are_one_document(client: Path) -> None:
    res = gm("-C", str(client), "show", "nope", "--json")
    assert res.code == 3
    assert one_document(res)["error"]["exit_code"] == 3
    # an option the command refuses while reading its line: the same one document
    for args in (["search", "x", "-n", "0"], ["show", "--no-such-option"], ["nosuchcommand"]):
        res = gm("-C", str(client), *args, "--json")
        error = one_document(res)["error"]
        assert res.code == 2 == error["exit_code"] and error["type"] == "UsageError"
        assert error["message"] in res.err and "--help" in error["hint"]
    words = gm("-C", str(client), "search", "-n", "0", "--", "--json")  # a word to search
    assert words.code == 2 and words.out == ""


def test_ask_json_without_an_answer_is_still_one_document(
    client: Path, api: FakeAnthropicServer
) -> None:
    from gitmem.fakeapi import Fault

    api.faults.push(Fault.status(500), times=10)
    res = gm("-C", str(client), "ask", "--json", "hello")
    assert res.code == 7
    doc = one_document(res)
    assert doc["failed_turns"] == 1 and doc["error"]["exit_code"] == 7
    assert doc["exchanges"] == [] and doc["finish"]["dropped"]  # nothing was kept
    assert res.err.splitlines()[-1].startswith("gitmem: error: no answer from the model API")
