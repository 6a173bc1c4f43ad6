"""A long section (notes of many sessions) is found by the passage that answers, and its
hit shows and opens that passage."""

from __future__ import annotations

from pathlib import Path

from gitmem.features.edit import write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.search.ranked import search

from helpers import gm

FILLER = (
    "We went over the week. {n} mornings were slow, the commute took longer than planned "
    "and the team lunch moved to Thursday. Nothing else stood out in the notes for today, "
    "and the follow-ups stay as they were."
)


def notes(paragraphs: list[str]) -> str:
    return "\n\n".join(paragraphs)


def new_sessions_card(repo: MemoryRepo, card: str, body: str) -> None:
    text = f"# {card.title()}\n\n## Sessions\n{body}\n"
    write_card(repo, card, "", text, IndexEntry.make("sessions", ["notes"], "Session notes"))


def test_a_long_sections_hit_shows_and_opens_the_passage_that_answers(
    repo: MemoryRepo, client: Path
) -> None:
    answer = "Dana finally bought the blue kayak from the harbour shop for 640 euros."
    paras = [FILLER.format(n=f"Day {i}") for i in range(8)]
    paras.insert(5, answer)
    new_sessions_card(repo, "dana", notes(paras))

    hit = search(repo, "kayak harbour", 5)[0]
    assert (hit.card, hit.section) == ("dana", "sessions")
    assert "blue kayak from the harbour shop" in hit.snippet
    assert hit.ref.startswith("dana/sessions#")

    shown = gm("show", hit.ref, cwd=client)
    assert shown.code == 0, shown.err
    assert answer in shown.out
    assert "commute" not in shown.out  # the passage, not the whole section
    assert "gitmem show" not in shown.err


def test_the_passage_where_the_words_meet_ranks_its_section_first(repo: MemoryRepo) -> None:
    # the same words, the same length: only where they stand differs
    apart = [FILLER.format(n="Rainy") for _ in range(6)]
    apart[0] += " The boat needs paint."
    apart[5] += " The engine was serviced."
    together = [FILLER.format(n="Rainy") for _ in range(6)]
    together[3] += " The boat needs paint. The engine was serviced."
    new_sessions_card(repo, "apart", notes(apart))  # written first: it wins a tie
    new_sessions_card(repo, "together", notes(together))

    hits = search(repo, "boat engine", 5)
    assert [h.card for h in hits][:2] == ["together", "apart"]
    assert "boat needs paint. The engine" in hits[0].snippet


def test_a_passage_number_past_the_end_is_a_one_line_error(repo: MemoryRepo, client: Path) -> None:
    new_sessions_card(repo, "dana", notes([FILLER.format(n=f"Day {i}") for i in range(4)]))

    got = gm("show", "dana/sessions#99", cwd=client)
    assert got.code != 0
    assert got.err.strip().count("\n") == 0
    assert "no passage 99" in got.err


def test_a_section_that_names_the_person_beats_one_that_only_shares_the_card(
    repo: MemoryRepo,
) -> None:
    # every section of the card carries the name "dana": only a section's own text says
    # which one is about Dana, and the card's field must not drown it
    days = notes([FILLER.format(n=f"Day {i}") for i in range(3)])
    march = f"{days}\n\nDana is moving to Porto at the end of the month."
    april = f"{days}\n\nThe office is moving floors; moving day for the desks is next week."
    body = f"# Dana\n\n## March\n{march}\n\n## April\n{april}\n"
    write_card(repo, "dana", "", body, IndexEntry.make("march", ["notes"], "Session notes"))

    hits = search(repo, "Where is Dana moving?", 5)
    assert [(h.card, h.section) for h in hits][:2] == [("dana", "march"), ("dana", "april")]
    assert hits[0].snippet.endswith("Dana is moving to Porto at the end of the month.")
