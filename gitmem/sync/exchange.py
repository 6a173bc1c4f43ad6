"""``gitmem sync [REMOTE]``: exchange memory with any git remote without losing an edit.

One round, step by step (``_round``): fetch the remote's ``main`` into a private ref,
check its history (a rewritten remote is refused; nothing it brings puts a symlink or a
submodule where memory lives; nothing that leaves carries a secret), integrate
(``integrate.py``: a fast-forward, or a merge commit made section by section, main's
working tree following under the working-tree lock), push (never forced; a push lost to
another machine starts another round), record what was synced; then, when main moved,
the index is refreshed. Local commits keep their shas, so session branches, reviews and
``Gitmem-Reverts`` trailers that name them stay valid.

When the same section was edited on both sides the round stops and ``state.py`` keeps
both versions: main stays as it was, both tips are kept under
``refs/gitmem/conflict/{local,remote}``, the state goes to
``.git/gitmem/sync-state.json`` and, when main is checked out, the card in the working
tree shows both versions between conflict markers. ``--continue`` takes the person's
resolution (in the working tree or committed on main) and finishes; ``--abort`` puts
everything back.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field, replace

from gitmem.errors import Conflict, GitError, InvalidInput, NotFound
from gitmem.git.runner import Sha
from gitmem.index import build as index
from gitmem.memory import refs
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops import remote as remote_mod
from gitmem.ops.merge import merge_trees
from gitmem.ops.transplant import changed_paths
from gitmem.ops.worktree import ensure_clean, worktree_guard
from gitmem.review import interrupted, team
from gitmem.sync import checks
from gitmem.sync import state as sync_state
from gitmem.sync.checks import RemoteRewritten
from gitmem.sync.integrate import (
    Integrated,
    MainMoved,
    commit_merge,
    integrate,
    merge_base,
    sides,
    stop,
)
from gitmem.sync.result import (
    SyncResult,
    behaviour_changes,
    held_settings,
    held_signers,
    incoming_unverified,
)

__all__ = ["RemoteRewritten", "SyncResult", "abort_sync", "continue_sync", "sync_repo"]

# A push refused because another machine pushed first is retried this many rounds, each
# after a random pause of up to BACKOFF * 2**round seconds (capped at BACKOFF_CAP): machines
# that raced once spread out instead of racing again.
MAX_ROUNDS = 12
BACKOFF = 0.02
BACKOFF_CAP = 0.4
_sleep = time.sleep  # module attributes, so a test can watch the pauses
_jitter = random.uniform


class _PushLost(Exception):
    """Another machine pushed first: fetch and integrate again."""

    def __init__(self, reason: str | None) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class _SoFar:
    """What the rounds of one sync have done so far (a lost push starts another)."""

    accept_redaction: bool
    received: int = 0
    merged: bool = False
    settled: list[str] = field(default_factory=list)  # decided elsewhere, archived here
    finished: list[str] = field(default_factory=list)  # interrupted decisions finished
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Done:
    """A round that pushed (or had nothing to push) and recorded it."""

    main: Sha
    sent: int
    out: team.Outgoing
    seen: team.View


def sync_repo(
    repo: MemoryRepo, remote: str = "origin", accept_redaction: bool = False
) -> SyncResult:
    """Exchange memory with the git remote ``remote``: fetch, integrate (fast-forward or
    a merge commit, section by section), push; never forced, never dropping a local
    commit. Returns a ``SyncResult``; the same section changed on both sides is status
    ``conflict``, not an exception. Raises ``Conflict`` (a stopped sync waits for
    ``continue_sync``/``abort_sync``, uncommitted edits), ``RemoteRewritten`` (the
    remote's history was rewritten: ``accept_redaction`` takes a ``gitmem redact``),
    ``NotFound`` (no such remote), ``RemoteError`` (exit 5: the remote cannot be
    reached or refused the push)."""
    where = remote_mod.url(repo, remote)
    state = sync_state.load(repo)
    if state is not None:
        raise Conflict(
            f"a sync with {state['remote']} stopped at a conflict; settle it and run "
            "`gitmem sync --continue`, or `gitmem sync --abort`"
        )
    before = repo.tip(MAIN)
    if before is None:
        raise NotFound("no main branch")
    so_far = _SoFar(accept_redaction)
    lost, fetched_again = "main moved here", False
    for attempt in range(MAX_ROUNDS):
        if attempt:
            _sleep(_jitter(0, min(BACKOFF_CAP, BACKOFF * 2**attempt)))
        try:
            done = _round(repo, remote, where, so_far)
        except RemoteRewritten:
            if fetched_again:
                raise
            # Another sync of this clone may have pushed and recorded its merge since
            # this round fetched: what we synced last is then newer than the fetch.
            fetched_again = True
            continue
        except MainMoved:
            continue
        except _PushLost as race:
            lost = race.reason or lost
            continue
        if isinstance(done, SyncResult):
            return done  # stopped at a conflict
        return _report(repo, remote, where, before, so_far, done, attempt + 1)
    raise Conflict(
        f"{remote} kept moving during sync ({MAX_ROUNDS} rounds, last: {lost}); nothing was "
        "lost, run `gitmem sync` again"
    )


def _round(repo: MemoryRepo, remote: str, where: str, so_far: _SoFar) -> SyncResult | _Done:
    """Fetch, check, integrate, push, record. The private ``fetched`` ref goes with the
    record, or when the round ends any other way."""
    fetched = refs.sync(remote, "fetched")
    recorded = False
    try:
        theirs = remote_mod.fetch_main(repo, remote, fetched, where, team.fetch_specs(remote))
        checks.history(repo, remote, theirs, so_far.accept_redaction)
        so_far.accept_redaction = False  # taken: the next rounds are ordinary ones
        ours = repo.tip(MAIN)
        counted = sides(repo, ours, theirs) if ours else None  # what each check has to read
        if counted is None or counted[2]:
            checks.incoming(repo, remote, ours, theirs)  # refused first, when both are
        if counted is None or counted[1]:
            checks.outgoing_main(repo, remote, ours, theirs)
        seen, mine = _take_decisions(repo, remote, so_far)
        if theirs is not None:  # held before main or gitmem.toml here can change
            held_settings(repo, remote, repo.tip(MAIN), theirs, incoming=True)
        step = integrate(repo, remote, theirs, counted)
        if isinstance(step, SyncResult):
            return step
        so_far.received += step.received
        so_far.merged = so_far.merged or step.how == "merge"
        done = _push(repo, remote, where, theirs, step, seen, mine)
        _record(repo, remote, done.main)
        recorded = True
        return done
    finally:
        if not recorded:
            repo.git.run("update-ref", "-d", fetched, check=False)


def _take_decisions(repo: MemoryRepo, remote: str, so_far: _SoFar) -> tuple[team.View, team.View]:
    """Finish the decisions a stopped process left, and take in those made on another
    machine; the remote's sessions and decisions, as fetched, and this clone's after."""
    so_far.finished += interrupted.finish_interrupted(repo, remote)
    mine, seen = team.views(repo, remote)
    settled, so_far.notes = team.settle(repo, remote, seen, mine)
    so_far.settled += settled
    if seen.decisions.keys() - mine.decisions.keys():  # settle may have recorded some
        mine = team.view(repo)
    return seen, mine


def _push(
    repo: MemoryRepo,
    remote: str,
    where: str,
    theirs: Sha | None,
    step: Integrated,
    seen: team.View,
    mine: team.View,
) -> _Done:
    """Push main (when the remote lacks some of it), sessions and decisions, in one
    atomic push, once what leaves is checked; ``_PushLost`` when another push won."""
    ours = repo.tip(MAIN)
    assert ours is not None
    out = team.outgoing(repo, remote, ours if step.sent else None, seen, mine)
    checks.outgoing_sessions(repo, remote, out, theirs)
    if out.updates:
        pushed = remote_mod.push_updates(repo, remote, out.updates, where)
        if not pushed.ok:
            raise _PushLost(pushed.rejected)
    return _Done(ours, step.sent, out, seen)


def _record(repo: MemoryRepo, remote: str, main: Sha) -> None:
    """One transaction: forget the fetched ref, remember what the remote now holds."""
    fetched, last = refs.sync(remote, "fetched"), refs.sync(remote, "last-synced")
    # (deleting a ref that is not there is no error: no read first)
    tx = f"delete {fetched}\nupdate {last} {main}\ndelete {refs.sync(remote, 'rewritten')}\n"
    done, err = repo.ref_tx.apply(tx)  # (the process a move of main started, if one did)
    if not done:
        raise GitError(["git", "update-ref", "--stdin"], 1, err)


def _report(
    repo: MemoryRepo,
    remote: str,
    where: str,
    before: Sha,
    so_far: _SoFar,
    done: _Done,
    rounds: int,
) -> SyncResult:
    """Refresh the index at main and say what the sync did."""
    out, seen = done.out, done.seen
    if out.published or out.decided:  # pushed: the tracking refs say so now
        remote_mod.fetch_refs(repo, remote, team.fetch_specs(remote), where)
        seen = team.view(repo, remote)
    if done.main != before:  # (main as it was: the next read refreshes its index, if need be)
        index.refresh(repo, MAIN)
    finished = [f"finished the interrupted decision on {sid}" for sid in so_far.finished]
    note = "".join(f"\n{n}" for n in finished + so_far.notes + out.notes)
    waiting = team.waiting(repo, remote, seen, out.mine)  # the push moved no local ref
    if not (so_far.received or done.sent or out.published or out.decided or so_far.settled):
        return SyncResult(
            remote, "up-to-date", done.main, note=note, waiting=waiting, rounds=rounds
        )
    held = [*held_settings(repo, remote, before, done.main), *held_signers(repo, remote, done.main)]
    return SyncResult(
        remote,
        "synced",
        done.main,
        so_far.received,
        done.sent,
        so_far.merged,
        note=note,
        behaviour=behaviour_changes(repo, before, done.main) if so_far.received else [],
        before=before,
        held=[h.to_json() for h in held],
        unverified=incoming_unverified(repo, before, done.main) if so_far.received else [],
        published=out.published,
        decided=out.decided,
        settled=so_far.settled,
        waiting=waiting,
        rounds=rounds,
    )


def continue_sync(repo: MemoryRepo) -> SyncResult:
    """Finish a sync stopped at a conflict with the person's resolution (the files as
    they are now), then push. Returns a ``SyncResult`` (``conflict`` again while a section is still
    changed on both sides). Raises ``InvalidInput`` when no sync is waiting, ``Conflict``
    when main moved meanwhile or a card has uncommitted edits."""
    state = sync_state.load(repo)
    if state is None:
        raise InvalidInput("no sync is waiting for --continue")
    remote, theirs = state["remote"], Sha(state["theirs"])
    with worktree_guard(repo, MAIN) as live:
        ours = repo.tip(MAIN)
        if ours is None:
            raise NotFound("no main branch")
        resolved = sync_state.resolutions(repo, state, ours, live)
        base = merge_base(repo, ours, theirs, remote)
        changed = changed_paths(repo, base, theirs)
        if live:
            ensure_clean(repo, [p for p in changed if p not in resolved])
        labels = (f"{MAIN} (this machine)", f"{remote}/main")
        merged = merge_trees(repo, base, ours, theirs, labels, resolved, changed)
        if merged.conflicts:
            return stop(repo, remote, ours, theirs, merged, live)
        try:
            n = int(repo.git.out("rev-list", "--count", f"{ours}..{theirs}") or 0)
            commit_merge(repo, remote, ours, theirs, merged, live, sorted(resolved), n)
        except MainMoved:
            raise Conflict(
                "main moved while the sync was continued; run `gitmem sync --continue` again"
            ) from None
    sync_state.clear(repo)
    done = sync_repo(repo, remote)
    changed = behaviour_changes(repo, ours, done.main)
    held = [h.to_json() for h in held_settings(repo, remote, ours, done.main)]
    if not changed:
        return done
    return replace(done, behaviour=changed, before=ours, held=done.held + held)


def abort_sync(repo: MemoryRepo) -> SyncResult:
    """Undo a sync stopped at a conflict: the working-tree files it wrote go back, its refs
    and state go. Returns a ``SyncResult`` (status ``aborted``). Raises ``InvalidInput``
    when no sync is stopped."""
    state = sync_state.load(repo)
    if state is None:
        raise InvalidInput("no sync to abort")
    with worktree_guard(repo, MAIN) as live:
        note = sync_state.undo(repo, state, repo.tip(MAIN), live)
    return SyncResult(state["remote"], "aborted", repo.tip(MAIN), note=note)
