"""The index budget (limits.index_tokens): counted on every refresh, shown by `gitmem index`
and `gitmem status`, a warning above 80 %, folded above 100 % with every card still named
(tests/test_index_tiers.py), and the agent told when even the names exceed it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anthropic
import anyio
import pytest
from mcp.client import ClientSession

from gitmem.agent.chat import run_chat
from gitmem.fakeapi import FakeAnthropicServer, QueueModel
from gitmem.features.edit import write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry

from helpers import git, gm, snapshot


def fill(repo: MemoryRepo, n: int = 12) -> None:
    for i in range(n):
        write_card(
            repo,
            f"card{i}",
            "",
            f"## Notes\nnote {i}\n",
            IndexEntry.make("notes", ["notes", f"k{i}"], f"Notes number {i} about the client"),
        )


def set_limit(client: Path, tokens: int) -> None:
    set_value(client, str(tokens))
    git(client, "commit", "-qam", "budget")


def set_value(client: Path, value: str) -> None:
    toml = client / "gitmem.toml"
    text = re.sub(r"\nindex_tokens = [^\n]*", "", toml.read_text())
    assert "[limits]\n" in text
    toml.write_text(text.replace("[limits]\n", f"[limits]\nindex_tokens = {value}\n"))


def budget(client: Path) -> dict[str, Any]:
    res = gm("-C", str(client), "index", "--budget", "--json")
    assert res.code == 0, res.err
    return dict(json.loads(res.out))


def test_under_budget_the_index_is_unchanged_and_its_size_is_shown(
    repo: MemoryRepo, client: Path
) -> None:
    fill(repo)
    got = budget(client)
    assert got["limit"] == 8000 and got["estimated"] is True and got["state"] == "ok"
    assert got["tokens"] == -(-len(gm("-C", str(client), "index").out.encode()) // 4)
    res = gm("-C", str(client), "index")
    assert res.err == "" and "Over budget" not in res.out
    text = gm("-C", str(client), "index", "--budget").out
    assert "(estimated)" in text and "of the 8,000-token budget" in text
    st = json.loads(gm("-C", str(client), "status", "--json").out)
    assert st["index_budget"]["limit"] == 8000 and st["index_tokens"] == got["tokens"]


def test_above_80_percent_warns_and_above_100_folds(repo: MemoryRepo, client: Path) -> None:
    fill(repo, 30)
    tokens = budget(client)["tokens"]
    set_limit(client, int(tokens / 0.9))
    res = gm("-C", str(client), "index")
    assert res.code == 0 and "warning: the memory index is near its budget" in res.err
    assert "gitmem consolidate" in res.err and "Over budget" not in res.out
    assert "above 80 % of the budget" in gm("-C", str(client), "status").out

    set_limit(client, tokens // 2)
    res = gm("-C", str(client), "index")
    assert "over its budget" not in res.err and "Over budget" not in res.out  # folded to fit
    assert "sections are folded" in res.out
    for i in range(30):  # every card is still named
        assert f"card{i}" in res.out
    assert budget(client)["state"] != "over"

    set_limit(client, 100)  # not even the names fit: all of them, and the agent is told
    res = gm("-C", str(client), "index")
    assert "warning: the memory index is over its budget" in res.err
    assert all(f"card{i} (1)" in res.out for i in range(30))
    assert res.out.rstrip().endswith(
        "suggest `gitmem consolidate` to the person.\n</memory-index>".rstrip()
    )
    assert budget(client)["state"] == "over"
    status = gm("-C", str(client), "status").out
    assert "over budget: the agent is told, nothing is cut" in status


def test_the_agent_is_told_and_count_tokens_is_used_with_a_key(
    repo: MemoryRepo, client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(repo)
    set_limit(client, 50)
    model = QueueModel(["ok"])
    warnings: list[str] = []
    with FakeAnthropicServer(model) as server:
        sdk = anthropic.Anthropic(api_key="test", base_url=server.base_url, max_retries=0)
        with MemoryRepo(client) as fresh:
            run_chat(
                fresh, iter(["hello"]), client=sdk, write=lambda _t: None, warn=warnings.append
            )
        sdk.close()
        block = model.seen[0]["system"][1]["text"]
        assert "Over budget: this index is about" in block and "(count_tokens)" in block
        assert "index_tokens" in block and "card11 (1)" in block
        assert any("over its budget" in w for w in warnings)
        assert (
            "gitmem consolidate" in model.seen[0]["system"][0]["text"]
        )  # the rules say what to do
        # the CLI counts with count_tokens too when a key is set
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        got = budget(client)
    assert got["estimated"] is False and got["state"] == "over"


def test_mcp_instructions_carry_the_over_budget_line(client: Path, tmp_path: Path) -> None:
    from test_mcp_server import connect

    with MemoryRepo(client) as repo:
        fill(repo)
    set_limit(client, 50)
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with connect(client, tmp_path / "mcp.err") as session:
            assert isinstance(session, ClientSession)
            got = await session.read_resource("gitmem://index")
            seen["text"] = got.contents[0].text  # type: ignore[union-attr]

    anyio.run(main)
    assert "Over budget: this index is about" in seen["text"]


@pytest.mark.parametrize("value", ["0", "-5", '"big"'])
def test_a_bad_budget_is_a_config_error(client: Path, value: str) -> None:
    set_value(client, value)
    before = snapshot(client)
    res = gm("-C", str(client), "index")
    assert res.code == 6 and res.err.count("\n") == 1 and "gitmem.toml" in res.err
    assert snapshot(client) == before
