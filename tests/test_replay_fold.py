"""A replay is every commit applied oldest first -- entries, reverts of reverts, merges and
all -- and ``advance`` from any earlier point lands on the state of a full replay, or
refuses and leaves the state as it was."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.errors import GitError
from gitmem.git.runner import Git
from gitmem.index.build import advance
from gitmem.index.replay import Replay, replay_all
from gitmem.memory import trailers as T
from gitmem.memory.repo import MemoryRepo
from gitmem.ops.history import iter_log, read_log

from helpers import git

KEYS = [("alpha", "budget"), ("alpha", "risks"), ("beta", "goals")]

entry = st.tuples(st.just("entry"), st.integers(0, len(KEYS) - 1), st.integers(0, 9))
revert = st.tuples(st.just("revert"), st.lists(st.integers(0, 40), min_size=1, max_size=3))
other = st.tuples(st.sampled_from(["plain", "layer", "merge"]), st.integers(0, 40))
plans = st.lists(st.one_of(entry, entry, revert, revert, other), min_size=1, max_size=25)


def message(step: tuple[Any, ...], earlier: list[str]) -> str:
    # Each commit's subject is its own: with the fixed test dates, two equal messages on
    # one parent would be one commit, and the history not the one planned.
    kind, n = step[0], len(earlier)
    if kind == "entry":
        card, section = KEYS[step[1]]
        return (
            f"edit {n}\n\n{T.CARD}: {card}\n{T.SECTION}: {section}\n"
            f"{T.KEYWORDS}: k{step[2]}\n{T.SUMMARY}: now {step[2]}\n"
        )
    if kind == "revert" and earlier:
        targets = [earlier[i % len(earlier)] for i in step[1]]
        return f"revert {n}\n\n" + "".join(f"{T.REVERTS}: {t}\n" for t in targets)
    if kind == "layer":
        return f"synthesis {n}\n\n{T.CARD}: alpha\n{T.SECTION}: budget\n{T.LAYER}: synthesis\n"
    return f"plain commit {n}\n"


def build(root: Path, plan: list[tuple[Any, ...]]) -> list[str]:
    """Commits made straight with commit-tree (the replay reads trailers only)."""
    tree = git(root, "hash-object", "-t", "tree", "-w", "--stdin", input=b"").strip()
    made: list[str] = []
    tip: str | None = None
    for step in plan:
        parents = ["-p", tip] if tip else []
        if step[0] == "merge" and len(made) > 1:  # a side commit off an older one, merged back
            side = git(
                root,
                "commit-tree",
                tree,
                "-p",
                made[step[1] % len(made)],
                input=message(("entry", step[1] % len(KEYS), 7), made).encode(),
            ).strip()
            made.append(side)
            parents += ["-p", side]
        tip = git(root, "commit-tree", tree, *parents, input=message(step, made).encode()).strip()
        made.append(tip)
        git(root, "update-ref", "refs/heads/main", tip)
    return made


def oldest_first(root: Path, rev: str) -> Replay:
    """The definition: every commit, oldest first in git's topological order, applied in turn."""
    state = Replay()
    for c in read_log(Git(root), rev, reverse=True):
        state.apply(c)
    return state


def history(state: Replay) -> dict[str, list[list[str]]]:
    return {key: state.history(key) for key in state.entries}


def same(a: Replay, b: Replay) -> None:
    assert (a.commit, history(a), a.inactive, a.reverts, sorted(a.merges)) == (
        b.commit,
        history(b),
        b.inactive,
        b.reverts,
        sorted(b.merges),
    )


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plan=plans, cut=st.integers(0, 30))
def test_replay_and_advance_equal_oldest_first_apply(plan: list[tuple[Any, ...]], cut: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        git(root, "init", "-q", "-b", "main")
        made = build(root, plan)
        with MemoryRepo(root) as repo:
            full = replay_all(repo)
            same(full, oldest_first(root, "main"))
            # advance from an earlier commit: the full replay's state when history grew
            # linearly (or through a merge it can fold in), a refusal (and the state
            # untouched) when it did not grow from there or a merge it cannot fold lies
            # in between
            start = made[cut % len(made)]
            partial = oldest_first(root, start)
            grew = advance(repo, partial, made[-1])
            merges = git(root, "rev-list", "--min-parents=2", f"{start}..main").split()
            ancestor = start in git(root, "rev-list", "main").split()
            if not ancestor:
                assert grew is None
            elif not merges:
                assert grew is not None
            if grew is not None:
                same(partial, full)
            else:
                same(partial, oldest_first(root, start))


def test_a_branch_with_no_commits_replays_empty(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    with MemoryRepo(tmp_path) as repo:
        assert replay_all(repo) == Replay()


def test_a_failing_log_names_git_s_error(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "one")
    with pytest.raises(GitError) as err:
        list(iter_log(Git(tmp_path), "no-such-rev"))
    assert "no-such-rev" in err.value.stderr
