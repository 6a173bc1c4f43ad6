"""search_history: any query the model sends is searched or refused with a clear tool error."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.repo import MemoryRepo
from gitmem.search import MAX_QUERY_BYTES, MAX_TERMS, search_history
from gitmem.tools import MemoryTools

ENTRY = {"section_id": "budget", "keywords": ["budget"], "summary": "Q3 budget is 30k"}
WRITE = {"project": "acme", "old_text": "", "new_text": "## Budget\n30k\n", "index_entry": ENTRY}

word = st.one_of(
    st.sampled_from(["budget", "Q3", "30K", "nothing", "x" * 700]),
    st.text(st.characters(blacklist_categories=()), min_size=1, max_size=12),
)
query = st.one_of(
    st.lists(word, max_size=60).map(" ".join),
    st.integers(1, 200).map(lambda n: "budget " * n),
    st.integers(1, 140_000).map(lambda n: "y" * n),
)


def test_queries_over_the_limits_are_refused_naming_the_limit(repo: MemoryRepo) -> None:
    tools = MemoryTools(repo)
    assert not tools.call("write_memory_card", WRITE).is_error
    before = repo.tip("main")
    long_word = tools.call("search_history", {"query": "b" * 131072})
    assert long_word.is_error
    assert long_word.text == (
        f"Error: query is 131072 bytes, over the limit of {MAX_QUERY_BYTES} bytes: "
        "search for a few distinctive words"
    )
    many = tools.call("search_history", {"query": " ".join(["budget"] * (MAX_TERMS + 1))})
    assert many.is_error
    assert f"query has {MAX_TERMS + 1} words, over the limit of {MAX_TERMS}" in many.text
    nul = tools.call("search_history", {"query": "bud\0get"})
    assert nul.is_error and "NUL" in nul.text
    # At the limits the search runs, and finds.
    at_limit = " ".join(["budget"] * MAX_TERMS)
    assert "Q3 budget is 30k" in tools.call("search_history", {"query": at_limit}).text
    padded = "budget" + " " * (MAX_QUERY_BYTES - len("budget"))
    assert "Q3 budget is 30k" in tools.call("search_history", {"query": padded}).text
    assert repo.tip("main") == before


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query)
def test_any_query_is_answered_or_refused_never_raised(repo: MemoryRepo, q: str) -> None:
    res = MemoryTools(repo).call("search_history", {"query": q})
    try:
        size = len(q.encode("utf-8"))
    except UnicodeEncodeError:
        assert res.is_error and "not valid UTF-8" in res.text
        return
    terms = q.split()
    if not q.strip():
        assert res.is_error and "query must not be empty" in res.text
    elif size > MAX_QUERY_BYTES or len(terms) > MAX_TERMS or "\0" in q:
        assert res.is_error and ("over the limit" in res.text or "NUL" in res.text), res.text
    else:
        assert not res.is_error, res.text
        assert res.text == "No matches." or res.text.startswith("[")
        assert res.text == "\n".join(h.line() for h in search_history(repo, q)) or (
            res.text == "No matches." and not search_history(repo, q)
        )
