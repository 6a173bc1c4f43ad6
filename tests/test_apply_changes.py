"""apply_changes: the one walk behind transplant (cherry-pick) and revert_tree (undo)."""

from __future__ import annotations

from gitmem.git.runner import Sha
from gitmem.memory.repo import MemoryRepo
from gitmem.ops.transplant import apply_changes

from helpers import git


def commit(repo: MemoryRepo, files: dict[str, str], message: str) -> Sha:
    for path, text in files.items():
        (repo.root / path).write_text(text)
    git(repo.root, "add", *files)
    git(repo.root, "commit", "-qm", message)
    return repo.branch_tip("main")


def test_only_a_file_the_tip_changed_otherwise_is_settled(repo: MemoryRepo) -> None:
    a = commit(repo, {"same.md": "1\n", "moved.md": "1\n", "there.md": "1\n"}, "start")
    b = commit(repo, {"same.md": "2\n", "moved.md": "2\n", "there.md": "2\n"}, "the change")
    git(repo.root, "reset", "-q", "--hard", a)
    tip = commit(repo, {"moved.md": "tip\n", "there.md": "2\n"}, "the tip's own")
    asked: list[tuple[str, bytes | None, bytes | None, bytes | None]] = []

    def settle(path: str, base: bytes | None, ours: bytes | None, theirs: bytes | None) -> bytes:
        asked.append((path, base, ours, theirs))
        return b"settled\n"

    tree, touched = apply_changes(repo, tip, [(a, b)], settle)
    assert asked == [("moved.md", b"1\n", b"tip\n", b"2\n")]
    assert sorted(touched) == ["moved.md", "same.md", "there.md"]
    shown = {p: git(repo.root, "cat-file", "blob", f"{tree}:{p}") for p in touched}
    assert shown == {"same.md": "2\n", "moved.md": "settled\n", "there.md": "2\n"}
    # the reversed pair undoes the change where the tip holds its end
    back, _ = apply_changes(repo, tree, [(b, a)], settle)
    assert git(repo.root, "cat-file", "blob", f"{back}:same.md") == "1\n"
    assert len(asked) == 2 and asked[1][0] == "moved.md"  # "settled" is neither end
