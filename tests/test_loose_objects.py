"""The object store reads a loose object from its file, exactly what git's cat-file gives,
and leaves to git what it cannot read so (packed, damaged, or replaced by `git replace`)."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import pytest

from gitmem.errors import CorruptObject
from gitmem.memory.repo import MemoryRepo

from helpers import git, gm


def _cat(root: Path, sha: str) -> tuple[str, bytes]:
    kind = git(root, "cat-file", "-t", sha).strip()
    import subprocess

    data = subprocess.run(
        ["git", "cat-file", kind, sha], cwd=root, capture_output=True, check=True
    ).stdout
    return kind, data


def test_loose_objects_read_without_git_as_git_reads_them(client: Path) -> None:
    (client / "notes.txt").write_text("ünïcode notes\n")
    git(client, "add", "notes.txt")
    git(client, "commit", "-qm", "notes")
    tip = git(client, "rev-parse", "HEAD").strip()
    tree = git(client, "rev-parse", "HEAD^{tree}").strip()
    blob = git(client, "rev-parse", "HEAD:notes.txt").strip()
    with MemoryRepo(client) as repo:
        for sha in (tip, tree, blob):
            got = repo.store.read(sha)
            assert got is not None and (got.kind, got.data) == _cat(client, sha)
        assert repo.store._proc is None  # all three were loose: no git process


def test_packed_damaged_and_replaced_objects_are_left_to_git(client: Path) -> None:
    (client / "a.txt").write_text("first\n")
    git(client, "add", "a.txt")
    git(client, "commit", "-qm", "a")
    blob = git(client, "rev-parse", "HEAD:a.txt").strip()
    git(client, "gc", "-q")  # packed now: no loose file
    with MemoryRepo(client) as repo:
        got = repo.store.read(blob)
        assert got is not None and got.data == b"first\n" and repo.store._proc is not None
    # a loose copy that does not inflate: git is asked, and the packed copy answers
    path = client / ".git" / "objects" / blob[:2] / blob[2:]
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b"not zlib data")
    with MemoryRepo(client) as repo:
        got = repo.store.read(blob)
        assert got is not None and got.data == b"first\n"
    os.unlink(path)
    # git replace: what git shows for a (loose) id is the replacement's content
    one = git(client, "hash-object", "-w", "--stdin", input=b"one\n").strip()
    other = git(client, "hash-object", "-w", "--stdin", input=b"second\n").strip()
    loose = client / ".git" / "objects" / one[:2] / one[2:]
    assert zlib.decompress(loose.read_bytes()).endswith(b"one\n")  # still there, loose
    git(client, "replace", one, other)
    with MemoryRepo(client) as repo:
        got = repo.store.read(one)
        assert got is not None and got.data == b"second\n"


def test_replacements_kept_under_another_ref_base_are_left_to_git(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``GIT_REPLACE_REF_BASE`` moves replacement refs out of refs/replace/: git still
    shows the replacement, so the store must ask git too."""
    one = git(client, "hash-object", "-w", "--stdin", input=b"one\n").strip()
    other = git(client, "hash-object", "-w", "--stdin", input=b"second\n").strip()
    git(client, "update-ref", f"refs/swap/{one}", other)
    monkeypatch.setenv("GIT_REPLACE_REF_BASE", "refs/swap/")
    shown = _cat(client, one)[1]
    assert shown == b"second\n"  # what git itself gives under that base
    with MemoryRepo(client) as repo:
        got = repo.store.read(one)
        assert got is not None and got.data == shown


def test_a_truncated_loose_object_is_corrupt_never_empty(client: Path) -> None:
    # a crash or a full disk while git wrote it: git's cat-file prints the object's
    # header, then dies; what it sent is not the card (an empty card would then be shown,
    # exported, and an edit on it would commit the card without its sections)
    import random

    words = [f"{random.Random(i).getrandbits(64):x}" for i in range(300)]
    (client / "cards").mkdir(exist_ok=True)
    (client / "cards" / "big.md").write_text("# Big\n\n## Notes\n" + " ".join(words) + "\n")
    git(client, "add", "cards/big.md")
    git(client, "commit", "-qm", "big card")
    blob = git(client, "rev-parse", "HEAD:cards/big.md").strip()
    path = client / ".git" / "objects" / blob[:2] / blob[2:]
    whole = path.read_bytes()
    os.chmod(path, 0o644)
    path.write_bytes(whole[: len(whole) // 2])
    with MemoryRepo(client) as repo:
        with pytest.raises(CorruptObject):
            repo.store.read(blob)
        with pytest.raises(CorruptObject):  # and again: the store's git was started anew
            repo.store.read("HEAD:cards/big.md")
    shown = gm("-C", str(client), "show", "big")
    assert shown.code == 5, shown
    assert "is missing or corrupt" in shown.err and "Traceback" not in shown.err
    assert shown.out == ""  # no empty card shown


def test_paths_of_one_commit_ask_git_for_its_tree_once_unless_objects_are_replaced(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gitmem.git.objects import ObjectStore

    git(client, "gc", "-q")  # packed: every read that is not remembered goes to git
    tip = git(client, "rev-parse", "HEAD").strip()
    paths = git(client, "ls-tree", "-r", "--name-only", "HEAD").split()
    asked: list[str] = []
    real = ObjectStore._cat

    def cat(self: ObjectStore, name: str, path: str | None = None) -> object:
        asked.append(name)
        return real(self, name, path)

    monkeypatch.setattr(ObjectStore, "_cat", cat)
    with MemoryRepo(client) as repo:
        for _ in range(2):
            for path in paths:
                got = repo.store.read(f"{tip}:{path}")
                assert (
                    got is not None
                    and got.data
                    == _cat(client, git(client, "rev-parse", f"HEAD:{path}").strip())[1]
                )
                assert repo.store.entry(tip, path) is not None
    assert asked.count(f"{tip}^{{tree}}") == 1
    # a replaced tree: git's answer is taken every time
    tree = git(client, "rev-parse", "HEAD^{tree}").strip()
    other = git(client, "mktree", input=b"").strip()
    git(client, "replace", tree, other)
    asked.clear()
    with MemoryRepo(client) as repo:
        assert repo.store.read(f"{tip}:{paths[0]}") is None  # the replacement is empty
        assert repo.store.read(f"{tip}:{paths[0]}") is None
    assert asked.count(f"{tip}^{{tree}}") == 2
