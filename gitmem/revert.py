"""``gitmem revert COMMIT``: undo one edit with a commit that says which one it undoes."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from . import names
from . import trailers as T
from .errors import InvalidInput, NotFound
from .git import Sha
from .history import read_log
from .publish import Plan, commit_plan, publish
from .repo import MAIN, MemoryRepo
from .transplant import transplant


@dataclass(frozen=True)
class RevertResult:
    commit: Sha
    reverted: Sha
    paths: list[str]

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def revert_commit(
    repo: MemoryRepo, rev: str, *, branch: str = MAIN, actor: str = "cli"
) -> RevertResult:
    names.actor(actor)
    names.check_forbidden(rev, "commit")
    if rev.startswith("-") or not rev.strip():
        raise InvalidInput(f"invalid commit {rev!r}")
    got = repo.store.read(f"{rev}^{{commit}}")
    if got is None:
        raise NotFound(f"no commit {rev!r}")
    sha = got[0]
    target = read_log(repo.git, sha, max_count=1)[0]
    if len(target.parents) != 1:
        raise InvalidInput(f"{sha[:7]} is a merge or root commit; revert the edits it brought")
    lines = [f"{T.CARD}: {target.get(T.CARD)}"] if target.get(T.CARD) else []
    if target.get(T.SECTION):
        lines.append(f"{T.SECTION}: {target.get(T.SECTION)}")
    lines += [f"{T.REVERTS}: {sha}", f"{T.ACTOR}: {actor}"]
    message = (
        f'Revert "{target.subject}"\n\nThis reverts commit {sha}.\n\n' + "\n".join(lines) + "\n"
    )

    def plan(tip: Sha, _root: Sha) -> Plan:
        if repo.git.run("merge-base", "--is-ancestor", sha, tip, check=False).returncode:
            raise NotFound(f"{sha[:7]} is not on {branch!r}")
        tree, paths = transplant(repo, tip, [(sha, target.parents[0])])
        return commit_plan(repo, tip, tree, paths, message)

    done = publish(repo, branch, plan, f"gitmem revert: {sha[:12]}")
    assert done is not None
    return RevertResult(done.commit, sha, done.paths)
