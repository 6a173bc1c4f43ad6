"""Past section values are read back from git: the text a fold saw, the hits the old
state (every past text held in memory) gave."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_index_property import do_step, edit, hand, revert

from gitmem.memory.cards import sections
from gitmem.memory.repo import MemoryRepo
from gitmem.search import cache
from gitmem.search.documents import PAST, text_of
from gitmem.search.ranked import rank
from gitmem.search.state import SearchState
from gitmem.setup.init import init_repo

from helpers import git

steps = st.lists(st.one_of(edit, edit, hand, revert), min_size=1, max_size=10)
queries = st.lists(
    st.sampled_from(
        [
            "budget",
            "launch",
            "value",
            "hand",
            "bob",
            "before",
            "previously",
            "alpha",
            "beta",
            "gamma",
            "note",
            "x",
        ]
    ),
    min_size=1,
    max_size=3,
).map(" ".join)


def _with_texts(state: SearchState, repo: MemoryRepo) -> SearchState:
    """The state as it was kept before: every past value's text in its document."""
    old = dataclasses.replace(state, docs=list(state.docs))
    for n, d in enumerate(old.docs):
        if d.kind == PAST:
            old.docs[n] = d._replace(text=text_of(d, repo.store.read_blob), blob="")
    return old


def _section_texts(root: Path, commit: str, card: str) -> dict[str, list[str]]:
    text = git(root, "show", f"{commit}:cards/{card}.md")
    lines = text.split("\n")
    out: dict[str, list[str]] = {}
    for s in sections(text):
        out.setdefault(s.id, []).append("\n".join(lines[s.start + 1 : s.end]).strip())
    return out


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps, st.lists(queries, min_size=1, max_size=4))
def test_hits_with_past_texts_read_from_git_equal_the_state_that_held_them(
    plan: list[tuple[object, ...]],
    asked: list[str],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "c"
        init_repo(root)
        with MemoryRepo(root) as repo:
            for step in plan:
                do_step(repo, step)
            state = cache.current(repo)
            read = repo.store.read_blob
            for d in state.docs:
                if d.kind == PAST:
                    assert d.text == ""
                    # the value the commit that wrote it holds in that section
                    got = _section_texts(root, d.commit, d.card)[d.section]
                    assert text_of(d, read) in got
            old = _with_texts(state, repo)
            for q in asked:
                for limit in (3, 10, 50):
                    assert rank(state, q, read, limit) == rank(old, q, read, limit)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(st.sampled_from("ab-c1 ,.'é"), max_size=12), min_size=1, max_size=6))
def test_terms_are_the_same_whatever_the_term_cache_holds(texts: list[str]) -> None:
    from gitmem.search import terms as T

    cold = []
    for text in texts:
        T._TERMS.clear()
        cold.append(T.terms(text))
    saved = T._TERMS_MAX
    T._TERMS.clear()
    T._TERMS_MAX = 2  # emptied again and again while these texts are read
    try:
        assert [T.terms(text) for text in texts] == cold
        assert len(T._TERMS) <= 2
    finally:
        T._TERMS_MAX = saved
