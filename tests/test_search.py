"""search and the search_history tool: ranking sections, past values and transcripts; bad queries."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import anyio
import mcp_types as types
import pytest
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from gitmem.agent.chat import run_chat
from gitmem.agent.tools import MemoryTools, hit_line
from gitmem.errors import InvalidInput
from gitmem.fakeapi import FakeAnthropicServer, ManualClock, QueueModel, Reply, RuleModel
from gitmem.features.edit import write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.search import cache, fold
from gitmem.search.ranked import search
from gitmem.search.state import fingerprint

from helpers import git, gm

CARDS = {
    "globex-website": (
        "# Globex: Website redesign\n\n"
        "## Budget\nApproved spend is €40k for phase one, signed off by Hank Scorpio (CFO).\n\n"
        "## Timeline\nGo-live planned for 2026-03-01; design freeze on 2026-01-15.\n\n"
        "## Contacts\nDay-to-day: Maria Novak (marketing lead). Sponsor: Hank Scorpio.\n\n"
        "## Hosting\nRuns on Hetzner Cloud, deployed with GitHub Actions.\n"
    ),
    "initech-crm": (
        "# Initech: CRM migration\n\n"
        "## Budget\nFixed price $25k, paid in three instalments.\n\n"
        "## Risks\nThe legacy export is missing order history before 2019.\n\n"
        "## Portal\nCustomers log in through the self-service portal.\n"
    ),
}
ENTRIES = {
    ("globex-website", "budget"): (["budget", "cost"], "Budget €40k approved by Hank Scorpio"),
    ("globex-website", "timeline"): (["launch", "deadline"], "Go-live 2026-03-01"),
    ("globex-website", "contacts"): (["pm", "contacts"], "PM Maria Novak"),
    ("globex-website", "hosting"): (["hosting"], "Runs on Hetzner Cloud"),
    ("initech-crm", "budget"): (["budget"], "Fixed price $25k"),
    ("initech-crm", "risks"): (["risks"], "Legacy export misses old orders"),
    ("initech-crm", "portal"): (["portal"], "Self-service portal"),
}


def entry(card: str, section: str) -> IndexEntry:
    kws, summary = ENTRIES[(card, section)]
    return IndexEntry.make(section, kws, summary)


@pytest.fixture
def memory(repo: MemoryRepo) -> MemoryRepo:
    for card, text in CARDS.items():  # one commit per section, each with its index entry
        title, *parts = text.split("\n## ")
        keys = [k for k in ENTRIES if k[0] == card]
        for n, (part, key) in enumerate(zip(parts, keys, strict=True)):
            new = f"{title}\n## {part}" if n == 0 else f"\n## {part}"
            write_card(repo, card, "", new, entry(*key))
    return repo


def top(repo: MemoryRepo, query: str, n: int = 1, **kw: Any) -> list[tuple[str, str, str]]:
    return [(h.card, h.section, h.state) for h in search(repo, query, 10, **kw)][:n]


def test_natural_questions_rank_the_section_that_answers_them(memory: MemoryRepo) -> None:
    assert top(memory, "How much will Globex spend on the website?") == [
        ("globex-website", "budget", "current")
    ]
    assert top(memory, "Who is my contact at Globex?") == [
        ("globex-website", "contacts", "current")
    ]
    assert top(memory, "what's the budget for Initech now?") == [
        ("initech-crm", "budget", "current")
    ]
    assert top(memory, "initech risks") == [("initech-crm", "risks", "current")]
    # the card text is searched, not only commit messages: only the text says "Hetzner"
    assert top(memory, "which project runs on hetzner") == [
        ("globex-website", "hosting", "current")
    ]


def test_names_and_numbers_match_whole_words_never_substrings(memory: MemoryRepo) -> None:
    assert search(memory, "po").hits == ()  # no "portal", no "portfolio"
    assert top(memory, "portal") == [("initech-crm", "portal", "current")]
    assert top(memory, "2026-03-01") == [("globex-website", "timeline", "current")]
    assert top(memory, "GLOBEX-WEBSITE hosting") == [("globex-website", "hosting", "current")]


def test_stemming_and_folding(memory: MemoryRepo) -> None:
    assert top(memory, "Launching?") == [("globex-website", "timeline", "current")]
    assert top(memory, "instalment") == [("initech-crm", "budget", "current")]
    assert top(memory, "deployments HETZNER!") == [("globex-website", "hosting", "current")]


def test_words_that_match_nothing_do_not_hide_what_the_others_find(memory: MemoryRepo) -> None:
    assert top(memory, "globex budget zqxwv flurbo") == [("globex-website", "budget", "current")]


def test_past_values_are_found_with_their_dates_and_ranked_when_asked_for(
    memory: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_AUTHOR_DATE", "1772352000 +0000")  # 2026-03-01
    old = "Approved spend is €40k for phase one"
    write_card(
        memory,
        "globex-website",
        old,
        "Approved spend is €55k for phase one",
        IndexEntry.make("budget", ["budget"], "Budget raised to €55k"),
    )
    before = search(memory, "What was the Globex budget before?", 5)
    first = before[0]
    assert (first.card, first.section, first.state) == ("globex-website", "budget", "past")
    assert "€40k" in first.snippet and "55k" not in first.snippet
    assert (first.date[:10], first.until[:10]) == ("2025-11-30", "2026-03-01")
    assert "past globex-website § budget, 2025-11-30 to 2026-03-01" in hit_line(first)
    now = search(memory, "Globex budget", 5)
    assert (now[0].state, now[0].date[:10]) == ("current", "2026-03-01")
    assert "€55k" in now[0].snippet
    # the value in force names the section: its older value is not repeated below it
    assert [h.state for h in now if h.section == "budget" and h.card == "globex-website"] == [
        "current"
    ]
    assert [h.state for h in before if h.section == "budget" and h.card == "globex-website"] == [
        "past",
        "current",
    ]


def test_transcripts_committed_and_live(memory: MemoryRepo, client: Path, tmp_path: Path) -> None:
    turns = [
        {
            "at": "2025-11-02T10:00:00+00:00",
            "role": "user",
            "text": "Globex asked whether a chatbot could come in phase two.",
            "content": [],
        },
        {
            "at": "2025-11-02T10:00:05+00:00",
            "role": "assistant",
            "text": "Noted as a possible idea; nothing agreed.",
            "content": [],
        },
    ]
    (client / "sessions" / "s1.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    git(client, "add", "sessions/s1.jsonl")
    git(client, "commit", "-qm", "session s1")
    hit, reply = [h for h in search(memory, "did globex want chatbots?") if h.kind == "transcript"]
    assert (hit.ref, hit.session, hit.turn, hit.role) == ("s1#1", "s1", 1, "user")
    assert hit.date[:10] == "2025-11-02"
    assert "chatbot" in hit.snippet
    # the reply is found by the words of the message it answers, below it
    assert (reply.ref, reply.role, reply.snippet) == ("s1#1", "assistant", turns[1]["text"])
    assert reply.score < hit.score
    live = tmp_path / "s2.jsonl"
    live.write_text(
        json.dumps(
            {
                "at": "2025-11-03T09:00:00+00:00",
                "role": "user",
                "text": "Initech wants the kiosk mode after all.",
            }
        )
        + "\n"
    )
    found = search(memory, "kiosk", live=[live])
    assert [(h.kind, h.ref) for h in found] == [("transcript", "s2#1")]
    assert search(memory, "kiosk").hits == ()


def test_result_is_json_and_the_index_is_a_cache_under_git_gitmem(memory: MemoryRepo) -> None:
    res = search(memory, "globex budget", 2)
    data = json.loads(json.dumps(res.to_json()))
    assert data["query"] == "globex budget"
    assert data["hits"][0]["card"] == "globex-website"
    assert set(data["hits"][0]) >= {"card", "section", "state", "date", "snippet", "score", "text"}
    assert data["hits"][0]["text"].startswith("globex-website § budget: Budget:")
    assert data["hits"][0]["score"] >= data["hits"][1]["score"]
    assert (memory.git_dir / "gitmem" / "search-main.marshal").is_file()


def test_a_damaged_cache_is_rebuilt_never_served(client: Path, memory: MemoryRepo) -> None:
    search(memory, "globex")
    path = memory.git_dir / "gitmem" / "search-main.marshal"
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    with MemoryRepo(client) as fresh:
        assert cache.load(fresh, "main") is None
        assert top(fresh, "globex hosting") == [("globex-website", "hosting", "current")]
    path.write_bytes(bytes(raw))
    res = gm("-C", str(client), "reindex", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["search_index"] == "rebuilt"
    assert "the search index differed from history" in data["differences"]
    again = json.loads(gm("-C", str(client), "reindex", "--json").out)
    assert again["search_index"] == "matched"


def test_a_first_search_on_a_session_branch_leaves_mains_cache(memory: MemoryRepo) -> None:
    tip = memory.tip("main")
    assert tip is not None
    git(memory.root, "branch", "gitmem/session/y", tip)
    write_card(
        memory,
        "initech-crm",
        "$25k",
        "$28k",
        IndexEntry.make("budget", ["budget"], "$28k"),
        branch="gitmem/session/y",
    )
    assert top(memory, "initech budget", branch="gitmem/session/y") == [
        ("initech-crm", "budget", "current")
    ]
    files = sorted(p.name for p in (memory.git_dir / "gitmem").glob("search-*"))
    assert files == ["search-main.marshal"]
    with MemoryRepo(memory.root) as fresh:
        cached = cache.load(fresh, "main")
        assert cached is not None and cached.commit == tip


def test_a_session_branch_search_starts_from_mains_cache(memory: MemoryRepo) -> None:
    search(memory, "globex")  # main's cache on disk
    tip = memory.tip("main")
    assert tip is not None
    git(memory.root, "branch", "gitmem/session/x", tip)
    write_card(
        memory,
        "globex-website",
        "Hetzner Cloud",
        "Vercel",
        IndexEntry.make("hosting", ["hosting"], "Runs on Vercel"),
        branch="gitmem/session/x",
    )
    with MemoryRepo(memory.root) as fresh:
        assert top(fresh, "vercel", branch="gitmem/session/x") == [
            ("globex-website", "hosting", "current")
        ]
        assert top(fresh, "vercel") == []
        state = cache.current(fresh, "gitmem/session/x")
        built = fold.build(fresh, str(fresh.tip("gitmem/session/x")))
        assert fingerprint(state) == fingerprint(built)
    # no cache file of its own: sessions would leave one each behind
    assert sorted(p.name for p in (memory.git_dir / "gitmem").glob("search-*")) == [
        "search-main.marshal"
    ]


# -- bad queries ----------------------------------------------------------------------

BAD = [
    ("", "query must not be empty"),
    ("   \t ", "query must not be empty"),
    ("x" * 131072, "query is 131072 characters; at most 1000"),
    ("budget\x00--output=/tmp/x", "query contains control characters"),
    ("budget\x1b[2J", "query contains control characters"),
]


@pytest.mark.parametrize(("query", "message"), BAD)
def test_bad_queries_are_clear_errors(memory: MemoryRepo, query: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message.replace("[", r"\[")):
        search(memory, query)
    res = MemoryTools(memory).call("search_history", {"query": query})
    assert res.is_error and message in res.text and "\n" not in res.text


def test_a_query_that_looks_like_git_options_is_only_words(
    memory: MemoryRepo, tmp_path: Path
) -> None:
    out = tmp_path / "pwned"
    res = MemoryTools(memory).call("search_history", {"query": f"--output={out} --all budget"})
    assert not res.is_error and "budget" in res.text
    assert not out.exists()


def test_bad_queries_through_the_chat_tool_path(memory: MemoryRepo) -> None:
    clock = ManualClock(1_000_000.0)
    # A model's tool call is bounded by its max_tokens: an over-long query of 5,000
    # characters stands for the 128 KiB one here (the other paths send that one).
    bad = [
        (q, m) if len(q) < 2000 else ("budget " * 720, "query is 5040 characters") for q, m in BAD
    ]
    calls = [("search_history", {"query": q}) for q, _ in bad]
    model = QueueModel(
        [Reply.tool_use(n, i, id=f"toolu_{k}") for k, (n, i) in enumerate(calls)]
        + [Reply.text("done")]
    )
    with FakeAnthropicServer(RuleModel(), clock=clock) as api:
        api.model = model
        sdk = anthropic.Anthropic(api_key="test", base_url=api.base_url, max_retries=0)
        try:
            out: list[str] = []

            def lines() -> Iterator[str]:
                clock.advance(10)
                yield "search for me"

            run_chat(memory, lines(), client=sdk, write=out.append, warn=out.append, clock=clock)
        finally:
            sdk.close()
        results = [
            b
            for r in api.requests
            if r.path.endswith("/v1/messages") and r.status == 200
            for m in r.body["messages"][-1:]
            if isinstance(m["content"], list)
            for b in m["content"]
            if b["type"] == "tool_result"
        ]
    assert len(results) == len(bad), out
    for block, (_, message) in zip(results, bad, strict=True):
        assert block.get("is_error") and message in block["content"]


def test_bad_queries_through_mcp(memory: MemoryRepo, client: Path, tmp_path: Path) -> None:
    seen: list[types.CallToolResult] = []
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from gitmem.cli import main; main()", "-C", str(client), "mcp"],
        env=dict(os.environ),
        cwd=str(client),
    )

    async def main() -> None:
        with open(tmp_path / "mcp.err", "w") as err:
            async with (
                stdio_client(params, errlog=err) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                for q, _ in BAD:
                    seen.append(await session.call_tool("search_history", {"query": q}))
                seen.append(await session.call_tool("search_history", {"query": "globex cost"}))

    anyio.run(main)
    for result, (_, message) in zip(seen, BAD, strict=False):
        (block,) = result.content
        assert isinstance(block, types.TextContent)
        assert result.is_error and message in block.text
    (block,) = seen[-1].content
    assert isinstance(block, types.TextContent)
    assert not seen[-1].is_error and block.text.startswith("[current globex-website § budget")


def test_a_new_edit_is_read_with_the_card_it_changed_and_its_trailers(
    memory: MemoryRepo,
) -> None:
    base = memory.tip("main")
    assert base is not None
    write_card(memory, "initech-crm", "$25k", "$30k", IndexEntry.make("budget", ["budget"], "$30k"))
    (commit,) = fold.iter_commits(memory, f"{base}..main")
    assert commit.parent == base and commit.sha == memory.tip("main")
    assert [c.path for c in commit.changes] == ["cards/initech-crm.md"]
    assert commit.trailers["Gitmem-Summary"] == "$30k"


def test_the_rules_and_the_tool_teach_searching_well() -> None:
    from gitmem.agent.prompt import rules_text
    from gitmem.agent.tools import TOOLS

    rules = rules_text()
    assert "## Searching well" in rules
    assert "client or project name and the topic word" in " ".join(rules.split())
    assert "instead of searching" in rules  # the index first, when it points to the section
    (tool,) = [t for t in TOOLS if t["name"] == "search_history"]
    assert "index does not already point to the section" in tool["description"]
    assert "client or project name and the topic word" in tool["description"]
    assert "current or past" in tool["description"]
