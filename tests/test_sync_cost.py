"""What `gitmem sync` writes when it merges: their files as they are are not stored again,
and each changed tree is written once (not once per path that changed in it)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_objects import ops
from test_sync import make_pair, sync, write

from gitmem.create import init_repo
from gitmem.repo import MemoryRepo

from helpers import git


def _loose(root: Path) -> set[str]:
    objects = root / ".git" / "objects"
    return {f"{d.name}{f.name}" for d in objects.iterdir() if len(d.name) == 2 for f in d.iterdir()}


def test_a_merge_taking_their_cards_writes_only_its_two_trees_and_commit(tmp_path: Path) -> None:
    _bare, laptop, desktop = make_pair(tmp_path)
    for i in range(6):  # six new cards on the laptop: one cards/ tree, one root tree
        write(laptop, f"card-{i}", "", f"# Card {i}\n\n## Notes\nvalue {i}\n", "notes", f"card {i}")
    assert sync(laptop)[0] == 0
    write(desktop, "beta", "Ship v2", "Ship v2 in March", "goals", "Ship v2 in March")
    git(desktop, "gc", "-q")  # what the desktop had is packed: new loose objects stand out
    before = _loose(desktop)
    code, out, err = sync(desktop)
    assert code == 0, err
    assert "merged" in out
    fetched = {line.split()[0] for line in git(laptop, "rev-list", "--objects", "main").splitlines()}
    new = _loose(desktop) - before - fetched  # (a small fetch is stored loose)
    merge = git(desktop, "rev-parse", "main").strip()
    trees = {git(desktop, "rev-parse", f"{merge}^{{tree}}").strip(),
             git(desktop, "rev-parse", f"{merge}:cards").strip()}
    assert new == trees | {merge}
    for i in range(6):
        assert (desktop / "cards" / f"card-{i}.md").read_text() == f"# Card {i}\n\n## Notes\nvalue {i}\n"
    assert git(desktop, "fsck", "--strict", "--no-dangling") == ""


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=ops, changes=st.dictionaries(st.sampled_from(
    ["a", "b", "cards", "a/b", "a/a-b", "a.b", "cards/x", "cards/y", "cards/x/z", "z/a/b"]),
    st.one_of(st.none(), st.binary(max_size=4)), max_size=6))
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
            blobs = {p: repo.store.write("blob", d) if d is not None else None
                     for p, d in changes.items()}
            one_by_one = tree
            for path, blob in sorted(blobs.items()):
                one_by_one = repo.store.update_path(one_by_one, path, blob)
            assert repo.store.update_paths(tree, blobs) == one_by_one
    assert not os.path.exists(tmp)
