"""The search index is a pure function of history: kept up per commit == rebuilt from scratch."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_index_property import do_edit, do_hand, do_revert, edit, hand, revert

from gitmem.memory.repo import MemoryRepo
from gitmem.search import cache, fold
from gitmem.search.ranked import search
from gitmem.search.state import fingerprint
from gitmem.setup.init import init_repo

from helpers import git

talk = st.tuples(
    st.just("talk"),
    st.sampled_from(["s1", "s2"]),
    st.integers(0, 2),
    st.sampled_from(["launch moved", "budget agreed", "call bob", ""]),
)
merge = st.tuples(st.just("merge"), st.sampled_from(["alpha", "beta"]), st.integers(0, 99))
steps = st.lists(st.one_of(edit, edit, hand, revert, talk, merge), min_size=1, max_size=10)


def do_talk(root: Path, session: str, how: int, text: str) -> None:
    """A committed transcript: a turn appended, the file rewritten, or a line of no text."""
    path = root / "sessions" / f"{session}.jsonl"
    old = path.read_text() if path.exists() else ""
    line = json.dumps({"at": "2025-11-30T10:00:00+00:00", "role": "user", "text": text}) + "\n"
    body = old + line if how == 0 else line if how == 1 else old + "not json\n"
    path.write_text(body)
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", f"session {session}")


def do_merge(root: Path, project: str, n: int) -> None:
    """A merge commit on main: a side branch's hand edit merged with --no-ff."""
    git(root, "checkout", "-q", "-b", "side")
    path = root / "cards" / f"{project}.md"
    path.write_text(
        (path.read_text() if path.exists() else f"# {project}\n") + f"\n## Side {n}\nx\n"
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "side")
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    git(root, "branch", "-q", "-D", "side")


@pytest.mark.slow
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps)
def test_incremental_search_index_equals_a_rebuild_after_every_step(
    plan: list[tuple[object, ...]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "c"
        init_repo(root)
        with MemoryRepo(root) as repo:
            for step in plan:
                kind = step[0]
                if kind == "edit":
                    do_edit(repo, *step[1:])  # type: ignore[arg-type]
                elif kind == "hand":
                    do_hand(repo, *step[1:])  # type: ignore[arg-type]
                elif kind == "revert":
                    do_revert(repo, step[1])  # type: ignore[arg-type]
                elif kind == "talk":
                    do_talk(root, *step[1:])  # type: ignore[arg-type]
                else:
                    do_merge(root, *step[1:])  # type: ignore[arg-type]
                tip = repo.tip("main")
                assert tip is not None
                kept = cache.current(repo)  # this process's state, one commit at a time
                rebuilt = fold.build(repo, tip)
                assert kept.commit == tip
                assert kept == rebuilt
            with MemoryRepo(root) as fresh:  # from the file on disk, folding what it lacks
                assert fingerprint(cache.current(fresh)) == fingerprint(rebuilt)
                query = "budget launch value hand bob"
                assert search(repo, query) == search(fresh, query)
            _, same = cache.rebuild(repo)
            assert same is not False
