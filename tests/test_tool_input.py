"""Any input the model sends to a memory tool is answered: a result or a one-line error."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.agent.tools import MemoryTools
from gitmem.memory.repo import MemoryRepo

text = st.one_of(
    st.text(st.characters(blacklist_categories=()), max_size=30),  # lone surrogates too
    st.sampled_from(["acme", "budget", "## Budget\n30k\n", "", " "]),
)
value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), text),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)),
    max_leaves=6,
)
field = st.one_of(text, value)
entry = st.one_of(
    value,
    st.fixed_dictionaries(
        {
            "section_id": field,
            "keywords": st.one_of(st.lists(text, max_size=3), value),
            "summary": field,
        }
    ),
)
calls = st.one_of(
    st.tuples(
        st.just("write_memory_card"),
        st.fixed_dictionaries(
            {"project": field, "old_text": field, "new_text": field, "index_entry": entry}
        ),
    ),
    st.tuples(
        st.just("read_memory_card"),
        st.fixed_dictionaries({"project": field}, optional={"section_id": field}),
    ),
    st.tuples(
        st.just("search_history"),
        st.fixed_dictionaries({"query": field}, optional={"limit": value}),
    ),
    st.tuples(text, value),
)


def test_a_lone_surrogate_is_a_tool_error(repo: MemoryRepo) -> None:
    tools = MemoryTools(repo)
    for name in ("read_memory_card", "search_history"):
        res = tools.call(name, {"project": "ac\ud800me", "query": "x\udfff"})
        assert res.is_error and res.text == (
            "Error: tool input is not valid UTF-8 (it holds a lone surrogate)"
        )


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(calls, min_size=1, max_size=3))
def test_any_tool_input_is_answered_never_raised(repo: MemoryRepo, steps: list[Any]) -> None:
    tools = MemoryTools(repo)
    for name, args in steps:
        res = tools.call(name, args)
        assert isinstance(res.text, str) and res.text
        if res.is_error:
            assert res.text.startswith("Error: ") and "\n" not in res.text
