"""Agent sessions through the real anthropic SDK against the fake Messages API on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest

from gitmem.agent import usage as usage_mod
from gitmem.agent.chat import ChatResult, run_chat
from gitmem.agent.token_count import LayerCounter
from gitmem.fakeapi import FakeAnthropicServer, Fault, ManualClock, QueueModel, Reply, RuleModel
from gitmem.fakeapi.tokens import block_tokens, tool_tokens
from gitmem.memory.repo import MemoryRepo
from gitmem.review import session_branches as sessions

from helpers import git, gm


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(1_000_000.0)


@pytest.fixture
def api(clock: ManualClock) -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(RuleModel(), clock=clock) as server:
        yield server


@pytest.fixture
def sdk(api: FakeAnthropicServer) -> Iterator[anthropic.Anthropic]:
    made = anthropic.Anthropic(api_key="test", base_url=api.base_url, max_retries=2)
    yield made
    made.close()


def chat(
    repo: MemoryRepo,
    sdk: anthropic.Anthropic,
    lines: list[str],
    clock: ManualClock,
    step: float = 10.0,
    **kw: Any,
) -> tuple[ChatResult, list[str], list[str]]:
    out: list[str] = []
    warnings: list[str] = []

    def timed() -> Iterator[str]:
        for line in lines:
            clock.advance(step)
            yield line

    res = run_chat(
        repo, timed(), client=sdk, write=out.append, warn=warnings.append, clock=clock, **kw
    )
    return res, out, warnings


def configure(client: Path, *changes: tuple[str, str]) -> None:
    """Edit the client's gitmem.toml and commit it, as a person would."""
    toml = client / "gitmem.toml"
    text = toml.read_text()
    for old, new in changes:
        assert old in text
        text = text.replace(old, new)
    toml.write_text(text)
    git(client, "commit", "-qam", "settings")


def message_requests(api: FakeAnthropicServer) -> list[Any]:
    return [
        r
        for r in api.requests
        if r.path.endswith("/v1/messages")
        and r.status == 200
        and r.body.get("system")
        and "<<synthesis>>" not in json.dumps(r.body["system"])
    ]


def prefix_tokens(body: dict[str, Any], system_blocks: int) -> int:
    return sum(tool_tokens(t) for t in body["tools"]) + sum(
        block_tokens(b) for b in body["system"][:system_blocks]
    )


def breakpoints(body: dict[str, Any]) -> int:
    blocks = [*body["tools"], *body["system"]]
    for m in body["messages"]:
        blocks += m["content"] if isinstance(m["content"], list) else []
    return sum(1 for b in blocks if "cache_control" in b)


def test_forty_turns_read_rules_and_index_from_the_cache(
    repo: MemoryRepo, api: FakeAnthropicServer, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    lines = [
        f"remember proj{i % 5} Topic {i}: fact number {i} about the client"
        if i % 4 == 0
        else f"How is item {i} going?"
        for i in range(40)
    ]
    res, out, warnings = chat(repo, sdk, lines, clock)
    assert res.turns == 40 and res.failed_turns == 0 and warnings == []
    reqs = message_requests(api)
    assert len(reqs) == 40 + 10  # a second call after each of the 10 tool uses
    for rec in reqs:
        assert breakpoints(rec.body) == 4
    for rec in reqs[1:]:
        usage = rec.response["usage"]
        assert usage["cache_read_input_tokens"] >= prefix_tokens(rec.body, 2), usage
    # A+B is written once, then only read: the tools+A+B bytes never change.
    first_ab = json.dumps([reqs[0].body["tools"], reqs[0].body["system"][0]])
    assert all(json.dumps([r.body["tools"], r.body["system"][0]]) == first_ab for r in reqs)
    lines_logged = usage_mod.load_usage(repo)
    assert len([r for r in lines_logged if r["purpose"] == "turn"]) == len(reqs)
    assert "Saved." in "".join(out)


def test_card_write_mid_session_does_not_rebill_rules(
    repo: MemoryRepo, api: FakeAnthropicServer, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    chat(repo, sdk, ["hello", "remember acme Budget: 40k agreed", "and now?"], clock)
    reqs = message_requests(api)
    ab = prefix_tokens(reqs[0].body, 1)
    after_write = reqs[2:]  # the tool-result call and the next turn
    for rec in after_write:
        assert rec.response["usage"]["cache_read_input_tokens"] >= ab
    # The running session keeps the index it started with: its own write is in C.
    assert all(r.body["system"][1] == reqs[0].body["system"][1] for r in reqs)


def test_index_refreshes_only_when_the_cache_went_cold(
    repo: MemoryRepo, api: FakeAnthropicServer, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    lines = ["remember acme Budget: 40k agreed", "ok"]
    lines.append("after a long lunch")  # the clock jumps past the 5-minute TTL before this one
    out: list[str] = []
    it = iter(lines)

    def timed() -> Iterator[str]:
        for i, line in enumerate(it):
            clock.advance(400 if i == 2 else 5)
            yield line

    run_chat(repo, timed(), client=sdk, write=out.append, warn=print, clock=clock)
    reqs = message_requests(api)
    index_blocks = [r.body["system"][1]["text"] for r in reqs]
    assert "acme" not in index_blocks[0] and "acme" not in index_blocks[2]
    assert "- budget: 40k agreed [" in index_blocks[-1]
    assert reqs[-1].response["usage"]["cache_read_input_tokens"] == 0


def test_synthesis_every_n_exchanges_is_committed_and_shown(
    client: Path, api: FakeAnthropicServer, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    configure(client, ("synthesis_every = 30", "synthesis_every = 3"))
    with MemoryRepo(client) as repo:
        _res, _, _ = chat(
            repo, sdk, ["first point", "second point", "third point", "fourth"], clock
        )
    log = git(client, "log", "--format=%s%n%(trailers:key=Gitmem-Layer)", "main")
    assert "synthesis: through turn 3" in log and "Gitmem-Layer: synthesis" in log
    assert (client / "synthesis.md").read_text().startswith("## Synthesis")
    reqs = message_requests(api)
    assert "Synthesis" in reqs[-1].body["system"][2]["text"]
    assert "No activity yet" in reqs[0].body["system"][2]["text"]


def test_api_faults_keep_the_session_and_the_users_turn(
    repo: MemoryRepo, api: FakeAnthropicServer, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    # Turn 1: 429, then a dropped connection, then 529: the SDK's two retries are used up.
    api.faults.push(Fault.status(429, retry_after=0.001))
    api.faults.push(Fault.drop())
    api.faults.push(Fault.status(529, retry_after=0.001), times=3)
    # Turn 2: the last 529 costs one retry, then the model answers both turns at once.
    res, out, warnings = chat(repo, sdk, ["remember acme Budget: 40k", "anything else?"], clock)
    assert res.turns == 2 and res.failed_turns == 1
    assert len(warnings) == 1 and "OverloadedError" in warnings[0], warnings
    assert "your message is kept" in warnings[0]
    assert "Saved." in "".join(out)  # the kept turn was acted on with the next one
    assert "40k" in git(repo.root, "show", "main:cards/acme.md")
    transcript = git(repo.root, "show", f"main:sessions/{res.session}.jsonl")
    records = [json.loads(line) for line in transcript.splitlines()]
    users = [r["text"] for r in records if r.get("role") == "user"]
    assert "remember acme Budget: 40k" in users


def test_mid_stream_drop_is_reported_and_the_session_goes_on(
    repo: MemoryRepo, api: FakeAnthropicServer, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    api.faults.push(Fault.drop_mid_stream(after_events=2))
    res, out, warnings = chat(repo, sdk, ["hello there", "still there?"], clock)
    assert res.failed_turns == 1 and len(warnings) == 1
    assert "still there?" in "".join(out)


def test_review_policy_leaves_the_session_pending(
    client: Path, api: FakeAnthropicServer, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    configure(client, ('review = "auto"', 'review = "review"'))
    with MemoryRepo(client) as repo:
        main = repo.tip("main")
        assert main is not None
        res, _, _ = chat(repo, sdk, ["remember acme Budget: 40k agreed"], clock)
        assert res.finish.pending and res.finish.commits == 2  # the edit and the transcript
        branch = sessions.branch_of(res.session)
        assert "40k" in git(client, "show", f"{branch}:cards/acme.md")
        assert (
            git(
                client,
                "log",
                "-1",
                "--format=%(trailers:key=Gitmem-Actor,valueonly)",
                f"{branch}~1",
            ).strip()
            == "agent"
        )
        # main only gained the usage log (cost is never held back for review)
        assert git(client, "diff", "--name-only", main, "main").split() == ["logs/usage.jsonl"]
        assert not (client / "cards/acme.md").exists()


def test_failed_tool_calls_are_is_error_results_and_change_nothing(
    repo: MemoryRepo, api: FakeAnthropicServer, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read_memory_card", {"project": "nope"}),
        (
            "write_memory_card",
            {
                "project": "../x",
                "old_text": "",
                "new_text": "## A\nb\n",
                "index_entry": {"section_id": "a", "keywords": ["k"], "summary": "s"},
            },
        ),
        (
            "write_memory_card",
            {
                "project": "acme",
                "old_text": "",
                "new_text": "## A\nb\n",
                "index_entry": {"section_id": "zzz", "keywords": ["k"], "summary": "s"},
            },
        ),
        ("write_memory_card", {"project": "acme"}),
        ("search_history", {"query": "x", "limit": "ten"}),
        ("no_such_tool", {}),
    ]
    model = QueueModel(
        [Reply.tool_use(n, i, id=f"toolu_{k}") for k, (n, i) in enumerate(calls)]
        + [Reply.text("done")]
    )
    api.model = model
    before = repo.tip("main")
    _res, _, _ = chat(repo, sdk, ["try things"], clock)
    reqs = message_requests(api)
    results = [
        b for r in reqs[1:] for b in r.body["messages"][-1]["content"] if b["type"] == "tool_result"
    ]
    assert len(results) == len(calls) and all(b.get("is_error") for b in results)
    texts = [b["content"] for b in results]
    assert "no card 'nope'" in texts[0]
    assert "invalid project name" in texts[1]
    assert "section 'zzz' is not in cards/acme.md" in texts[2]
    assert "index_entry must be an object" in texts[3]
    assert "limit must be an integer" in texts[4]
    assert "unknown tool 'no_such_tool'" in texts[5]
    cards = git(repo.root, "log", "--format=%H", f"{before}..main", "--", "cards")
    assert cards == ""


def test_an_oversized_search_is_a_tool_error_and_the_chat_goes_on(
    client: Path, api: FakeAnthropicServer, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    configure(client, ("max_tokens = 2048", "max_tokens = 64000"))  # room for a 128 KiB call
    huge = "search " + "z" * 131072  # one word as long as the kernel allows one argument
    many = "search " + " ".join(f"w{i}" for i in range(300))  # 1,389 characters of words
    with MemoryRepo(client) as repo:
        res, out, warnings = chat(repo, sdk, [huge, many, "hello"], clock)
    assert (res.turns, res.failed_turns, warnings) == (3, 0, [])
    said = "".join(out).splitlines()
    assert said == [
        "That failed: Error: query is 131072 characters; at most 1000: search with a few "
        "words (client or project name and the topic)",
        "That failed: Error: query is 1389 characters; at most 1000: search with a few "
        "words (client or project name and the topic)",
        'Noted: "hello" (I saw 3 system blocks and 3 tools.)',
    ]
    results = [
        b
        for r in message_requests(api)
        for b in r.body["messages"][-1]["content"]
        if b["type"] == "tool_result"
    ]
    assert len(results) == 2 and all(b.get("is_error") for b in results)


def test_usage_lines_have_layers_tools_cost_and_miss_reason(
    repo: MemoryRepo, api: FakeAnthropicServer, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    chat(
        repo, sdk, ["remember acme Budget: 40k", "recall acme", "recall acme", "recall acme"], clock
    )
    recs = usage_mod.load_usage(repo)
    first = recs[0]
    for key in (
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "output_tokens",
    ):
        assert isinstance(first[key], int)
    assert set(first["layers"]) == set("ABISCE") and first["layers"]["B"] > 1000
    assert first["estimated"] is False
    assert first["tools"] == ["write_memory_card"] and first["cost_usd"] > 0
    total = (
        first["input_tokens"]
        + first["cache_creation_input_tokens"]
        + first["cache_read_input_tokens"]
    )
    assert sum(first["layers"].values()) == total
    reads = [r for r in recs if r["tools"] == ["read_memory_card"]]
    assert reads and reads[0]["full_card_reads"] == 1
    # the request that asked for the card held no card text; the next one (its result) does
    after = recs[recs.index(reads[0]) + 1]
    assert reads[0]["layers"]["E"] == 0 and after["layers"]["E"] > 0
    assert all(r["cost_usd"] < r["uncached_cost_usd"] for r in recs[1:])
    report = gm("-C", str(repo.root), "usage")
    assert "3 full-card reads where the index would have done" in report.out


def test_usage_report_flags_a_cache_that_expires_between_turns(
    repo: MemoryRepo, api: FakeAnthropicServer, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    chat(repo, sdk, ["one", "two", "three"], clock, step=600)
    recs = usage_mod.load_usage(repo)
    assert [r["cache_read_input_tokens"] for r in recs] == [0, 0, 0]
    out = json.loads(gm("-C", str(repo.root), "usage", "--json").out)
    assert any("cache expired between turns 2 times" in f for f in out["sessions"][0]["flags"])


def test_warns_once_when_the_prefix_is_below_the_minimum_cacheable_length(
    client: Path, api: FakeAnthropicServer, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    configure(client, ('name = "claude-sonnet-5-5"', 'name = "claude-haiku-4-5"'))
    with MemoryRepo(client) as repo:
        _, _, warnings = chat(repo, sdk, ["one", "two"], clock)
    assert len(warnings) == 1 and "below claude-haiku-4-5's minimum of 4096" in warnings[0]


def test_cache_miss_reason_is_logged_when_the_prompt_diverges(
    repo: MemoryRepo, api: FakeAnthropicServer, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    # The write lands in the index; the cold cache after 10 minutes lets the index refresh,
    # so the next request's system prompt differs from the previous one.
    chat(repo, sdk, ["remember acme Budget: 4", "later"], clock, step=600)
    recs = usage_mod.load_usage(repo)
    assert recs[-1]["cache_miss_reason"] == "system_changed"
    assert recs[1]["cache_miss_reason"] is None  # the tool-result call reused the prefix


def test_layer_counts_are_estimated_and_flagged_when_counting_fails() -> None:
    dead = anthropic.Anthropic(api_key="x", base_url="http://127.0.0.1:9", max_retries=0)
    counter = LayerCounter(dead, "claude-sonnet-5-5")
    assert counter.text("x" * 40) == 10 and counter.estimated is True
    dead.close()


def test_no_api_key_is_a_one_line_error(client: Path) -> None:
    res = gm("-C", str(client), "ask", "hello")
    assert res.code == 6
    assert res.err.splitlines() == [
        "gitmem: error: no API key: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another "
        "endpoint); `gitmem chat --simulated` and `gitmem demo` run without one"
    ]


def test_demo_runs_without_a_key(tmp_path: Path) -> None:
    res = gm("demo", "--keep", str(tmp_path / "d"))
    assert res.code == 0, res.err
    assert res.out.startswith("gitmem demo: SIMULATED MODEL.")
    assert "Gitmem-Section: budget" in res.out and "<memory-index>" in res.out
    assert "read from cache" in res.out
    assert git(tmp_path / "d/demo-client", "status", "--porcelain") == ""


def test_old_turns_leave_the_window_only_once_the_synthesis_covers_them(
    client: Path, api: FakeAnthropicServer, sdk: anthropic.Anthropic, clock: ManualClock
) -> None:
    configure(
        client,
        ("synthesis_every = 30", "synthesis_every = 3"),
        ("chat_budget_tokens = 20000", "chat_budget_tokens = 30"),
    )
    turns = [f"turn {i}: " + "words " * 20 for i in range(1, 6)]
    with MemoryRepo(client) as repo:
        chat(repo, sdk, turns, clock)
    reqs = message_requests(api)

    def first_user_text(rec: Any) -> str:
        return str(rec.body["messages"][0]["content"][0]["text"])

    # Turns 1-3 are over the 30-token budget but stay until the synthesis covers them...
    assert [first_user_text(r)[:6] for r in reqs[:3]] == ["turn 1"] * 3
    # ...then the window starts after the covered turns.
    assert [first_user_text(r)[:6] for r in reqs[3:]] == ["turn 4", "turn 4"]
    assert "turn 1" in reqs[3].body["system"][2]["text"]  # the synthesis now holds them
