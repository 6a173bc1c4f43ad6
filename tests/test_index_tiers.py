"""The tiered I block (issue 25): unchanged within `limits.index_tokens`, folded to fit over
it with every card named, byte-stable through sessions, moved only by edits, and a folded
card expanded by `read_memory_card`."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import anthropic

from gitmem.agent.chat import run_chat
from gitmem.agent.token_count import LayerCounter
from gitmem.agent.tools import MemoryTools
from gitmem.api import read_index
from gitmem.fakeapi import FakeAnthropicServer, RuleModel
from gitmem.features.edit import write_card
from gitmem.index import cache_file
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry

from helpers import git, gm

HEADINGS = ("Budget", "Contacts", "Timeline", "Risks")


def fill(repo: MemoryRepo, n: int) -> list[str]:
    """``n`` cards of four sections, each with words of its own; returns their names."""
    names = [f"client{i:02d}-site" for i in range(n)]
    for i, name in enumerate(names):
        body = "".join(f"## {h}\n{h.lower()} note {i}: word{i}x{h.lower()}\n\n" for h in HEADINGS)
        write_card(
            repo,
            name,
            "",
            f"# Client {i} web site\n\n{body}",
            IndexEntry.make("budget", ["budget", f"k{i}"], f"Budget of client {i}"),
        )
    return names


def set_budget(client: Path, tokens: int) -> None:
    toml = client / "gitmem.toml"
    text = re.sub(r"\nindex_tokens = [^\n]*", "", toml.read_text())
    toml.write_text(text.replace("[limits]\n", f"[limits]\nindex_tokens = {tokens}\n"))
    git(client, "commit", "-qam", "index budget")


def index_out(client: Path, *args: str) -> str:
    res = gm("-C", str(client), "index", *args)
    assert res.code == 0, res.err
    return res.out


def split(client: Path) -> dict[str, Any]:
    got = json.loads(index_out(client, "--budget", "--json"))
    return dict(got["split"])


def chat(client: Path, turns: list[str]) -> list[dict[str, Any]]:
    """One `gitmem chat` session through the fake API's scripted model: its requests."""
    with FakeAnthropicServer(RuleModel()) as server:
        sdk = anthropic.Anthropic(api_key="test", base_url=server.base_url, max_retries=0)
        with MemoryRepo(client) as repo:
            run_chat(repo, iter(turns), client=sdk, write=lambda _t: None, warn=lambda _t: None)
        sdk.close()
        return [r.body for r in server.requests if r.path.endswith("/messages")]


def i_block(request: dict[str, Any]) -> str:
    return str(request["system"][1]["text"])


def tool_results(request: dict[str, Any]) -> list[str]:
    last = request["messages"][-1]["content"]
    return [str(b["content"]) for b in last if isinstance(b, dict) and b["type"] == "tool_result"]


def test_within_budget_the_block_is_the_untiered_render(repo: MemoryRepo, client: Path) -> None:
    fill(repo, 50)
    set_budget(client, 200_000)
    full = read_index(repo).render()  # the untiered path: every section of every card
    assert index_out(client) == full == index_out(client, "--full")
    assert split(client)["folded_sections"] == 0
    requests = chat(client, ["hello"])
    assert i_block(requests[0]) == full  # what the agent is sent, byte for byte


def test_over_budget_the_block_fits_and_names_every_card(repo: MemoryRepo, client: Path) -> None:
    names = fill(repo, 40)
    full = index_out(client, "--full")
    for budget in (1500, 1000, 600, 400):  # the whole block is about 1,800 tokens
        set_budget(client, budget)
        block = index_out(client)
        assert -(-len(block.encode()) // 4) <= budget  # the budget's own estimate
        assert all(name in block for name in names)  # no card is ever missing
        got = split(client)
        assert (
            got["folded_sections"] > 0 and f"{got['folded_sections']} sections are folded" in block
        )
        assert len(got["full"]) + got["folded_cards"] == 40
        assert index_out(client, "--full") == full  # people still see every section
    with FakeAnthropicServer(RuleModel()) as server:  # and by the fake API's count
        sdk = anthropic.Anthropic(api_key="test", base_url=server.base_url, max_retries=0)
        assert LayerCounter(sdk, "claude-sonnet-4-5").text(block) <= 400
        sdk.close()
    status = gm("-C", str(client), "status").out
    assert f"folded to fit: {len(got['full'])} of 40 cards listed in full" in status
    assert "the memory index is folded to fit its budget" in gm("-C", str(client), "index").err


def test_an_edit_moves_that_card_and_reindex_reproduces_the_block(
    repo: MemoryRepo, client: Path
) -> None:
    fill(repo, 40)
    set_budget(client, 1200)
    before, listed = index_out(client), split(client)["full"]
    assert listed and "client03-site" not in listed  # the oldest cards are folded
    write_card(
        repo,
        "client03-site",
        "risks note 3",
        "risks note 3 (moved)",
        IndexEntry.make("risks", ["risk"], "Risks moved"),
    )
    after, now = index_out(client), split(client)["full"]
    assert "client03-site" in now and set(now) <= {*listed, "client03-site"}
    assert before != after and "## client03-site" in after
    assert "- risks: Risks moved [risk]" in after
    shutil.rmtree(client / ".git" / "gitmem")  # no cache at all: replayed from history
    assert index_out(client) == after
    res = gm("-C", str(client), "reindex")
    assert res.code == 0 and "differed" not in res.out, res.out + res.err
    # a folded block kept wrong is told and rebuilt by reindex
    kept = str(next((client / ".git" / "gitmem").glob("index-main.marshal")))
    records, _ = cache_file.read(kept, 3, 3)  # the I block, the resolved index, the replay
    assert records is not None
    records[0][5] = records[0][5].replace("## client03-site", "## client03-sitx")
    cache_file.write(kept, records)
    assert "## client03-sitx" in index_out(client)
    res = gm("-C", str(client), "reindex")
    assert "the rendered index `gitmem index` serves differed from history" in res.out
    assert index_out(client) == after


def test_the_block_is_byte_stable_through_a_session_and_the_next(
    repo: MemoryRepo, client: Path
) -> None:
    fill(repo, 40)
    set_budget(client, 1200)
    assert "## client05-site" not in index_out(client)
    turns = ["hello", "recall client05-site", "remember client05-site Notes: call on Monday"]
    turns += [f"turn {i}" for i in range(5)]
    requests = chat(client, turns)
    blocks = {i_block(r) for r in requests}
    assert len(blocks) == 1 and "sections are folded" in blocks.pop()
    again = chat(client, ["hello again"])  # the session's edit moved client05-site
    assert "## client05-site" not in i_block(requests[0]) and "## client05-site" in i_block(
        again[0]
    )
    assert i_block(again[0]) == index_out(client)
    assert i_block(chat(client, ["and again"])[0]) == i_block(again[0])  # memory unchanged


def test_a_session_expands_a_folded_card_and_reads_its_section(
    repo: MemoryRepo, client: Path
) -> None:
    fill(repo, 40)
    set_budget(client, 1200)
    block = index_out(client)
    assert "## client02-site" not in block and "- client02-site: Client 2" in block
    requests = chat(client, ["recall client02-site", "recall client02-site risks"])
    expanded = tool_results(requests[1])[0]
    assert "client02-site is folded in the memory index" in expanded
    assert "- budget: Budget of client 2 [budget, k2]" in expanded
    assert "- risks: (unindexed) Risks" in expanded and "word2xrisks" not in expanded
    read = tool_results(requests[3])[0]
    assert read.startswith("## Risks") and "word2xrisks" in read
    # a card listed in full still reads whole, as it always did
    listed = split(client)["full"][0]
    whole = MemoryTools(repo).call("read_memory_card", {"project": listed})
    assert whole.text.startswith("# Client") and not whole.is_error


def test_search_history_finds_folded_sections(repo: MemoryRepo, client: Path) -> None:
    fill(repo, 40)
    set_budget(client, 600)
    block = index_out(client)
    assert "## client07-site" not in block  # folded
    hits = MemoryTools(repo).call("search_history", {"query": "word7xtimeline"})
    assert "client07-site § timeline" in hits.text


def test_any_budget_names_every_card_and_fits_or_says_so(repo: MemoryRepo, client: Path) -> None:
    fill(repo, 40)
    for budget in range(60, 2200, 170):  # from names that do not fit to a block that does
        set_budget(client, budget)
        res = gm("-C", str(client), "index")
        block = res.out
        assert all(f"client{i:02d}-site" in block for i in range(40)), budget
        if -(-len(block.encode()) // 4) > budget:  # only when not even the names fit
            got = split(client)
            assert got["full"] == [] and got["lines"] == 0 and "Over budget" in block
            assert "over its budget" in res.err


def test_index_budget_and_full_together_are_refused(client: Path) -> None:
    got = gm("-C", str(client), "index", "--budget", "--full")
    assert got.code == 2 and "give one of them" in got.err


def test_a_budget_of_zero_names_its_key(client: Path) -> None:
    toml = client / "gitmem.toml"
    toml.write_text(toml.read_text().replace("index_tokens = 8000", "index_tokens = 0"))
    got = gm("-C", str(client), "index")
    assert got.code != 0 and "limits.index_tokens is 0" in got.err
