"""``gitmem revert COMMIT``: undo one edit with a commit that says which one it undoes.

A revert merges as sync does: card by card, section by section. Undoing an old
edit of one section succeeds whatever happened since to the card's other
sections; a section the edit touched that was changed since is a conflict named
by card and section, and nothing is written.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from gitmem.errors import Conflict, InvalidInput, NotFound
from gitmem.git.runner import Sha
from gitmem.memory import names
from gitmem.memory import trailers as T
from gitmem.memory.cards import card_of, sections
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops.history import Commit, read_log
from gitmem.ops.hunks import split_lines
from gitmem.ops.merge import TOP, merge_card, merge_file
from gitmem.ops.publish import PlannedCommit, commit_plan, publish
from gitmem.ops.transplant import apply_changes

LABELS = ("now", "reverted")


@dataclass(frozen=True)
class RevertResult:
    """A revert's commit, the commit it undid, and the paths it changed."""

    commit: Sha
    reverted: Sha
    paths: list[str]

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def revert_tree(
    repo: MemoryRepo, tip: Sha, pairs: list[tuple[Sha | None, Sha | None]]
) -> tuple[Sha, list[str]]:
    """The tree of ``tip`` with each (commit, parent) change undone in order; touched paths.

    Per file a three-way merge: base = the commit's version, ours = the tip's (as the
    undoing so far left it), theirs = the parent's. A card merges section by section.
    (``transplant``'s signature: None stands for the empty tree.)
    """
    return apply_changes(repo, tip, pairs, lambda *f: _undo(repo, *f))


def _undo(
    repo: MemoryRepo, path: str, base: bytes | None, ours: bytes | None, theirs: bytes | None
) -> bytes | None:
    """One file the tip changed since the reverted commit: merged, or Conflict naming it."""
    card = card_of(path)
    if ours is None:
        raise Conflict(f"{path} was removed since")
    if base is None:
        raise Conflict(f"{path} was created again since")
    if theirs is None and card is not None:
        return _uncreate(base, ours, card)
    merged, conflict = merge_file(repo, path, base, ours, theirs, LABELS)
    if conflict is not None:
        raise Conflict(f"{_where(card or path, conflict.sections)} was changed since")
    return merged


def _uncreate(base: bytes, ours: bytes, card: str) -> bytes | None:
    """Undo the creation of a card edited since: its sections go, later ones stay.

    The card's title stays with the sections that remain; with none left the card goes.
    """
    was = base.decode("utf-8", "surrogateescape")
    found = sections(was)
    if not found:  # a card of text only, edited since: nothing to keep apart
        raise Conflict(f"{card} was changed since")
    top = "".join(split_lines(was)[: found[0].start])
    text, clashes = merge_card(was, ours.decode("utf-8", "surrogateescape"), top, LABELS)
    if clashes:
        raise Conflict(f"{_where(card, tuple(clashes))} was changed since")
    if not sections(text) and text.strip() == top.strip():
        return None
    return text.encode("utf-8", "surrogateescape")


def _where(name: str, ids: tuple[str, ...]) -> str:
    shown = ["its title" if s == TOP else s for s in ids]
    return f"{name} § {', '.join(shown)}" if shown else name


def revert_target(repo: MemoryRepo, rev: str, branch: str | None = None) -> Commit:
    """The commit ``rev`` names, as ``revert_commit`` takes it (and, with ``branch``, on
    that branch now). Raises ``NotFound`` (no such commit, not on ``branch``),
    ``InvalidInput`` (a merge or root commit, a bad name)."""
    names.check_forbidden(rev, "commit")
    if rev.startswith("-") or not rev.strip():
        raise InvalidInput(f"invalid commit {rev!r}")
    got = repo.store.read(f"{rev}^{{commit}}")
    if got is None:
        raise NotFound(f"no commit {rev!r}")
    target = read_log(repo.git, got.sha, max_count=1)[0]
    if len(target.parents) != 1:
        raise InvalidInput(f"{got.sha[:7]} is a merge or root commit; revert the edits it brought")
    tip = repo.tip(branch) if branch else None
    if (
        branch
        and repo.git.run("merge-base", "--is-ancestor", got.sha, tip or "", check=False).returncode
    ):
        raise NotFound(f"{got.sha[:7]} is not on {branch!r}")
    return target


def revert_commit(
    repo: MemoryRepo,
    rev: str,
    *,
    branch: str = MAIN,
    actor: str = "cli",
    session: str | None = None,
) -> RevertResult:
    """Undo the commit ``rev`` on ``branch`` in one new commit with a ``Gitmem-Reverts``
    trailer, so the index holds what it held before (``session``: the session it is made
    in, as a chat's /undo is, named in the log). Returns a ``RevertResult``. Raises
    ``NotFound`` (no such commit, or nothing of it left to undo), ``InvalidInput`` (a merge
    or root commit, a bad name), ``Conflict`` (a section changed since, or uncommitted
    edits to the card)."""
    names.actor(actor)
    target = revert_target(repo, rev)
    sha = target.sha
    lines = [f"{T.CARD}: {target.get(T.CARD)}"] if target.get(T.CARD) else []
    if target.get(T.SECTION):
        lines.append(f"{T.SECTION}: {target.get(T.SECTION)}")
    lines.append(f"{T.REVERTS}: {sha}")
    if session is not None:
        lines.append(f"{T.SESSION}: {names.session(session)}")
    lines.append(f"{T.ACTOR}: {actor}")
    message = (
        f'Revert "{target.subject}"\n\nThis reverts commit {sha}.\n\n' + "\n".join(lines) + "\n"
    )

    def plan(tip: Sha, root: Sha) -> PlannedCommit:
        if repo.git.run("merge-base", "--is-ancestor", sha, tip, check=False).returncode:
            raise NotFound(f"{sha[:7]} is not on {branch!r}")
        try:
            tree, paths = revert_tree(repo, tip, [(sha, target.parents[0])])
        except Conflict as err:
            raise Conflict(f"{sha[:7]} cannot be reverted cleanly: {err}") from None
        if tree == root:
            raise NotFound(_nothing_left(repo, sha, tip, branch))
        return commit_plan(repo, tip, tree, paths, message)

    done = publish(repo, branch, plan, f"gitmem revert: {sha[:12]}")
    assert done is not None
    return RevertResult(done.commit, sha, done.paths)


def _nothing_left(repo: MemoryRepo, sha: Sha, tip: Sha, branch: str) -> str:
    """Why a revert would change nothing, naming the revert that undid the edit when there is one."""
    found = read_log(repo.git, tip, extra=["--fixed-strings", f"--grep={sha}"])
    undone = [c for c in found if sha in c.reverts]
    by = f" (reverted by {undone[0].sha[:7]})" if undone else ""
    return f"nothing left to revert: {sha[:7]} is undone on {branch} already{by}"
