"""`gitmem consolidate`: a scripted model (the fake Messages API, the real SDK) proposes a
compaction; it always waits for review, the review shows tokens before and after, and
nothing lands without `gitmem review --accept`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gitmem.fakeapi import FakeAnthropicServer, QueueModel, Reply

from helpers import git, gm, snapshot, write

DUP = "The client wants the launch moved to the spring because the venue is booked until March."


def state(client: Path) -> dict[str, str]:
    """Everything but the derived index caches under .git/gitmem."""
    return {k: v for k, v in snapshot(client).items() if not k.startswith(".git/gitmem/index-")}


@pytest.fixture
def memory(client: Path) -> Path:
    write(client, "beta", "", f"## Plan\n{DUP}\n", "plan", "Launch moved to spring")
    write(client, "gamma", "", f"## Launch\n{DUP}\nAnn agrees.\n", "launch", "Launch in spring")
    write(client, "acme", "", "## People\nDana is PM\n", "people", "Dana is PM")
    card = client / "cards/acme.md"
    card.write_text(card.read_text().replace("Dana is PM", "Bob replaced Dana as PM"))
    git(client, "commit", "-qam", "Bob replaced Dana")
    return client


def scripted() -> list[Reply]:
    merge = {
        "project": "gamma",
        "old_text": DUP + "\n",
        "new_text": "Same plan as beta § plan.\n",
        "index_entry": {
            "section_id": "launch",
            "keywords": ["launch"],
            "summary": "Ann agrees to the spring launch (plan in beta)",
        },
    }
    refresh = {
        "project": "acme",
        "old_text": "Bob replaced Dana as PM",
        "new_text": "Bob replaced Dana as PM",
        "index_entry": {"section_id": "people", "keywords": ["pm"], "summary": "Bob is PM"},
    }
    return [
        Reply.tool_use(
            "read_memory_card", {"project": "gamma", "section_id": "launch"}, id="toolu_1"
        ),
        Reply.tool_use("write_memory_card", merge, id="toolu_2"),
        Reply.tool_use("write_memory_card", refresh, id="toolu_3"),
        Reply.text("Merged the launch plan into beta and refreshed the PM entry."),
    ]


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeAnthropicServer, QueueModel]]:
    model = QueueModel(scripted())
    with FakeAnthropicServer(model) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        yield server, model


def test_a_consolidation_waits_for_review_and_shows_tokens(
    memory: Path, api: tuple[FakeAnthropicServer, QueueModel]
) -> None:
    _, model = api
    assert 'review = "auto"' in (memory / "gitmem.toml").read_text()  # the policy says auto
    main = git(memory, "rev-parse", "main").strip()
    cards_before = {p.name: p.read_text() for p in (memory / "cards").iterdir()}
    res = gm("-C", str(memory), "consolidate", "--json")
    assert res.code == 0, res.err
    done = json.loads(res.out)
    sid = done["session"]
    assert done["pending"] is True and done["edits"] == 2 and sid.endswith("-consolidate")
    # nothing landed: main's cards are as they were (only the usage lines were committed)
    assert git(memory, "diff", "--stat", main, "main", "--", "cards") == ""
    assert git(memory, "log", "--format=%s", f"{main}..main").split("\n")[0].startswith("usage:")
    assert {p.name: p.read_text() for p in (memory / "cards").iterdir()} == cards_before
    # the model was told the work: the duplicate and the stale entry
    task = model.seen[0]["messages"][0]["content"][0]["text"]
    assert "beta § plan and gamma § launch" in task and "acme § people: Dana is PM" in task

    shown = gm("-C", str(memory), "review", sid)
    assert shown.code == 0, shown.err
    assert "Tokens before -> after (estimated" in shown.out
    assert "gamma" in shown.out.split("Tokens before")[1] and "index (I block)" in shown.out
    data = json.loads(gm("-C", str(memory), "review", sid, "--json").out)
    tokens = data["tokens"]
    assert tokens["cards"]["gamma"]["after"] < tokens["cards"]["gamma"]["before"]
    assert tokens["cards"]["acme"]["after"] == tokens["cards"]["acme"]["before"]
    assert set(tokens["index"]) == {"before", "after"}

    accepted = gm("-C", str(memory), "review", sid, "--accept")
    assert accepted.code == 0, accepted.err
    assert "Same plan as beta § plan." in (memory / "cards/gamma.md").read_text()
    index = gm("-C", str(memory), "index").out
    assert "- people: Bob is PM [pm]" in index and "(stale)" not in index


def test_card_scope_refuses_writes_elsewhere_and_a_session_without_edits_leaves_nothing(
    memory: Path, api: tuple[FakeAnthropicServer, QueueModel]
) -> None:
    _, model = api
    before = git(memory, "for-each-ref", "refs/heads")
    res = gm("-C", str(memory), "consolidate", "--card", "acme", "--json")
    assert res.code == 0, res.err
    results = [
        b
        for r in model.seen
        for m in r["messages"][-1:]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert results[1]["is_error"] is True and "may only edit acme" in str(results[1]["content"])
    done = json.loads(res.out)
    assert done["edits"] == 1  # only the acme refresh
    task: Any = model.seen[0]["messages"][0]["content"][0]["text"]
    assert "in the card acme" in task and "- beta:" not in task
    assert git(memory, "for-each-ref", "refs/heads") != before  # its branch waits
    gm("-C", str(memory), "review", done["session"], "--reject")


@pytest.mark.parametrize(
    "args,code,words",
    [
        (["--card", "nope"], 3, "no card 'nope'"),
        (["--card", "../x"], 2, "invalid"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(
    memory: Path,
    api: tuple[FakeAnthropicServer, QueueModel],
    args: list[str],
    code: int,
    words: str,
) -> None:
    before = state(memory)
    res = gm("-C", str(memory), "consolidate", *args)
    assert res.code == code and res.err.count("\n") == 1 and words in res.err
    assert state(memory) == before


def test_without_a_key_it_says_so(memory: Path) -> None:
    before = state(memory)
    res = gm("-C", str(memory), "consolidate")
    assert res.code == 6 and "ANTHROPIC_API_KEY" in res.err
    assert state(memory) == before
