"""What `gitmem sync` writes when it merges: their files as they are are not stored again,
and each changed tree is written once (not once per path that changed in it)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_index_property import PROJECTS, SECTIONS
from test_objects import ops
from test_sync import make_pair, sync

from gitmem.errors import GitmemError
from gitmem.features.edit import write_card
from gitmem.features.revert import revert_commit
from gitmem.git.runner import Sha
from gitmem.index import build as index
from gitmem.index import records, replay
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.setup.init import init_repo

from helpers import git, spy_full_replays, write_sha


def _loose(root: Path) -> set[str]:
    objects = root / ".git" / "objects"
    return {f"{d.name}{f.name}" for d in objects.iterdir() if len(d.name) == 2 for f in d.iterdir()}


def test_a_merge_taking_their_cards_writes_only_its_two_trees_and_commit(tmp_path: Path) -> None:
    _bare, laptop, desktop = make_pair(tmp_path)
    for i in range(6):  # six new cards on the laptop: one cards/ tree, one root tree
        write_sha(
            laptop, f"card-{i}", "", f"# Card {i}\n\n## Notes\nvalue {i}\n", "notes", f"card {i}"
        )
    assert sync(laptop)[0] == 0
    write_sha(desktop, "beta", "Ship v2", "Ship v2 in March", "goals", "Ship v2 in March")
    git(desktop, "gc", "-q")  # what the desktop had is packed: new loose objects stand out
    before = _loose(desktop)
    code, out, err = sync(desktop)
    assert code == 0, err
    assert "merged" in out
    fetched = {
        line.split()[0] for line in git(laptop, "rev-list", "--objects", "main").splitlines()
    }
    new = _loose(desktop) - before - fetched  # (a small fetch is stored loose)
    merge = git(desktop, "rev-parse", "main").strip()
    trees = {
        git(desktop, "rev-parse", f"{merge}^{{tree}}").strip(),
        git(desktop, "rev-parse", f"{merge}:cards").strip(),
    }
    assert new == trees | {merge}
    for i in range(6):
        assert (
            desktop / "cards" / f"card-{i}.md"
        ).read_text() == f"# Card {i}\n\n## Notes\nvalue {i}\n"
    assert git(desktop, "fsck", "--strict", "--no-dangling") == ""


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    start=ops,
    changes=st.dictionaries(
        st.sampled_from(
            ["a", "b", "cards", "a/b", "a/a-b", "a.b", "cards/x", "cards/y", "cards/x/z", "z/a/b"]
        ),
        st.one_of(st.none(), st.binary(max_size=4)),
        max_size=6,
    ),
)
def test_update_paths_is_update_path_one_path_after_another(
    start: list[tuple[str, bytes | None]], changes: dict[str, bytes | None]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "c"
        init_repo(root)
        with MemoryRepo(root) as repo:
            tree = repo.store.resolve("HEAD^{tree}")
            for path, data in start:
                blob = repo.store.write("blob", data) if data is not None else None
                tree = repo.store.update_path(tree, path, blob)
            blobs = {
                p: repo.store.write("blob", d) if d is not None else None
                for p, d in changes.items()
            }
            one_by_one = tree
            for path, blob in sorted(blobs.items()):
                one_by_one = repo.store.update_path(one_by_one, path, blob)
            assert repo.store.update_paths(tree, blobs) == one_by_one
    assert not os.path.exists(tmp)


# -- the index after a merge: only what the merge brought is folded in --------------------------


def _same_as_full_replay(repo: MemoryRepo) -> None:
    got = index.refresh(repo)
    known = repo.memo[("index", MAIN)]
    assert isinstance(known, records.Cached)
    # at the cached tip only the resolved records are read: the replay is the file's own
    loaded = known if known.whole else records.load(repo, MAIN)
    assert loaded is not None and loaded.whole
    state = loaded.state
    full = replay.replay_all(repo)
    assert state.commit == full.commit
    # every section's entries, in the same order
    assert {k: state.history(k) for k in state.entries} == {
        k: full.history(k) for k in full.entries
    }
    assert (state.merges, state.inactive, state.reverts) == (
        full.merges,
        full.inactive,
        full.reverts,
    )
    assert got == index.resolve(repo, full)


def test_a_sync_merge_folds_in_what_it_brought_without_replaying_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gitmem.sync import exchange as sync_mod

    _bare, laptop, desktop = make_pair(tmp_path)
    for i in range(3):
        write_sha(
            laptop, f"card-{i}", "", f"# Card {i}\n\n## Notes\nvalue {i}\n", "notes", f"card {i}"
        )
    assert sync(laptop)[0] == 0
    write_sha(desktop, "beta", "Ship v2", "Ship v2 in March", "goals", "Ship v2 in March")
    with MemoryRepo(desktop) as repo:
        index.refresh(repo)  # the cache at the desktop's own commit
        calls = spy_full_replays(monkeypatch)
        result = sync_mod.sync_repo(repo)
        assert result.merged
        index.refresh(repo)
        assert calls == []
    monkeypatch.undo()
    with MemoryRepo(desktop) as repo:
        _same_as_full_replay(repo)
        assert "card 2" in index.refresh(repo).render()
        assert "Ship v2 in March" in index.refresh(repo).render()


step = st.tuples(
    st.sampled_from(["base", "ours", "theirs", "base-merge", "revert-ours"]),
    st.sampled_from(PROJECTS),
    st.sampled_from(SECTIONS),
)


def _commit_on(repo: MemoryRepo, branch: str, project: str, section: str, n: int) -> None:
    ref = f"refs/heads/{branch}:cards/{project}.md"
    old = repo.store.read_blob(ref)
    text = f"## {section}\nvalue {n}.\n"
    entry = IndexEntry.make(section, [f"k{n}"], f"{section} now {n}")
    if old is None:
        write_card(repo, project, "", text, entry, branch=branch)
        return
    lines = old.decode().split("\n")
    # every value line is unique: "value <n>." (without the dot "value 1" is in "value 10")
    if f"## {section}" in lines:
        value = lines[lines.index(f"## {section}") + 1]
        write_card(repo, project, value, f"value {n}.", entry, branch=branch)
    else:
        write_card(repo, project, old.decode(), old.decode() + f"\n{text}", entry, branch=branch)


def _merge(root: Path, into: str, other: str) -> None:
    tree = git(root, "rev-parse", f"{into}^{{tree}}").strip()
    sha = git(root, "commit-tree", tree, "-p", into, "-p", other, "-m", f"merge {other}").strip()
    git(root, "update-ref", f"refs/heads/{into}", sha)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    plan=st.lists(step, min_size=1, max_size=12), cache_at=st.sampled_from(["fork", "ours", "mid"])
)
def test_the_index_after_any_merge_is_the_full_replays(
    plan: list[tuple[str, str, str]], cache_at: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "c"
        init_repo(root)
        with MemoryRepo(root) as repo:
            n = 0
            for kind, project, section in [s for s in plan if s[0] in ("base", "base-merge")]:
                n += 1
                if kind == "base-merge":  # an older merge in the shared history
                    git(root, "branch", "-f", "old-side", "main")
                    _commit_on(repo, "old-side", project, section, n)
                    _merge(root, "main", "old-side")
                else:
                    _commit_on(repo, "main", project, section, n)
            if repo.tip(MAIN) is None:
                _commit_on(repo, "main", "alpha", "budget", 0)
            git(root, "branch", "-f", "theirs", "main")
            if cache_at == "fork":
                index.refresh(repo)
            ours = [s for s in plan if s[0] in ("ours", "revert-ours")]
            for i, (kind, project, section) in enumerate(ours):
                n += 1
                if kind == "revert-ours":
                    with contextlib.suppress(GitmemError):
                        revert_commit(repo, git(root, "rev-parse", "main").strip())
                else:
                    _commit_on(repo, "main", project, section, n)
                if cache_at == "mid" and i == 0:
                    index.refresh(repo)
            if cache_at == "ours":
                index.refresh(repo)
            for _kind, project, section in [s for s in plan if s[0] == "theirs"]:
                n += 1
                _commit_on(repo, "theirs", project, section, n)
            index.refresh(repo)
            _merge(root, "main", "theirs")
            _same_as_full_replay(repo)
        with MemoryRepo(root) as repo:  # and from the cache, in a new process's way
            _same_as_full_replay(repo)


# -- the merge reads no file only one side changed: the trees' ids say who changed it ------------

_FILES = st.sampled_from(["cards/a.md", "cards/b.md", "logs/l.log", "notes.txt", "x/y"])
_TEXTS = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "# A\n\n## One\n1\n",
            "# A\n\n## One\n2\n",
            "# A\n\n## One\n1\n\n## Two\n2\n",
            "line\n",
            "line\nmore\n",
        ]
    ),
)


@settings(max_examples=60, deadline=None)
@given(
    base=st.dictionaries(_FILES, _TEXTS, max_size=5),
    ours=st.dictionaries(_FILES, _TEXTS, max_size=4),
    theirs=st.dictionaries(_FILES, _TEXTS, max_size=4),
)
def test_a_merge_by_tree_ids_is_the_merge_by_contents(
    base: dict[str, str | None], ours: dict[str, str | None], theirs: dict[str, str | None]
) -> None:
    """Any three versions of a few files (cards, logs, others; added, changed, removed):
    the merge that compares blob ids gives the tree, touched paths and conflicts of the
    merge that reads every changed file's contents."""
    from gitmem.ops import merge

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "c"
        init_repo(root)
        with MemoryRepo(root) as repo:

            def commit(tree: Sha | None, changes: dict[str, str | None], parent: Sha) -> Sha:
                blobs = {
                    p: repo.store.write("blob", t.encode()) if t is not None else None
                    for p, t in changes.items()
                }
                new = repo.store.update_paths(tree, blobs) or repo.store.write_tree([])
                return repo.write_commit(new, [parent], "c")

            head = repo.store.resolve("HEAD")
            assert head is not None
            b = commit(repo.store.resolve("HEAD^{tree}"), base, head)
            o = commit(repo.store.resolve(f"{b}^{{tree}}"), ours, b)
            t = commit(repo.store.resolve(f"{b}^{{tree}}"), theirs, b)
            labels = ("ours", "theirs")
            by_ids = merge.merge_trees(repo, b, o, t, labels)
            real = merge._blob_ids
            merge._blob_ids = lambda *a: None
            try:
                by_contents = merge.merge_trees(repo, b, o, t, labels)
            finally:
                merge._blob_ids = real
            assert (by_ids.tree, by_ids.touched, by_ids.conflicts) == (
                by_contents.tree,
                by_contents.touched,
                by_contents.conflicts,
            )
