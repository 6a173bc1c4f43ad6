"""The object store reads each object exactly as git's cat-file gives it: loose, packed or
damaged; an object replaced by `git replace` reads as it was committed, as
`git --no-replace-objects` reads it (a replacement is a way to show memory other text than
was signed)."""

from __future__ import annotations

import os
import subprocess
import zlib
from pathlib import Path

import pytest

from gitmem.errors import CorruptObject
from gitmem.memory.repo import MemoryRepo

from helpers import git, gm, snapshot


def _cat(root: Path, sha: str) -> tuple[str, bytes]:
    kind = git(root, "cat-file", "-t", sha).strip()
    data = subprocess.run(
        ["git", "cat-file", kind, sha], cwd=root, capture_output=True, check=True
    ).stdout
    return kind, data


def test_objects_read_as_git_reads_them(client: Path) -> None:
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


def test_packed_damaged_and_replaced_objects_read_as_git_reads_them(client: Path) -> None:
    (client / "a.txt").write_text("first\n")
    git(client, "add", "a.txt")
    git(client, "commit", "-qm", "a")
    blob = git(client, "rev-parse", "HEAD:a.txt").strip()
    git(client, "gc", "-q")  # packed now: no loose file
    with MemoryRepo(client) as repo:
        got = repo.store.read(blob)
        assert got is not None and got.data == b"first\n"
    # a loose copy that does not inflate: git is asked, and the packed copy answers
    path = client / ".git" / "objects" / blob[:2] / blob[2:]
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b"not zlib data")
    with MemoryRepo(client) as repo:
        got = repo.store.read(blob)
        assert got is not None and got.data == b"first\n"
    os.unlink(path)
    # git replace: plain git shows the replacement's content; the store, what was written
    one = git(client, "hash-object", "-w", "--stdin", input=b"one\n").strip()
    other = git(client, "hash-object", "-w", "--stdin", input=b"second\n").strip()
    loose = client / ".git" / "objects" / one[:2] / one[2:]
    assert zlib.decompress(loose.read_bytes()).endswith(b"one\n")  # still there, loose
    git(client, "replace", one, other)
    assert _cat(client, one)[1] == b"second\n"
    with MemoryRepo(client) as repo:
        got = repo.store.read(one)
        assert got is not None and got.data == b"one\n"


def test_replacements_kept_under_another_ref_base_are_not_read_either(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``GIT_REPLACE_REF_BASE`` moves replacement refs out of refs/replace/: git still
    shows the replacement; the store reads what was written."""
    one = git(client, "hash-object", "-w", "--stdin", input=b"one\n").strip()
    other = git(client, "hash-object", "-w", "--stdin", input=b"second\n").strip()
    git(client, "update-ref", f"refs/swap/{one}", other)
    monkeypatch.setenv("GIT_REPLACE_REF_BASE", "refs/swap/")
    shown = _cat(client, one)[1]
    assert shown == b"second\n"  # what git itself gives under that base
    with MemoryRepo(client) as repo:
        got = repo.store.read(one)
        assert got is not None and got.data == b"one\n"


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


def test_a_path_in_a_replaced_tree_reads_the_committed_tree(client: Path) -> None:
    tip = git(client, "rev-parse", "HEAD").strip()
    path = git(client, "ls-tree", "-r", "--name-only", "HEAD").split()[0]
    with MemoryRepo(client) as repo:
        assert repo.store.read(f"{tip}:{path}") is not None
    tree = git(client, "rev-parse", "HEAD^{tree}").strip()
    git(client, "replace", tree, git(client, "mktree", input=b"").strip())
    shown = subprocess.run(["git", "cat-file", "-e", f"{tip}:{path}"], cwd=client)
    assert shown.returncode != 0  # plain git reads the replacement: an empty tree
    with MemoryRepo(client) as repo:
        for _ in range(2):
            assert repo.store.read(f"{tip}:{path}") is not None
            assert repo.store.entry(tip, path) is not None


@pytest.mark.parametrize("args", [["sync"], ["scan", "--history"]], ids=" ".join)
def test_a_damaged_card_object_under_git_log_is_named_as_such(
    seeded: Path, tmp_path: Path, args: list[str]
) -> None:
    # git log -p (scan --history) and the log sync reads fail on the blob: the error is
    # the damaged object's, as every other command's, not git log's last words
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(seeded, "remote", "add", "origin", str(remote))
    blob = git(seeded, "rev-parse", "main:cards/acme.md").strip()
    path = seeded / ".git" / "objects" / blob[:2] / blob[2:]
    os.chmod(path, 0o644)
    path.write_bytes(b"garbage")
    before = snapshot(seeded)
    res = gm("-C", str(seeded), *args)
    assert res.code == 5, res
    assert (
        res.err
        == f"gitmem: error: git object {blob} is missing or corrupt: git log cannot read it\n"
    )
    assert snapshot(seeded) == before
