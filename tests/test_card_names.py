"""A card is ``cards/<slug>.md``: the index, the card list, export and search agree."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gitmem.bridges.export import cards_of
from gitmem.errors import InvalidInput
from gitmem.index import build as index
from gitmem.index.card_list import list_cards
from gitmem.memory import names
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.search.ranked import search

from helpers import git


@given(st.text(alphabet="ab-_ 9Z\n", max_size=8))
def test_a_slug_is_what_a_project_name_may_be(text: str) -> None:
    try:
        names.project(text)
        named = True
    except InvalidInput:
        named = False
    assert names.is_slug(text) == named  # (short names: the length rule is not reached)


def test_a_file_whose_name_only_begins_like_a_slug_is_not_a_card(repo: MemoryRepo) -> None:
    for name in ("acme", "acme_notes", "acme notes", "acme-"):
        (repo.root / "cards" / f"{name}.md").write_text(f"# {name}\n\n## Plans\nzeppelin {name}\n")
    git(repo.root, "add", "cards")
    git(repo.root, "commit", "-qm", "cards by hand")
    assert [c.project for c in index.refresh(repo, MAIN).cards] == ["acme"]
    assert [c.project for c in list_cards(repo)] == ["acme"]
    assert list(cards_of(repo)) == ["acme"]
    assert {h.card for h in search(repo, "zeppelin")} == {"acme"}
