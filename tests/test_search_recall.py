"""Recall an agent can act on: turns by number, dates, memory-learnt related words,
opening a hit, and what memory said on a past day."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import anthropic
import pytest

from gitmem.agent.chat import run_chat
from gitmem.agent.tools import hit_line
from gitmem.errors import ConfigError, InvalidInput, NotFound
from gitmem.fakeapi import FakeAnthropicServer, ManualClock, Reply, RuleModel
from gitmem.features.edit import write_card
from gitmem.features.session_live import transcript_file
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.review.session_branches import finish_session, start_session
from gitmem.search import neighbours
from gitmem.search.dates import parse
from gitmem.search.passage import open_hit
from gitmem.search.ranked import search
from gitmem.search.terms import query_terms, terms, words

from helpers import git, gm


def _message(at: str, role: str, turn: int, text: str) -> str:
    content = [{"type": "text", "text": text}]
    rec = {"type": "message", "at": at, "role": role, "turn": turn}
    return json.dumps({**rec, "content": content, "text": text})


def _tool_call(at: str, turn: int) -> str:
    block = {"type": "tool_use", "id": "t1", "name": "search_history", "input": {"query": "x"}}
    rec = {"type": "message", "at": at, "role": "assistant", "turn": turn}
    return json.dumps({**rec, "content": [block], "text": '[search_history {"query": "x"}]'})


@pytest.fixture
def chats(repo: MemoryRepo, client: Path) -> Iterator[MemoryRepo]:
    lines = [
        _message(
            "2023-06-10T18:00:00Z", "user", 1, "Maya: We went camping at Big Sur last weekend."
        ),
        _tool_call("2023-06-10T18:00:10Z", 1),
        _message("2023-06-10T18:00:20Z", "assistant", 1, "Jon: How was it out there?"),
        _message(
            "2023-06-10T18:01:00Z",
            "user",
            2,
            "Maya: Freezing at night, but we sat around the fire until two.",
        ),
        _message("2023-06-10T18:02:00Z", "assistant", 2, "Jon: Sounds lovely."),
        _message("2023-06-10T18:03:00Z", "user", 3, "Maya: I chose the blue tent in the end."),
    ]
    other = [
        _message("2023-09-02T10:00:00Z", "user", 1, "Maya: Went camping again at the lake."),
        _message("2023-09-02T10:00:30Z", "assistant", 1, "Jon: Nice, same tent?"),
    ]
    for sid, recs in (("20230610-180000-aa01", lines), ("20230902-100000-aa02", other)):
        (client / "sessions" / f"{sid}.jsonl").write_text("".join(r + "\n" for r in recs))
        git(client, "add", f"sessions/{sid}.jsonl")
        git(client, "commit", "-qm", f"session {sid}")
    yield repo


def test_a_turn_hit_names_session_turn_role_and_date_not_a_line(chats: MemoryRepo) -> None:
    hit = search(chats, "blue tent").hits[0]
    # the fourth message record and the sixth line: the transcript's turn 3
    assert (hit.kind, hit.session, hit.turn, hit.role) == (
        "transcript",
        "20230610-180000-aa01",
        3,
        "user",
    )
    assert hit.ref == "20230610-180000-aa01#3"
    assert hit.date.startswith("2023-06-10")
    assert hit_line(hit).startswith("[transcript 20230610-180000-aa01#3 user, 2023-06-10]")
    # a tool call alone is not a turn: searching its words finds nothing of it
    assert all("search_history" not in h.snippet for h in search(chats, "search_history query"))


def test_a_reply_is_found_by_the_words_of_the_turn_it_answers(chats: MemoryRepo) -> None:
    refs = [(h.ref, h.role) for h in search(chats, "how was the camping at big sur", 5)]
    assert ("20230610-180000-aa01#2", "user") in refs  # "Freezing at night..." says neither word


def test_dates_in_a_query_are_matched_against_when_things_were_said(chats: MemoryRepo) -> None:
    assert search(chats, "camping in September").hits[0].session == "20230902-100000-aa02"
    assert search(chats, "camping in June").hits[0].session == "20230610-180000-aa01"
    assert search(chats, "camping in 2023").hits  # a year is a date, not a word that must match


def test_date_words_parse_to_conditions() -> None:
    today = date(2026, 12, 2)

    def when(q: str) -> object:
        return parse(words(q), q, today)[0]

    assert when("what did she do in June?").months == {6}  # type: ignore[attr-defined]
    got = when("before March 2024")
    assert (got.after, got.before) == ("", "2024-03-01")  # type: ignore[attr-defined]
    got = when("since 2025")
    assert (got.after, got.before) == ("2025-01-01", "")  # type: ignore[attr-defined]
    got = when("what did we decide last week")
    assert (got.after, got.before) == ("2026-11-25", "2026-12-02")  # type: ignore[attr-defined]
    assert when("what may happen") is None  # "may" the verb
    assert when("on Tuesdays").weekdays == {1}  # type: ignore[attr-defined]
    # "before" at a date bounds it; alone it still asks for a past value
    assert query_terms("the budget before March 2024").past is False
    assert query_terms("the budget before").past is True


def test_irregular_verbs_meet_their_base_form() -> None:
    assert terms("I chose it and bought two") == terms("I choose it and buy two")
    assert terms("she taught me") == terms("she teaches me")


def test_opening_a_hit_gives_the_whole_turn_and_its_neighbours(chats: MemoryRepo) -> None:
    hit = search(chats, "freezing fire").hits[0]
    passage = open_hit(chats, hit.ref)
    assert "Freezing at night, but we sat around the fire until two." in passage.text
    assert "Jon: Sounds lovely." in passage.text  # the reply in the same turn
    assert "Jon: How was it out there?" in passage.text  # the turn before
    assert "I chose the blue tent" in passage.text  # the turn after
    assert "search_history" not in passage.text
    with pytest.raises(NotFound, match="turns 1 to 3"):
        open_hit(chats, "20230610-180000-aa01#9")
    with pytest.raises(InvalidInput, match="not a search hit's ref"):
        open_hit(chats, "../etc/passwd")


def _entry(section: str, kws: list[str], summary: str) -> IndexEntry:
    return IndexEntry.make(section, kws, summary)


def test_words_are_related_by_the_index_entries_memory_holds(repo: MemoryRepo) -> None:
    # three cards label their money section differently; the entries tie them together
    for card, heading, text in (
        ("alpha", "Money", "Approved spend is 40k."),
        ("beta", "Budget", "A ceiling of 25k, paid in three parts."),
        ("gamma", "Budget and fees", "Fixed price 30k."),
    ):
        write_card(
            repo,
            card,
            "",
            f"# {card}\n\n## {heading}\n{text}\n",
            _entry(heading.lower().replace(" ", "-"), ["budget", "cost"], f"{card} budget"),
        )
        write_card(
            repo,
            card,
            "",
            "\n## Hosting\nRuns on a VPS.\n",
            _entry("hosting", ["hosting"], "a VPS"),
        )
    # beta's card never says "money": alpha's heading does, and the entries relate it to
    # budget and cost, which beta's budget section carries
    found = [(h.card, h.section) for h in search(repo, "how much money does beta have", 3)]
    assert found.index(("beta", "budget")) < found.index(("beta", "hosting"))


def test_one_section_is_no_relation_however_many_ways_it_holds_the_word(
    repo: MemoryRepo,
) -> None:
    write_card(
        repo,
        "acme",
        "",
        "# Acme\n\n## Budget\nBudget: 40k for the year.\n",
        _entry("budget", ["budget"], "Budget is 40k"),
    )
    write_card(
        repo,
        "acme",
        "",
        "\n## Risks\nThe budget may not cover the launch.\n",
        _entry("risks", ["risks", "budget", "launch"], "budget may not cover the launch"),
    )
    # "budget" labels § risks and is in its text: one section, so no word is related to
    # it, and the section about the budget is the first hit
    best = [(h.card, h.section) for h in search(repo, "budget", 3)]
    assert best[0] == ("acme", "budget")


def test_as_of_answers_what_memory_said_on_that_day(repo: MemoryRepo) -> None:
    env = dict(os.environ)
    try:
        os.environ["GIT_AUTHOR_DATE"] = os.environ["GIT_COMMITTER_DATE"] = "2025-03-01T10:00:00Z"
        write_card(
            repo,
            "acme",
            "",
            "# Acme\n\n## Host\nRuns on Heroku.\n",
            _entry("host", ["hosting"], "Heroku"),
        )
        os.environ["GIT_AUTHOR_DATE"] = os.environ["GIT_COMMITTER_DATE"] = "2025-09-01T10:00:00Z"
        write_card(
            repo,
            "acme",
            "Runs on Heroku.",
            "Runs on Hetzner.",
            _entry("host", ["hosting"], "Hetzner"),
        )
    finally:
        os.environ.clear()
        os.environ.update(env)
    (now,) = search(repo, "acme hosting", 1).hits
    assert "Hetzner" in now.snippet
    (then,) = search(repo, "acme hosting", 1, as_of="2025-05-01").hits
    assert ("Heroku" in then.snippet, then.state) == (True, "past")
    assert "Runs on Heroku." in open_hit(repo, then.ref).text  # a past value opens as it was
    assert search(repo, "acme hosting", as_of="2024-01-01").hits == ()  # before it was written
    with pytest.raises(InvalidInput, match="YYYY-MM-DD"):
        search(repo, "acme", as_of="last tuesday")


def test_a_session_searches_opens_the_hit_and_answers_from_it(chats: MemoryRepo) -> None:
    """Through the real SDK and the fake Messages API, as a chat turn runs: the model
    searches, opens the first hit by its ref in one call, and answers from the passage."""

    def results(request: dict[str, Any]) -> list[str]:
        last = request["messages"][-1]["content"]
        blocks = last if isinstance(last, list) else []
        return [str(b["content"]) for b in blocks if b.get("type") == "tool_result"]

    def model(request: dict[str, Any]) -> Reply:
        got = results(request)
        if not got:
            return Reply.tool_use("search_history", {"query": "camping trip night"}, id="toolu_1")
        if got[0].startswith("[transcript"):
            ref = got[0].split()[1]
            return Reply.tool_use("read_memory_card", {"ref": ref}, id="toolu_2")
        line = next(ln for ln in got[0].splitlines() if "Freezing" in ln)
        return Reply.text(f"From the session: {line.strip()}")

    clock = ManualClock(1_000_000.0)
    with FakeAnthropicServer(RuleModel(), clock=clock) as api:
        api.model = model
        sdk = anthropic.Anthropic(api_key="test", base_url=api.base_url, max_retries=0)
        out: list[str] = []
        try:
            run_chat(
                chats,
                iter(["how was the camping?"]),
                client=sdk,
                write=out.append,
                warn=out.append,
                clock=clock,
            )
        finally:
            sdk.close()
        calls = [
            (b["name"], b["input"])
            for r in api.requests
            if r.path.endswith("/v1/messages") and r.status == 200
            for m in r.body["messages"]
            if m["role"] == "assistant" and isinstance(m["content"], list)
            for b in m["content"]
            if b["type"] == "tool_use"
        ]
    first = search(chats, "camping trip night").hits[0]  # what the tool listed first
    assert first.session == "20230610-180000-aa01"
    assert calls[-1] == ("read_memory_card", {"ref": first.ref})  # opened by its ref, at once
    assert "From the session: Maya: Freezing at night" in "".join(out)  # the passage's turn


def test_gitmem_search_as_of_through_the_cli(repo: MemoryRepo, client: Path) -> None:
    env = dict(os.environ)
    try:
        for day, text in (("2025-03-01", "Runs on Heroku."), ("2025-09-01", "Runs on Hetzner.")):
            os.environ["GIT_AUTHOR_DATE"] = os.environ["GIT_COMMITTER_DATE"] = f"{day}T10:00:00Z"
            old = "Runs on Heroku." if "Hetzner" in text else ""
            new = text if old else f"# Acme\n\n## Host\n{text}\n"
            write_card(repo, "acme", old, new, _entry("host", ["hosting"], text))
    finally:
        os.environ.clear()
        os.environ.update(env)
    then = gm("-C", str(client), "search", "acme", "hosting", "--as-of", "2025-05-01")
    assert then.code == 0, then.err
    assert "Heroku" in then.out and "Hetzner" not in then.out
    assert "ref acme/host@" in then.out  # what opens the value as it was
    bad = gm("-C", str(client), "search", "acme", "--as-of", "May")
    assert bad.code == 2 and "YYYY-MM-DD" in bad.err


def test_gitmem_search_finds_turns_of_a_running_session(repo: MemoryRepo, client: Path) -> None:
    session = start_session(repo, "20261202-090000-bb01")
    live = transcript_file(repo, session.id)
    live.write_text(_message("2026-12-02T09:00:00Z", "user", 1, "the wombat budget is 12k") + "\n")
    got = gm("-C", str(client), "search", "wombat", "--json")
    assert got.code == 0, got.err
    (hit,) = json.loads(got.out)["hits"]
    assert (hit["kind"], hit["ref"]) == ("transcript", "20261202-090000-bb01#1")
    finish_session(repo, session, "auto")  # committed now: found once, from history
    again = json.loads(gm("-C", str(client), "search", "wombat", "--json").out)["hits"]
    assert [h["ref"] for h in again] == ["20261202-090000-bb01#1"]


def test_a_dated_query_finds_the_value_that_held_then(repo: MemoryRepo) -> None:
    env = dict(os.environ)
    try:
        os.environ["GIT_AUTHOR_DATE"] = os.environ["GIT_COMMITTER_DATE"] = "2026-06-10T10:00:00Z"
        new = "# Globex\n\n## Hosting\nRuns on AWS.\n"
        write_card(repo, "globex", "", new, _entry("hosting", ["hosting", "aws"], "AWS"))
        os.environ["GIT_AUTHOR_DATE"] = os.environ["GIT_COMMITTER_DATE"] = "2026-11-25T10:00:00Z"
        entry = _entry("hosting", ["hosting", "hetzner"], "Hetzner")
        write_card(repo, "globex", "Runs on AWS.", "Runs on Hetzner.", entry)
    finally:
        os.environ.clear()
        os.environ.update(env)
    found = [(h.state, h.snippet) for h in search(repo, "globex hosting in June", 5)]
    assert found[0] == ("past", "Hosting: Runs on AWS.")


def test_gitmem_show_opens_a_hit_by_its_ref(chats: MemoryRepo, client: Path) -> None:
    got = gm("-C", str(client), "show", "20230610-180000-aa01#2")
    assert got.code == 0, got.err
    assert "Freezing at night" in got.out and "Jon: Sounds lovely." in got.out
    bad = gm("-C", str(client), "show", "20230610-180000-aa01#9")
    assert bad.code == 3 and "turns 1 to 3" in bad.err
    assert gm("-C", str(client), "show", "../etc#1").code == 2


def _transcript(client: Path, sid: str, records: list[str]) -> None:
    (client / "sessions" / f"{sid}.jsonl").write_text("".join(r + "\n" for r in records))
    git(client, "add", f"sessions/{sid}.jsonl")
    git(client, "commit", "-qm", f"session {sid}")


def test_a_question_about_now_finds_what_was_said_last(repo: MemoryRepo, client: Path) -> None:
    _transcript(
        client,
        "20230110-090000-bb01",
        [_message("2023-01-10T09:00:00Z", "user", 1, "Maya: I drink green tea.")],
    )
    _transcript(
        client,
        "20240305-090000-bb02",
        [
            _message(
                "2024-03-05T09:00:00Z",
                "user",
                1,
                "Maya: I drink black coffee with a little oat milk, most mornings.",
            )
        ],
    )
    assert search(repo, "what does Maya drink these days?").hits[0].session == (
        "20240305-090000-bb02"
    )
    assert search(repo, "what does Maya drink currently?").hits[0].session == (
        "20240305-090000-bb02"
    )
    # not asked about now: the closer match comes first, whenever it was said
    assert search(repo, "what does Maya drink?").hits[0].session == "20230110-090000-bb01"


def test_one_hit_per_turn_and_speaker(repo: MemoryRepo, client: Path) -> None:
    _transcript(
        client,
        "20230301-120000-cc01",
        [
            _message("2023-03-01T12:00:00Z", "user", 1, "Maya: Any news on the kiln?"),
            _message("2023-03-01T12:00:10Z", "assistant", 1, "Jon: The kiln is fixed."),
            _message("2023-03-01T12:00:20Z", "assistant", 1, "Jon: The kiln is fixed, really."),
        ],
    )
    hits = [(h.ref, h.role) for h in search(repo, "kiln fixed", 10)]
    assert ("20230301-120000-cc01#1", "assistant") in hits
    assert len(hits) == len(set(hits))  # the reply's two messages open as one turn


def test_a_card_section_is_not_buried_under_many_short_turns(
    repo: MemoryRepo, client: Path
) -> None:
    studio = (
        "Maya rents a small studio above the bakery on Elm Street. The kiln sits in the "
        "back room beside the sink; it needs a dedicated circuit, so firing days are "
        "booked with the landlord a week ahead. Glazes are kept on the left shelf, clay "
        "in the bins under the table, and the key is with the bakery's owner."
    )
    write_card(
        repo,
        "maya",
        "",
        f"# Maya\n\n## Studio\n{studio}\n",
        IndexEntry.make("studio", ["studio"], "Maya's pottery studio"),
    )
    small_talk = ["Jon: ok.", "Maya: sure.", "Jon: ha, yes.", "Maya: later then."]
    records = [
        _message(f"2023-04-01T10:{i // 2:02d}:{i % 2 * 30:02d}Z", role, i // 2 + 1, text)
        for i, (role, text) in enumerate(
            ("user" if n % 2 else "assistant", small_talk[n % 4]) for n in range(60)
        )
    ]
    records.append(_message("2023-04-01T11:00:00Z", "user", 31, "Maya: kiln day!"))
    _transcript(client, "20230401-100000-dd01", records)
    # a section is long beside a turn: weighed against one average for both, it sank
    # below a passing mention; against its own kind's it is the answer it is
    best = search(repo, "where is the kiln", 3).hits
    assert (best[0].card, best[0].section) == ("maya", "studio")
    assert any(h.kind == "transcript" for h in best)  # the turn is still found


def test_a_word_memory_never_uses_finds_the_words_near_it(repo: MemoryRepo) -> None:
    write_card(
        repo,
        "acme-website",
        "",
        "# Acme: Website\n\n## Overview\nAcme wants a new website for its shop.\n\n"
        "## Risks\nThe payment provider has not confirmed its rate limits.\n\n"
        "## Contacts\nAnna Berg runs marketing; Ola Dahl signs the invoices.\n",
        IndexEntry.make("overview", ["overview"], "Acme's new website"),
    )
    assert "danger" not in git(repo.root, "show", "main:cards/acme-website.md").lower()
    best = [(h.card, h.section) for h in search(repo, "biggest danger for acme", 3)]
    assert best[0] == ("acme-website", "risks")
    # "talk" is near "speak" and "conversation", which this memory never says: nothing
    assert search(repo, "talk").hits == ()


@pytest.mark.parametrize(
    "damage",
    # mtime=0: the same bytes in every run, so each test worker collects the same ids
    [
        b"not gzip at all",
        gzip.compress(b"budget money:xx\n", mtime=0),
        gzip.compress(b"budget", mtime=0)[:-8],
    ],
    ids=["not gzip", "garbled line", "truncated"],
)
def test_a_damaged_neighbour_table_is_a_clear_error(
    repo: MemoryRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: bytes
) -> None:
    bad = tmp_path / "neighbours.txt.gz"
    bad.write_bytes(damage)
    monkeypatch.setattr(neighbours, "TABLE", bad)  # a broken install, in this test only
    neighbours.table.cache_clear()
    try:
        with pytest.raises(ConfigError, match=r"neighbours\.txt\.gz .*reinstall gitmem"):
            search(repo, "budget")
    finally:
        neighbours.table.cache_clear()


def test_every_term_of_the_shipped_neighbour_table_finds_its_line() -> None:
    lines = gzip.decompress(neighbours.TABLE.read_bytes()).decode().splitlines()
    for line in lines[:: len(lines) // 500]:  # every term is found by bisection
        term, _, rest = line.partition(" ")
        assert [f"{w}:{round(s * 100)}" for w, s in neighbours.near(term)] == rest.split()
    assert neighbours.near("zzzz-not-a-word") == []


def test_a_label_every_section_carries_or_a_date_relates_no_word(repo: MemoryRepo) -> None:
    # every section is labelled "notes, sessions" and dated: such labels tell no section
    # from another, so Maya's sections lift no year, and the one that names her is first
    days = [("2025-01", "Weather and work, nothing new."), ("2025-03", "Work again.")]
    days += [
        ("2025-05", "The commute and the weather."),
        ("2026-02", "Maya took the ferry to Porto."),
    ]
    for n, (day, text) in enumerate(days):
        head = "# Maya\n" if n == 0 else ""
        body = f"{head}\n## Sessions {day}\n{day}-10. {text}\n"
        write_card(
            repo, "maya", "", body, _entry(f"sessions-{day}", ["notes", "sessions"], "notes")
        )
    for card in ("jon", "lena"):
        text = "\n## Sessions 2025-02\n2025-02-03. Work and weather.\n"
        write_card(repo, card, "", f"# {card}\n{text}", _entry("sessions-2025-02", ["notes"], "n"))
    best = [(h.card, h.section) for h in search(repo, "where did Maya travel", 4)]
    assert best[0] == ("maya", "sessions-2026-02")


def test_a_dated_question_finds_what_was_told_then_not_the_small_talk(
    repo: MemoryRepo, client: Path
) -> None:
    # what Priya says every session, and once, in March, some news
    daily = ["Priya: How is your family doing?", "Priya: All good here, just tired."]
    for n, month in enumerate(("02", "03", "04")):
        said = [*daily, "Priya: I got an offer from the hospital."] if month == "03" else daily
        recs = [
            _message(f"2023-{month}-1{k}T10:00:00Z", "user", k + 1, text)
            for k, text in enumerate(said)
        ]
        sid = f"2023{month}10-100000-bb0{n}"
        (client / "sessions" / f"{sid}.jsonl").write_text("".join(r + "\n" for r in recs))
        git(client, "add", f"sessions/{sid}.jsonl")
        git(client, "commit", "-qm", f"session {sid}")
    best = search(repo, "What did Priya get up to in March?", 3).hits[0]
    assert best.snippet == "Priya: I got an offer from the hospital."


def test_a_dated_question_finds_the_section_that_tells_news_then(repo: MemoryRepo) -> None:
    # a card with a section a session: in March, one holds news among the small talk
    daily = "How is your family doing? All good here, just tired."
    sessions = [("02-10", daily), ("03-03", daily), ("03-10", f"{daily} I got a hospital offer.")]
    sessions += [("03-24", daily), ("04-07", daily)]
    env = dict(os.environ)
    try:
        for n, (day, text) in enumerate(sessions):
            os.environ["GIT_AUTHOR_DATE"] = os.environ["GIT_COMMITTER_DATE"] = f"2023-{day}T10:00Z"
            head = "# Priya\n" if n == 0 else ""
            body = f"{head}\n## Session 2023-{day}\n{text}\n"
            write_card(repo, "priya", "", body, _entry(f"session-2023-{day}", ["chat"], "chat"))
    finally:
        os.environ.clear()
        os.environ.update(env)
    best = search(repo, "What did Priya get up to in March?", 3).hits[0]
    assert best.section == "session-2023-03-10"
