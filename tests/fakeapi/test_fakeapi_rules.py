"""RuleModel: the deterministic simulated memory agent."""

from __future__ import annotations

import json
from typing import Any

import anthropic

from fakeapi.fakeapi_support import MODEL
from gitmem.fakeapi import FakeAnthropicServer, Reply, RuleModel, TextBlock, ToolUseBlock
from gitmem.fakeapi.rules import keywords, slug, summary

MEMORY_TOOLS: list[Any] = [
    {"name": name, "description": name, "input_schema": {"type": "object"}}
    for name in ("read_memory_card", "write_memory_card", "search_history")
]


def ask(text: str, *, tools: list[dict[str, Any]] | None = None, system: Any = None) -> Reply:
    request: dict[str, Any] = {
        "model": MODEL,
        "max_tokens": 500,
        "messages": [{"role": "user", "content": text}],
        "tools": MEMORY_TOOLS if tools is None else tools,
    }
    if system is not None:
        request["system"] = system
    return RuleModel()(request)


def only_tool_use(reply: Reply) -> ToolUseBlock:
    assert reply.stop_reason == "tool_use"
    assert len(reply.content) == 1
    block = reply.content[0]
    assert isinstance(block, ToolUseBlock)
    assert block.id.startswith("toolu_")
    return block


def write_input(text: str) -> dict[str, Any]:
    """The input of the one ``write_memory_card`` call the model answers ``text`` with."""
    call = only_tool_use(ask(text))
    assert call.name == "write_memory_card"
    return call.input


def only_text(reply: Reply) -> str:
    assert reply.stop_reason == "end_turn"
    assert len(reply.content) == 1 and isinstance(reply.content[0], TextBlock)
    return reply.content[0].text


def test_helpers() -> None:
    assert slug("  Build & Release Steps! ") == "build-release-steps"
    assert keywords("Use uv, not pip; uv sync installs everything quickly") == [
        "everything",
        "installs",
        "quickly",
        "sync",
    ]
    assert summary("short") == "short"
    cut = summary("word " * 40)
    assert len(cut) == 80 and cut.endswith("…")


def test_remember_appends_a_section() -> None:
    assert write_input("Remember gitmem Build Steps: run uv sync, then pytest -q") == {
        "project": "gitmem",
        "old_text": "",
        "new_text": "\n## Build Steps\nrun uv sync, then pytest -q\n",
        "index_entry": {
            "section_id": "build-steps",
            "keywords": ["pytest", "sync", "then", "run"],
            "summary": "run uv sync, then pytest -q",
        },
    }


def test_update_replaces_text() -> None:
    assert write_input("update gitmem build-steps: pytest -q => pytest -x") == {
        "project": "gitmem",
        "old_text": "pytest -q",
        "new_text": "pytest -x",
        "index_entry": {
            "section_id": "build-steps",
            "keywords": ["pytest", "x"],
            "summary": "pytest -x",
        },
    }


INDEX = (
    "<memory-index>\nLong-term memory cards (layer E).\n\n"
    "## acme-website\n"
    "- budget: Q3 budget is 30k, agreed with Dana [budget, q3]\n"
    "- next-steps: Send the revised mockups to Dana by Friday [mockups, friday]\n\n"
    "## beta: Beta launch\n"
    "- goals: Ship v2 by March [roadmap]\n"
    "- notes: (unindexed) Notes\n"
    "</memory-index>\n"
)


def test_the_index_sent_is_read_back() -> None:
    from gitmem.fakeapi.recall import parse_index

    lines = parse_index("rules\n" + INDEX)
    assert [(x.project, x.section_id, x.summary, x.keywords) for x in lines] == [
        ("acme-website", "budget", "Q3 budget is 30k, agreed with Dana", ("budget", "q3")),
        (
            "acme-website",
            "next-steps",
            "Send the revised mockups to Dana by Friday",
            ("mockups", "friday"),
        ),
        ("beta", "goals", "Ship v2 by March", ("roadmap",)),
        ("beta", "notes", "Notes", ()),
    ]
    assert parse_index("no index here") == []


def test_an_update_summary_says_what_the_section_now_holds() -> None:
    system = [{"type": "text", "text": INDEX}]
    call = only_tool_use(ask("update acme-website budget: 30k => 40k", system=system))
    assert call.input["index_entry"]["summary"] == "Q3 budget is 40k, agreed with Dana"


def _reads(question: str) -> list[dict[str, Any]]:
    reply = ask(question, system=[{"type": "text", "text": INDEX}])
    assert reply.stop_reason == "tool_use"
    assert isinstance(reply.content[0], TextBlock)
    calls = [b for b in reply.content if isinstance(b, ToolUseBlock)]
    assert all(c.name == "read_memory_card" for c in calls)
    assert len({c.id for c in calls}) == len(calls)
    return [c.input for c in calls]


def test_a_question_reads_the_sections_the_index_points_to() -> None:
    assert _reads("What do we know about Acme?") == [
        {"project": "acme-website", "section_id": "budget"},
        {"project": "acme-website", "section_id": "next-steps"},
    ]
    assert _reads("When are the mockups due?") == [
        {"project": "acme-website", "section_id": "next-steps"}
    ]
    assert _reads("What is the beta roadmap?") == [{"project": "beta", "section_id": "goals"}]
    nothing = only_text(ask("Who is Zed?", system=[{"type": "text", "text": INDEX}]))
    assert nothing.startswith("Memory has nothing on that yet")


def test_the_answer_cites_what_was_read() -> None:
    request = {
        "messages": [
            {"role": "user", "content": "What do we know about Acme?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "reading"},
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "read_memory_card",
                        "input": {"project": "acme-website", "section_id": "budget"},
                    },
                    {
                        "type": "tool_use",
                        "id": "t2",
                        "name": "read_memory_card",
                        "input": {"project": "acme-website", "section_id": "next-steps"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": "## Budget\nQ3 budget is 40k, agreed with Dana\n",
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "t2",
                        "content": "## Next steps\nSend the mockups by Friday\n",
                    },
                ],
            },
        ]
    }
    assert only_text(RuleModel()(request)) == (
        "From memory:\n\n"
        "- **Budget**: Q3 budget is 40k, agreed with Dana (acme-website § budget)\n"
        "- **Next steps**: Send the mockups by Friday (acme-website § next-steps)"
    )


def test_recall_and_search() -> None:
    assert only_tool_use(ask("recall gitmem")).input == {"project": "gitmem"}
    read = only_tool_use(ask("RECALL gitmem build-steps"))
    assert (read.name, read.input) == (
        "read_memory_card",
        {"project": "gitmem", "section_id": "build-steps"},
    )
    search = only_tool_use(ask("search flaky test fix"))
    assert (search.name, search.input) == ("search_history", {"query": "flaky test fix"})


def test_missing_tool_is_explained() -> None:
    assert only_text(ask("recall gitmem", tools=[])) == (
        "I can't do that: the tool read_memory_card is not available."
    )


def test_synthesis_by_command_or_marker() -> None:
    expected = "## Synthesis\n\n- alpha\n- beta\n- gamma\n"
    assert only_text(ask("summarize\nalpha\n\nbeta\ngamma\ndelta")) == expected
    assert only_text(ask("alpha\nbeta\ngamma", system="<<synthesis>> merge notes")) == expected
    assert only_text(ask("<<synthesis>>\n- alpha\n- beta\n- gamma")) == expected


def test_anything_else_is_acknowledged() -> None:
    system = [{"type": "text", "text": "rules"}, {"type": "text", "text": "index"}]
    assert only_text(ask("hello there", system=system)) == (
        'Noted: "hello there" (I saw 2 system blocks and 3 tools.)'
    )


def _after_tool(name: str, result: dict[str, Any]) -> str:
    request = {
        "messages": [
            {"role": "user", "content": "x"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": name, "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", **result}]},
        ]
    }
    return only_text(RuleModel()(request))


def test_reports_tool_results() -> None:
    assert _after_tool("write_memory_card", {"content": "ok"}) == "Saved."
    read = {"content": [{"type": "text", "text": "\n## Build Steps\nrun uv sync\n"}]}
    assert _after_tool("read_memory_card", read) == "## Build Steps\nrun uv sync"
    failed = {"content": "old_text not found\nmore detail", "is_error": True}
    assert _after_tool("write_memory_card", failed) == "That failed: old_text not found"


def test_byte_deterministic_across_servers() -> None:
    """Two independent servers give byte-identical responses to the same session, but
    for the message ids, which are unique across servers as the real API's are."""
    transcripts: list[str] = []
    ids: list[str] = []
    for _ in range(2):
        with FakeAnthropicServer(RuleModel()) as server:
            sdk = anthropic.Anthropic(api_key="test", base_url=server.base_url, max_retries=0)
            messages: list[Any] = [
                {"role": "user", "content": "remember demo Notes: keep it simple"}
            ]
            first = sdk.messages.create(
                model=MODEL, max_tokens=300, messages=messages, tools=MEMORY_TOOLS
            )
            call = first.content[0]
            assert call.type == "tool_use"
            messages += [
                {"role": "assistant", "content": first.content},
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "ok"}],
                },
            ]
            second = sdk.messages.create(
                model=MODEL, max_tokens=300, messages=messages, tools=MEMORY_TOOLS
            )
            assert second.content[0].type == "text" and second.content[0].text == "Saved."
            sdk.close()
            responses = [dict(record.response or {}) for record in server.requests]
            ids += [str(response.pop("id")) for response in responses]
            transcripts.append(json.dumps(responses, sort_keys=True))
    assert transcripts[0] == transcripts[1]
    assert len(set(ids)) == len(ids) == 4
