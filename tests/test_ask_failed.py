"""A `gitmem ask` the model never answered leaves the repo as it was; one whose model did
something before failing keeps that, and says so and how to go on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gitmem.fakeapi import FakeAnthropicServer, QueueModel, Reply
from gitmem.fakeapi.errors import ApiError

from helpers import git, gm, snapshot


def memory(client: Path) -> dict[str, str]:
    """The repo's files but the index's token count, a cache of what the API counted."""
    files = snapshot(client)
    files.pop(".git/gitmem/index-tokens.json", None)
    return files


class Refusing:
    """Answers from a queue of replies, then refuses every request (400)."""

    def __init__(self, *replies: Reply | str) -> None:
        self.queue = QueueModel(replies)

    def __call__(self, request: dict[str, Any]) -> Reply:
        if not self.queue.remaining:
            raise ApiError(400, "this request is refused")
        return self.queue(request)


def serve(monkeypatch: pytest.MonkeyPatch, model: Refusing) -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(model) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        yield server


@pytest.fixture
def refused(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    yield from serve(monkeypatch, Refusing())


def test_a_refused_ask_leaves_the_repo_as_it_was(seeded: Path, refused: object) -> None:
    before = memory(seeded)
    res = gm("-C", str(seeded), "ask", "what is the budget?")
    assert res.code == 7, res.err
    last = res.err.splitlines()[-1]
    assert last.startswith("gitmem: error: no answer from the model API")
    assert "nothing was kept: run the same `gitmem ask MESSAGE` again" in last
    assert memory(seeded) == before
    assert git(seeded, "for-each-ref", "refs/heads/gitmem", "refs/gitmem/archive") == ""


def test_a_refused_ask_json_says_nothing_was_kept(seeded: Path, refused: object) -> None:
    res = gm("-C", str(seeded), "ask", "--json", "hello")
    assert res.code == 7
    doc = json.loads(res.out)
    assert doc["finish"]["dropped"] is True and doc["failed_turns"] == 1
    assert "nothing was kept" in doc["error"]["message"]


def test_a_refused_ask_in_a_resumed_session_keeps_the_session_as_it_was(
    seeded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answered = gm("-C", str(seeded), "ask", "--simulated", "remember acme Owner: Dana")
    assert answered.code == 0, answered.err
    sid = git(seeded, "for-each-ref", "--format=%(refname:lstrip=3)", "refs/gitmem/archive")
    sid = sid.strip()
    before = memory(seeded)
    with FakeAnthropicServer(Refusing()) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        res = gm("-C", str(seeded), "ask", "--resume", sid, "and the budget?")
    assert res.code == 7, res.err
    assert "nothing was kept" in res.err.splitlines()[-1]
    assert memory(seeded) == before  # no second copy of the message to answer later


def test_an_ask_that_failed_after_an_edit_keeps_it_and_says_so(
    seeded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    edit = {
        "project": "acme",
        "old_text": "Budget: 30k",
        "new_text": "Budget: 40k",
        "index_entry": {"section_id": "budget", "keywords": ["budget"], "summary": "40k"},
    }
    model = Refusing(Reply.tool_use("write_memory_card", edit, id="toolu_1"))
    with FakeAnthropicServer(model) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        res = gm("-C", str(seeded), "ask", "the budget is 40k now")
    assert res.code == 7, res.err
    assert "Budget: 40k" in git(seeded, "show", "main:cards/acme.md")
    last = res.err.splitlines()[-1]
    assert "your message is kept in session" in last and "`gitmem chat --resume " in last
