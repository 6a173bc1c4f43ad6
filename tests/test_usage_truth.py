"""The cost report tells the truth: checked against the fake API's own accounting."""

from __future__ import annotations

import json
from pathlib import Path

import anthropic
from test_agent import api, chat, clock, configure, message_requests, sdk

from gitmem.agent import usage as usage_mod
from gitmem.fakeapi import FakeAnthropicServer, ManualClock
from gitmem.fakeapi.tokens import block_tokens
from gitmem.features.edit import write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry

from helpers import gm

__all__ = ["api", "clock", "sdk"]  # fixtures shared with test_agent
HAIKU = ('name = "claude-sonnet-5-5"', 'name = "claude-haiku-4-5"')


def _big_index(repo: MemoryRepo, cards: int = 90) -> None:
    """Enough cards that the index alone passes haiku's minimum of 4,096 tokens."""
    for i in range(cards):
        summary = f"card {i}: " + " ".join(f"fact{j}-{i}" for j in range(30))
        write_card(
            repo,
            f"client-{i:03d}",
            "",
            f"# Client {i}\n\n## Notes\n- n {i}\n",
            IndexEntry.make("notes", ["client", f"k{i}"], summary[:190]),
        )


def test_a_short_haiku_session_is_told_below_the_minimum_not_expired(
    client: Path, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    configure(client, HAIKU)
    with MemoryRepo(client) as repo:
        chat(repo, sdk, ["one", "two", "three", "four"], clock, step=1.0)
        recs = usage_mod.load_usage(repo)
    assert all(r["cache_read_input_tokens"] == r["cache_creation_input_tokens"] == 0 for r in recs)
    flags = json.loads(gm("-C", str(client), "usage", "--json").out)["sessions"][0]["flags"]
    assert not any("expired" in f or "cache_ttl" in f for f in flags), flags
    assert any(
        "below claude-haiku-4-5's minimum cacheable length (4,096 tokens)" in f for f in flags
    ), flags


def test_an_expired_cache_is_still_told_apart_from_a_changed_layer(
    repo: MemoryRepo, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    chat(repo, sdk, ["one", "two", "three"], clock, step=600)
    from gitmem.agent.usage_report import miss_cause

    recs = usage_mod.load_usage(repo)
    assert [miss_cause(p, c) for p, c in zip([None, *recs[:-1]], recs, strict=True)] == [
        "first write",
        "expired",
        "expired",
    ]
    changed = {**recs[2], "layer_hashes": {**recs[2]["layer_hashes"], "AB": "0" * 12}}
    assert miss_cause(recs[1], changed) == "layer changed"


def test_no_warning_when_a_later_breakpoint_reaches_the_minimum(
    client: Path, api: FakeAnthropicServer, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    configure(client, HAIKU)
    with MemoryRepo(client) as repo:
        _big_index(repo)
        _, _, warnings = chat(repo, sdk, ["one", "two"], clock)
        recs = usage_mod.load_usage(repo)
    assert warnings == []
    assert recs[-1]["cache_read_input_tokens"] > 4096  # the prefix was cached after all


def test_the_warning_names_every_layer_when_none_reaches_the_minimum(
    client: Path, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    configure(client, HAIKU)
    with MemoryRepo(client) as repo:
        _, _, warnings = chat(repo, sdk, ["one"], clock)
    assert len(warnings) == 1
    assert "(tools + rules + persona, index, synthesis)" in warnings[0]
    assert "none of these layers will be cached" in warnings[0]


def _tool_result_tokens(body: dict[str, object]) -> int:
    """The fake API's count of the tool results a request carries (its own accounting)."""
    total = 0
    for m in body["messages"]:  # type: ignore[attr-defined]
        if isinstance(m["content"], list):
            total += sum(block_tokens(b) for b in m["content"] if b.get("type") == "tool_result")
    return total


def test_a_full_card_read_is_counted_once_in_e_on_the_request_that_carries_it(
    repo: MemoryRepo, api: FakeAnthropicServer, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    chat(repo, sdk, ["remember acme Budget: 40k", "recall acme"], clock)
    recs = [r for r in usage_mod.load_usage(repo) if r["purpose"] == "turn"]
    reqs = message_requests(api)
    assert len(recs) == len(reqs)
    for rec, req in zip(recs, reqs, strict=True):
        # E is card text the request held: never more than its tool results (fake API count)
        assert rec["layers"]["E"] <= _tool_result_tokens(req.body)
        sent = rec["input_tokens"] + rec["cache_creation_input_tokens"]
        assert sum(rec["layers"].values()) == sent + rec["cache_read_input_tokens"]
    asked = next(i for i, r in enumerate(recs) if r["tools"] == ["read_memory_card"])
    assert recs[asked]["layers"]["E"] == 0
    assert recs[asked + 1]["layers"]["E"] > 0
    assert sum(r["layers"]["E"] for r in recs) == recs[asked + 1]["layers"]["E"]


def test_resume_with_a_warm_cache_reuses_the_index_it_sent_and_says_it_changed(
    repo: MemoryRepo, api: FakeAnthropicServer, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    _big_index(repo, 40)
    res, _, _ = chat(repo, sdk, ["one", "two"], clock)
    write_card(
        repo,
        "client-000",
        "- n 0",
        "- n 0, updated by hand",
        IndexEntry.make("notes", ["client"], "changed since the session"),
    )
    clock.advance(60)  # within the 5-minute TTL
    _, _, warnings = chat(repo, sdk, ["three"], clock, resume=res.session)
    recs = [r for r in usage_mod.load_usage(repo) if r["purpose"] == "turn"]
    first_resumed = recs[2]
    assert first_resumed["layers"]["I"] > 2000
    # the cache is read through the index: only the new turn is written
    assert first_resumed["cache_read_input_tokens"] >= (
        first_resumed["layers"]["A"] + first_resumed["layers"]["B"] + first_resumed["layers"]["I"]
    )
    assert first_resumed["layer_hashes"]["I"] == recs[1]["layer_hashes"]["I"]
    assert any("the index changed since this session's last request" in w for w in warnings)
    body = json.dumps(message_requests(api)[-1].body["system"])
    assert "changed since the session" not in body
