"""Deciding on a pending session: accept all of it, some commits or some hunks, or reject it.

What is accepted lands on ``main`` through ``land.land`` with each commit's
message and trailers, so an accepted hunk keeps the index entry of its commit and
a commit whose hunks were all left out lands nothing (its entry never reaches the
index). Partial acceptance first rebuilds the session as a chain of commits
holding only the accepted changes, on the session's own base, then lands that
chain; nothing touches the person's working tree or index except through
``refs.sync_worktree`` after main moved. Every check (state, numbers, uncommitted
edits) runs before anything is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from gitmem.errors import Conflict, GitmemError, InvalidInput
from gitmem.features import session_live, session_scope
from gitmem.git.runner import Sha
from gitmem.index import build as index
from gitmem.memory import refs, secrets
from gitmem.memory import trailers as T
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops import hunks as H
from gitmem.ops import linked_worktrees
from gitmem.ops.history import read_log
from gitmem.ops.land import check_lands, land
from gitmem.ops.merge import land_tree
from gitmem.ops.worktree import checked_out, ensure_clean
from gitmem.review import decision_intent, team
from gitmem.review import session_branches as sessions
from gitmem.review.pending import ReviewCommit, SessionView, load_session
from gitmem.wording import count

# What a decision lands: commit -> None (all of it) or the hunks to keep; a commit not in
# the selection is left out.
Selection = dict[Sha, tuple[H.Hunk, ...] | None]


@dataclass(frozen=True)
class Decision:
    """A review decision: accepted, partial or rejected; the ref that keeps the session's
    commits, the commits landed on main, the edits left out, the working tree's state."""

    session: str
    action: str  # accepted | partial | rejected
    archived: str  # the ref that keeps the session's original commits
    landed: list[str]  # new commits on main
    left_out: list[str]  # session edits not landed, or landed only in part
    worktree: str  # what happened to the working tree
    edits_landed: int = 0  # of ``landed``, the memory edits (not the transcript's commit)

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def pending_session(
    repo: MemoryRepo, session_id: str, expect_tip: str | None = None
) -> SessionView:
    """The ``SessionView`` of a session still waiting for a decision; refuses one decided
    already, one whose last decision was stopped half-way, or one whose tip is no longer
    ``expect_tip``."""
    _not_interrupted(repo, session_id)
    view = load_session(repo, session_id)
    if not view.ref.pending:
        raise InvalidInput(f"session {view.ref.id} was {view.ref.state} already; nothing to decide")
    if expect_tip and view.ref.tip != expect_tip:
        raise Conflict(f"session {view.ref.id} changed while it was reviewed; review it again")
    pid = session_live.running(repo, view.ref.id)
    if pid is not None:  # it may still write: decided now, main would miss its last edits
        raise Conflict(
            f"session {view.ref.id} is still running (process {pid}); decide on it once it ended"
        )
    if view.ref.ref.startswith("refs/heads/"):
        branch = view.ref.ref.removeprefix("refs/heads/")
        if checked_out(repo, branch):
            raise InvalidInput(f"{view.ref.ref} is checked out; switch to main first")
        elsewhere = linked_worktrees.others(repo, branch)
        if elsewhere:
            raise InvalidInput(
                f"{branch} is checked out in {elsewhere[0]}; switch it to main first"
            )
    return view


def plan_all(view: SessionView) -> Selection:
    return {c.sha: None for c in view.commits}


def plan_commits(view: SessionView, revs: Sequence[str]) -> Selection:
    """The transcript and the named edits (by sha or unique prefix)."""
    plan: Selection = {c.sha: None for c in view.commits if c.transcript}
    for rev in revs:
        found = [c for c in view.edits if len(rev) >= 4 and c.sha.startswith(rev.lower())]
        if len(found) != 1:
            why = "is ambiguous" if found else "is not an edit"
            raise InvalidInput(f"commit {rev!r} {why} in session {view.ref.id}")
        plan[found[0].sha] = None
    return plan


def plan_hunks(view: SessionView, numbers: Sequence[int]) -> Selection:
    """The transcript and the hunks numbered as ``gitmem review ID`` shows them."""
    numbered = view.hunks()
    bad = sorted({n for n in numbers if not 1 <= n <= len(numbered)})
    if bad:
        raise InvalidInput(
            f"hunk {', '.join(map(str, bad))} out of range: session {view.ref.id} has "
            f"{count(len(numbered), 'hunk')} (1-{len(numbered)})"
            if numbered
            else f"session {view.ref.id} has no hunks to choose from"
        )
    plan: Selection = {c.sha: None for c in view.commits if c.transcript}
    chosen = set(numbers)
    for c in view.edits:
        mine = [h for h in numbered if h.commit is c]
        keep = tuple(h.hunk for h in mine if h.number in chosen)
        if keep:
            plan[c.sha] = None if len(keep) == len(mine) else keep
    return plan


def _touched(view: SessionView, plan: Selection) -> list[str]:
    paths = {f.path for c in view.commits if c.sha in plan for f in c.files}
    return sorted(paths)


def _partial_message(message: str, kept: int, total: int) -> str:
    note = f"Accepted in part in review: {kept} of {total} hunks."
    head, sep, block = T.without_digest(message).rstrip("\n").rpartition("\n\n")
    if not sep:  # no trailer block: the note goes after the subject
        return f"{block}\n\n{note}\n"
    return f"{head}\n\n{note}\n\n{block}\n"


def _cut_down(repo: MemoryRepo, parent: Sha, c: ReviewCommit, keep: tuple[H.Hunk, ...]) -> Sha:
    """The tree of ``parent`` with only the ``keep`` hunks of ``c`` applied."""
    root = repo.store.read(f"{parent}^{{tree}}")
    tree = root.sha if root else None
    for f in c.files:
        mine = [h for h in keep if h.path == f.path]
        if not mine:
            continue
        raw = repo.store.read_blob(f"{parent}:{f.path}")
        text = raw.decode("utf-8", "surrogateescape") if raw is not None else None
        try:
            new = H.apply(text, mine).encode("utf-8", "surrogateescape")
        except H.HunkDoesNotApply as err:
            raise Conflict(
                f"commit {c.sha[:7]} does not apply without what was left out before it ({err}); "
                "accept both or neither"
            ) from None
        if f.removed and len(mine) == len(f.hunks):
            tree = repo.store.update_path(tree, f.path, None)
        else:
            tree = repo.store.update_path(tree, f.path, repo.store.write("blob", new))
    return tree or repo.store.write_tree([])


def build_chain(repo: MemoryRepo, view: SessionView, plan: Selection) -> list[Sha]:
    """The session's commits holding only what the plan keeps, on the session's base."""
    if view.base is None:
        return []
    parent, chain = view.base, []
    for c in view.commits:
        if c.sha not in plan:
            continue
        keep = plan[c.sha]
        if keep is None and c.commit.parents == (parent,):
            chain.append(c.sha)  # unchanged so far: the original commit itself
            parent = c.sha
            continue
        raw = repo.store.read_commit(c.sha)
        if keep is None:
            try:
                tree, _ = land_tree(repo, parent, [(raw.parents[0], raw.sha)])
            except Conflict:
                tree = _cut_down(repo, parent, c, tuple(h for f in c.files for h in f.hunks))
            message = raw.message
        else:
            tree = _cut_down(repo, parent, c, keep)
            total = sum(len(f.hunks) for f in c.files)
            message = _partial_message(raw.message, len(keep), total)
        parent = repo.write_commit(tree, [parent], message, author=raw.author)
        chain.append(parent)
    return chain


def _check_secrets(repo: MemoryRepo, view: SessionView, plan: Selection) -> None:
    """What would land on main is scanned first: the added lines of each hunk of memory
    (transcripts are checked by `gitmem sync` and `gitmem scan`) and each index entry."""
    texts: list[tuple[str, str]] = []
    for c in view.commits:
        if c.sha not in plan or c.transcript:
            continue
        keep = plan[c.sha]
        chosen = keep if keep is not None else tuple(h for f in c.files for h in f.hunks)
        for h in chosen:
            added = "\n".join(ln[1:] for ln in h.lines if ln.startswith("+"))
            texts.append((f"{h.path} (commit {c.sha[:7]}) added", added))
        for key in (T.SUMMARY, T.KEYWORDS):
            texts.append((f"{key} of commit {c.sha[:7]}", c.commit.get(key) or ""))
    secrets.check(texts, repo.config.secrets_allow)


def _archive(repo: MemoryRepo, view: SessionView, action: str) -> str:
    where = _claimed_on(repo, view)
    if where:  # claimed on the remote already: keep this clone's copy
        return team.record(repo, view.ref.id, view.ref.tip, action, where)
    return sessions.archive(
        repo,
        view.ref.id,
        view.ref.tip,
        prefix=refs.DECIDED[action],
        reason=f"gitmem review: {action}",
    )


def _claimed_on(repo: MemoryRepo, view: SessionView) -> str | None:
    """The remote a decision on this session is claimed on: the one it came from, or, for
    this machine's own session, the remote it was published to when this clone syncs with
    it (a branch pushed with ``--push`` to a forge only is decided here alone)."""
    if view.ref.remote is None or view.ref.state == "remote":
        return view.ref.remote
    synced = repo.git.out("for-each-ref", "--format=%(refname)", refs.SYNC)
    for ref in synced.split():
        where = refs.synced_remote(ref)
        if where and repo.store.resolve(refs.tracking(where, "session") + view.ref.id):
            return where
    return None


def _not_interrupted(repo: MemoryRepo, session_id: str) -> None:
    """Refuse a decision on a session whose last one was stopped half-way: it may have
    landed already, and deciding again would land it twice or misreport it. One that
    landed is recorded by `gitmem recover`; a claim on a remote that did not land yet is
    finished or dropped by the next sync, which asks the remote whether it holds it."""
    left = decision_intent.find(repo, session_id)
    if left is None:
        return
    landed = landed_already(repo, session_id, str(left["base"]))
    finish = "`gitmem sync`" if left["remote"] and not landed else "`gitmem recover`"
    raise Conflict(f"a decision on session {session_id} was interrupted; {finish} finishes it")


def _claim(repo: MemoryRepo, view: SessionView, action: str) -> None:
    """A session a remote has is decided there first: a later decision elsewhere is refused."""
    where = _claimed_on(repo, view)
    if where:
        try:
            team.claim(repo, where, view.ref.id, view.ref.tip, action)
        except Conflict:
            decision_intent.clear(repo, view.ref.id)  # refused: nothing to finish
            raise


def _worktree_note(repo: MemoryRepo, landed: list[Sha]) -> str:
    if not landed:
        return "main is unchanged."
    if checked_out(repo, MAIN):
        return "main moved; the working tree follows it."
    head = repo.head_branch()
    where = f"branch {head}" if head else "a detached HEAD"
    linked = linked_worktrees.others(repo, MAIN)
    if linked:
        return f"main moved; it is checked out in {linked[0]}, which follows it."
    return f"main moved; your working tree is on {where} and was left alone."


def accept_session(
    repo: MemoryRepo,
    session_id: str,
    *,
    commits: Sequence[str] = (),
    hunks: Sequence[int] | None = None,
    expect_tip: str | None = None,
) -> Decision:
    """Land all of a pending session, or only the given ``commits`` (shas) or ``hunks``
    (numbers, as ``load_session(...).hunks()`` lists them), on main. Returns a
    ``Decision``. Raises ``NotFound`` (no such session), ``InvalidInput`` (not pending,
    unknown commits or hunk numbers, both given), ``DirtyCard`` (uncommitted edits to a
    card it lands), ``UnsafePath`` or ``ConfigError`` (it touches what a session may not,
    or brings what sync refuses: ``features/session_scope.py``), ``Conflict`` (the session moved
    since ``expect_tip``, or another machine decided first)."""
    view = pending_session(repo, session_id, expect_tip)
    session_scope.check(  # what sync refuses to receive, and what no session touches
        repo,
        view.ref.id,
        view.ref.tip,
        [c.commit for c in view.commits],
        view.changes,
        view.ref.remote,
    )
    if commits and hunks is not None:
        raise InvalidInput("choose by --commit or by --hunks, not both")
    plan = (
        plan_hunks(view, hunks)
        if hunks is not None
        else plan_commits(view, commits)
        if commits
        else plan_all(view)
    )
    _check_secrets(repo, view, plan)
    if checked_out(repo, MAIN):
        ensure_clean(repo, _touched(view, plan))  # before anything is written
    linked_worktrees.ensure_clean(repo, MAIN, _touched(view, plan))
    chain = build_chain(repo, view, plan)
    whole = [c.sha for c in view.edits if c.sha in plan and plan[c.sha] is None]
    left_out: list[str] = [c.sha for c in view.edits if c.sha not in whole]
    action = "partial" if left_out else "accepted"
    where = _claimed_on(repo, view)
    if where:  # a claim is published: what cannot land on main now is refused before it
        check_lands(repo, chain, MAIN)
    # what to finish if this is killed after the claim, or (a local session, where = "")
    # between main's move and the archive: `gitmem recover` finishes it
    decision_intent.save(repo, view, action, commits, hunks, where or "")
    try:
        _claim(repo, view, action)
        return finish_accept(repo, view, chain, action, left_out)
    except GitmemError:  # refused before main moved: nothing to finish
        if not where and not landed_already(repo, view.ref.id, view.base):
            decision_intent.clear(repo, view.ref.id)
        raise


def landed_already(repo: MemoryRepo, sid: str, base: str | None) -> bool:
    """Whether main has an edit of the session already (the landing ran before a stop);
    the session's transcript and usage commits, on main since it ended, are no edits."""
    since = f"{base}..{MAIN}" if base else MAIN
    return any(
        c.get(T.SESSION) == sid and c.get(T.LAYER) is None for c in read_log(repo.git, since)
    )


def finish_accept(
    repo: MemoryRepo, view: SessionView, chain: list[Sha], action: str, left_out: list[str]
) -> Decision:
    """What an acceptance does once claimed: land, record, refresh; clears its intent."""
    if view.ref.state == "remote":  # a gitmem session record published by a gitmem sync
        repo.record_own([c.sha for c in view.commits])
    landed = land(repo, chain, MAIN, f"gitmem review: accept {view.ref.id}")
    archived = _archive(repo, view, action)
    index.refresh(repo, MAIN)
    decision_intent.clear(repo, view.ref.id)  # nothing left to finish (none when unclaimed)
    edits = (
        sum(
            1
            for c in read_log(repo.git, landed[-1], max_count=len(landed), first_parent=True)
            if c.get(T.LAYER) is None
        )
        if landed
        else 0
    )
    return Decision(
        view.ref.id, action, archived, list(landed), left_out, _worktree_note(repo, landed), edits
    )


def reject_session(repo: MemoryRepo, session_id: str) -> Decision:
    """Set a pending session aside: nothing lands, its commits stay under
    refs/gitmem/rejected/. Returns a ``Decision``. Raises ``NotFound`` (no such session),
    ``InvalidInput`` (not pending), ``Conflict`` (another machine decided first)."""
    view = pending_session(repo, session_id)
    where = _claimed_on(repo, view)
    if where:
        decision_intent.save(repo, view, "rejected", (), None, where)
    _claim(repo, view, "rejected")
    archived = _archive(repo, view, "rejected")
    if where:
        decision_intent.clear(repo, view.ref.id)
    return Decision(
        view.ref.id, "rejected", archived, [], [c.sha for c in view.edits], "main is unchanged."
    )
