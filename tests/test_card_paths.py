"""Which path is a card: one rule, read back from ``card_path``, for merges and the memory tool."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gitmem.bridges.memory_tool_text import trailer_card
from gitmem.memory.cards import card_of, card_path
from gitmem.memory.names import MAX_SLUG

words = st.from_regex(r"[a-z0-9]{1,8}", fullmatch=True)
projects = st.lists(words, min_size=1, max_size=4).map("-".join)  # at most 35 characters


@given(projects)
def test_a_cards_path_reads_back_as_its_project_in_the_tree_and_below_memories(
    project: str,
) -> None:
    assert card_of(card_path(project)) == project
    assert trailer_card((f"{project}.md",)) == project


@pytest.mark.parametrize(
    ("path", "card"),
    [
        ("cards/Acme Notes.md", "Acme Notes"),  # a card file whatever its name: merged by section
        ("cards/acme/notes.md", None),
        ("cards/acme.txt", None),
        ("sessions/acme.md", None),
        ("acme.md", None),
    ],
)
def test_only_a_markdown_file_at_the_top_of_cards_is_a_card(path: str, card: str | None) -> None:
    assert card_of(path) == card


@pytest.mark.parametrize(
    "parts",
    [
        ("Acme Notes.md",),  # not a project name: no Gitmem-Card trailer can name it
        ("acme", "notes.md"),
        ("acme.txt",),
        (".md",),
        (),
        ("a" * (MAX_SLUG + 1) + ".md",),
    ],
)
def test_the_memory_tool_names_a_card_only_for_a_project_name(parts: tuple[str, ...]) -> None:
    assert trailer_card(parts) is None
