"""publish: the one loop every writer shares (plan on the tip, compare-and-swap, plan again)."""

from __future__ import annotations

from gitmem.git.runner import Sha
from gitmem.memory.repo import MemoryRepo
from gitmem.ops.publish import PlannedCommit, publish

from helpers import git


def test_a_commit_is_planned_again_on_the_tip_another_writer_moved_the_branch_to(
    repo: MemoryRepo,
) -> None:
    git(repo.root, "branch", "side", "main")
    start = repo.branch_tip("side")
    planned_on: list[Sha] = []

    def other_writer(name: str) -> Sha:
        """What another process does meanwhile: a commit adding ``name``, the branch moved."""
        tip = repo.branch_tip("side")
        blob = repo.store.write("blob", b"x\n")
        tree = repo.store.update_path(repo.store.resolve(f"{tip}^{{tree}}"), name, blob)
        assert tree is not None
        sha = repo.write_commit(tree, [tip], f"other {name}\n")
        git(repo.root, "update-ref", "refs/heads/side", sha, tip)
        return sha

    def plan(tip: Sha, root: Sha) -> PlannedCommit:
        planned_on.append(tip)

        def make() -> tuple[Sha, dict[str, tuple[Sha, bytes]]]:
            blob = repo.store.write("blob", b"mine\n")
            tree = repo.store.update_path(root, "mine.md", blob)
            assert tree is not None
            commit = repo.write_commit(tree, [tip], "mine\n")
            if len(planned_on) == 1:
                other_writer("theirs.md")  # the branch moves before our compare-and-swap
            return commit, {"mine.md": (blob, b"mine\n")}

        return PlannedCommit(["mine.md"], make)

    done = publish(repo, "side", plan, reason="test")
    assert done is not None and not done.worktree
    assert len(planned_on) == 2 and planned_on[0] == start and planned_on[1] != start
    assert git(repo.root, "rev-parse", "side").strip() == done.commit
    assert git(repo.root, "rev-parse", "side^").strip() == planned_on[1]
    assert git(repo.root, "ls-tree", "--name-only", "side", "mine.md", "theirs.md").split() == [
        "mine.md",
        "theirs.md",
    ]  # nobody's commit is lost
