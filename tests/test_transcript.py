"""Layer C's messages: whatever a crash left in the transcript, the API accepts them."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gitmem.fakeapi.validate import validate_messages_request
from gitmem.memory.transcript import INTERRUPTED, Transcript

ids = st.sampled_from(["t1", "t2", "t3"])
block = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.sampled_from(["hi", "more", "", " \n"])),
    st.builds(
        lambda i: {"type": "tool_use", "id": i, "name": "search_history", "input": {"query": "x"}},
        ids,
    ),
    st.builds(
        lambda i, e: {
            "type": "tool_result",
            "tool_use_id": i,
            "content": "r",
            **({"is_error": True} if e else {}),
        },
        ids,
        st.booleans(),
    ),
)
Record = tuple[str, list[dict[str, Any]]]
record: st.SearchStrategy[Record] = st.one_of(
    st.tuples(st.sampled_from(["user", "assistant"]), st.lists(block, max_size=4)),
    st.just(("synthesis", [])),
    st.just(("torn", [])),
)


def load(path: Path, records: list[tuple[str, list[dict[str, Any]]]], budget: int) -> Transcript:
    tr = Transcript(path, budget)
    for role, content in records:
        if role == "synthesis":
            tr.add_synthesis(tr.turns())
        elif role == "torn":  # a crash in the middle of writing a line
            with open(path, "a") as fh:
                fh.write('{"type": "message", "role": "us')
            tr = Transcript(path, budget)
        else:
            tr.add_message(role, content)
    return Transcript(path, budget)  # as a resumed session reads it


def valid(messages: list[dict[str, Any]]) -> None:
    validate_messages_request({"model": "m", "max_tokens": 1, "messages": messages})


@settings(max_examples=300, deadline=None)
@given(st.lists(record, max_size=12), st.sampled_from([1, 20000]))
def test_any_transcript_gives_messages_the_api_accepts(
    records: list[tuple[str, list[dict[str, Any]]]], budget: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tr = load(Path(tmp) / "s.jsonl", records, budget)
        messages = tr.messages()
        if messages:
            valid(messages)
        last = tr.messages_records()[-1:] or [{}]
        calls = [b["id"] for b in last[0].get("content", []) if b.get("type") == "tool_use"]
        assert tr.repair() == (last[0].get("role") == "assistant" and bool(calls))
        if calls:
            assert tr.pending()
            again = Transcript(tr.path, budget)  # the repair is on disk
            assert again.messages() == tr.messages() and not again.repair()
        if tr.messages():
            valid(tr.messages())


def well_formed(turns: list[list[list[str]]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """A session as the agent writes it: a question, rounds of calls and results, an answer."""
    out: list[tuple[str, list[dict[str, Any]]]] = []
    for n, rounds in enumerate(turns):
        out.append(("user", [{"type": "text", "text": f"question {n}"}]))
        for k, calls in enumerate(rounds):
            uses = [
                {"type": "tool_use", "id": f"t{n}-{k}-{c}", "name": "x", "input": {}} for c in calls
            ]
            out.append(("assistant", [{"type": "text", "text": "looking"}, *uses]))
            out.append(
                (
                    "user",
                    [{"type": "tool_result", "tool_use_id": u["id"], "content": "r"} for u in uses],
                )
            )
        out.append(("assistant", [{"type": "text", "text": f"answer {n}"}]))
    return out


@settings(deadline=None)  # each example writes and reads a file: slow on a loaded machine
@given(
    st.lists(
        st.lists(st.lists(st.sampled_from("abc"), min_size=1, max_size=2, unique=True), max_size=3),
        min_size=1,
        max_size=4,
    )
)
def test_a_well_formed_transcript_is_sent_unchanged(turns: list[list[list[str]]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        records = well_formed(turns)
        tr = load(Path(tmp) / "s.jsonl", records, 20000)
        assert tr.messages() == [{"role": r, "content": c} for r, c in records]
        assert not tr.repair()


def test_a_call_left_unanswered_is_answered_as_interrupted(tmp_path: Path) -> None:
    tr = Transcript(tmp_path / "s.jsonl")
    tr.add_message("user", [{"type": "text", "text": "remember this"}])
    use = {"type": "tool_use", "id": "t1", "name": "write_memory_card", "input": {}}
    tr.add_message("assistant", [use])
    with open(tr.path, "a") as fh:
        fh.write('{"type": "message", "role": "user", "content": [{"type": "tool_res')  # torn
    resumed = Transcript(tr.path)
    assert not resumed.pending() and resumed.repair() and resumed.pending()
    resumed.add_message("assistant", [{"type": "text", "text": "checked"}])
    final = Transcript(tr.path)
    assert [r["role"] for r in final.messages_records()] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    answer = final.messages()[2]["content"]
    assert answer == [
        {"type": "tool_result", "tool_use_id": "t1", "content": INTERRUPTED, "is_error": True}
    ]
