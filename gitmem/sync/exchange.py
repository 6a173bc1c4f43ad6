"""``gitmem sync [REMOTE]``: exchange memory with any git remote without losing an edit.

One round: fetch the remote's ``main`` into a private ref, check that it still
contains what we last synced (a rewritten remote is refused), integrate, push
(never forced; a push refused because someone pushed first starts another
round), then record what was synced and refresh the derived index.

Integration never rewrites a local commit: a fast-forward when only one side
moved, else a merge commit built with plumbing (``merge.merge_trees``). Local
commits keep their shas, so session branches, reviews and ``Gitmem-Reverts``
trailers that name them stay valid. When the same section was edited on both
sides the round stops and ``sync_state.py`` keeps both versions: main stays as
it was, both tips are kept under ``refs/gitmem/conflict/{local,remote}``, the
state goes to ``.git/gitmem/sync-state.json`` and, when main is checked out, the
card in the working tree shows both versions between conflict markers.
``--continue`` takes the person's resolution (in the working tree or committed
on main) and finishes; ``--abort`` puts everything back.

Refs: ``refs/gitmem/sync/<remote>/last-synced`` (the remote's main after our
last sync), ``refs/gitmem/sync/<remote>/fetched`` (only during a round).
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from functools import partial

from gitmem.errors import Conflict, GitmemError, InvalidInput, NotFound, UnsafePath
from gitmem.git import progress
from gitmem.git.runner import Sha
from gitmem.index import build as index
from gitmem.memory import remote as remote_mod
from gitmem.memory.merge import FileConflict, Merged, merge_trees
from gitmem.memory.publish import PlannedCommit, Published, publish_once
from gitmem.memory.repo import MAIN, MemoryRepo, where_memory_lives
from gitmem.memory.transplant import changed_paths
from gitmem.memory.worktree import ensure_clean, worktree_guard
from gitmem.review import team, team_refs
from gitmem.sync import state as sync_state
from gitmem.sync.first_fetch import sync_ref as sync_ref
from gitmem.wording import count

# A push refused because another machine pushed first is retried this many rounds, each
# after a random pause of up to BACKOFF * 2**round seconds (capped at BACKOFF_CAP): machines
# that raced once spread out instead of racing again.
MAX_ROUNDS = 12
BACKOFF = 0.02
BACKOFF_CAP = 0.4
_sleep = time.sleep  # module attributes, so a test can watch the pauses
_jitter = random.uniform


class RemoteRewritten(Conflict):
    """The remote's main no longer contains what we synced last."""


class _MainMoved(Exception):
    """main moved under us (a concurrent writer): do the round again."""


@dataclass(frozen=True)
class SyncResult:
    """A sync's outcome: ``status`` up-to-date, synced, conflict (both versions kept until
    ``continue_sync`` or ``abort_sync``) or aborted; commits received and sent, sessions
    published and decided, and ``text()`` for people."""

    remote: str
    status: str  # up-to-date | synced | conflict | aborted
    main: str | None
    received: int = 0
    sent: int = 0
    merged: bool = False
    conflicts: list[FileConflict] = field(default_factory=list)
    note: str = ""
    # Files that change how the agent behaves (persona, settings) that this sync changed,
    # and the commits before and after, so a person can look: `git diff BEFORE AFTER -- ...`.
    behaviour: list[str] = field(default_factory=list)
    before: str | None = None
    # Sessions: published here (their branch created or grown on the remote), decisions this
    # machine sent, sessions archived here because they were decided on another machine.
    published: list[str] = field(default_factory=list)
    decided: list[str] = field(default_factory=list)
    settled: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)  # remote sessions to review here
    rounds: int = 1  # push rounds it took (more than one: another machine pushed first)

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def text(self) -> str:
        r, at = self.remote, (self.main or "")[:7]
        if self.status == "conflict":
            return conflict_report(r, self.conflicts, self.note)
        if self.status == "aborted":
            return (
                f"sync with {r} aborted: main and the working tree are as they were.{self.note}\n"
            )
        if self.status == "up-to-date":
            return f"main is up to date with {r} ({at}).{self.note}\n" + self.sessions_text()
        how = ", merged" if self.merged else ""
        return (
            (
                f"synced with {r}: received {count(self.received, 'commit')}, sent {self.sent} "
                f"(main at {at}{how}).{self.note}\n"
            )
            + self.sessions_text()
            + self.behaviour_text()
        )

    def sessions_text(self) -> str:
        out = ""
        if self.published:
            out += f"published {count(len(self.published), 'pending session')}: {', '.join(self.published)}\n"
        if self.decided:
            out += f"sent the decision on {', '.join(self.decided)}\n"
        if self.settled:
            out += (
                f"decided on another machine, archived here: {', '.join(self.settled)} "
                "(`gitmem review --all`)\n"
            )
        if self.waiting:
            n = len(self.waiting)
            out += (
                f"{count(n, 'session')} from "
                f"{'another machine waits' if n == 1 else 'other machines wait'} "
                f"for review: {', '.join(self.waiting)} (`gitmem review`)\n"
            )
        return out

    def behaviour_text(self) -> str:
        if not self.behaviour:
            return ""
        files = " ".join(self.behaviour)
        they = "they change" if len(self.behaviour) > 1 else "it changes"
        return (
            f"{_joined(self.behaviour)} changed by {self.remote}: {they} how the agent behaves; "
            f"see what changed with `git diff {(self.before or '')[:12]} {(self.main or '')[:12]} "
            f"-- {files}`\n"
        )


# What the agent follows rather than reads: a sync that changes them says so.
BEHAVIOUR_FILES = ("persona.md", "gitmem.toml")


def _joined(paths: list[str]) -> str:
    return paths[0] if len(paths) == 1 else f"{', '.join(paths[:-1])} and {paths[-1]}"


def behaviour_changes(repo: MemoryRepo, before: str | None, after: str | None) -> list[str]:
    """The behaviour files that differ between ``before`` and ``after`` (main's tips);
    kept for the open repo (two commits' trees never change)."""
    if before is None or after is None or before == after:
        return []
    key = ("behaviour", f"{before}..{after}")
    known = repo.memo.get(key)
    if isinstance(known, list):
        return list(known)
    out = repo.git.out("diff", "--name-only", "-z", before, after, "--", *BEHAVIOUR_FILES)
    found = [p for p in BEHAVIOUR_FILES if p in out.split("\0")]
    repo.memo[key] = found
    return list(found)


def conflict_report(remote: str, conflicts: list[FileConflict], note: str) -> str:
    lines = [f"sync with {remote} stopped: the same part of memory was edited here and there:"]
    lines += [f"  {c.label():<40}  {c.path}" for c in conflicts]
    lines += [
        f"Both versions are kept: this machine's in main, {remote}'s in {sync_state.REMOTE_REF}.",
        note.strip() or "main is not checked out: commit the resolution on main.",
        "Keep what you want of both, then run `gitmem sync --continue`;",
        "`gitmem sync --abort` puts everything back as it was.",
    ]
    return "\n".join(lines) + "\n"


# -- small git helpers -----------------------------------------------------------
def _ancestor(repo: MemoryRepo, a: str, b: str) -> bool:
    return repo.git.run("merge-base", "--is-ancestor", a, b, check=False).returncode == 0


def _count(repo: MemoryRepo, a: str, b: str) -> int:
    return int(repo.git.out("rev-list", "--count", f"{a}..{b}") or 0)


def _divergence(
    repo: MemoryRepo, ours: str, theirs: str | None, walk: _Walk | None = None
) -> tuple[int, int, Sha | None]:
    """(commits only we have, commits only they have, their merge base when one walk shows
    it), from one ``git rev-list``. The base is given when both sides have commits of
    their own and one commit bounds them (``--boundary``): every way down from either tip
    into the shared history passes through it, so it descends from every common ancestor
    and is what ``git merge-base`` says. Otherwise None (ask ``_merge_base``). ``walk``:
    that rev-list, begun earlier; taken when it walked these very tips."""
    if theirs is None:
        return int(repo.git.out("rev-list", "--count", ours) or 0), 0, None
    out = walk.out(ours, theirs) if walk is not None else None
    if out is None:
        out = repo.git.out(*_walk_args(ours, theirs))
    lines = out.split("\n") if out else []
    left = sum(1 for line in lines if line.startswith("<"))
    right = sum(1 for line in lines if line.startswith(">"))
    bounds = [line[1:] for line in lines if line.startswith("-")]
    base = Sha(bounds[0]) if left and right and len(bounds) == 1 else None
    return left, right, base


def _walk_args(ours: str, theirs: str) -> list[str]:
    return ["rev-list", "--left-right", "--boundary", f"{ours}...{theirs}"]


class _Walk:
    """``_divergence``'s walk of main's tip and the fetched one, begun while the round's
    checks run (git walks as they do); its output is read once and given only for the
    same two tips."""

    def __init__(self, repo: MemoryRepo, ours: Sha | None, theirs: Sha | None) -> None:
        self.tips = (ours, theirs)
        self.running = repo.git.start(*_walk_args(ours, theirs)) if ours and theirs else None
        self._out: str | None = None

    def out(self, ours: str, theirs: str) -> str | None:
        """What ``rev-list --left-right --boundary ours...theirs`` says, when this walk
        walked those tips; None otherwise (main moved meanwhile: walk again)."""
        if self.tips != (ours, theirs):
            self.stop()
            return None
        if self._out is None and self.running is not None:
            running, self.running = self.running, None
            self._out = running.out()
        return self._out

    def stop(self) -> None:
        if self.running is not None:
            self.running.stop()
            self.running = None


# -- one round ---------------------------------------------------------------------
def _check_history(
    repo: MemoryRepo, remote: str, theirs: Sha | None, accept_redaction: bool = False
) -> None:
    last = repo.store.resolve(sync_ref(remote, "last-synced"))
    if last is None or last == theirs or (theirs is not None and _ancestor(repo, last, theirs)):
        if accept_redaction:
            raise InvalidInput(
                f"{remote}/main was not redacted since the last sync: plain `gitmem sync`"
            )
        return
    from gitmem.sync import redact

    if theirs is not None and redact.redacted_as(repo, remote, last) is not None:
        if accept_redaction:
            redact.accept_redaction(repo, remote, theirs, last)
            return
        raise redact.RemoteRedacted(
            f"{remote}/main was rewritten by `gitmem redact` (secrets removed from history); "
            "nothing was changed here. Take the redacted history with "
            "`gitmem sync --accept-redaction`"
        )

    # The lease names what we just fetched: gitmem's fetch leaves refs/remotes/* alone, so
    # a bare --force-with-lease would compare with a stale tracking ref and be refused.
    lease = f"main:{theirs or ''}"
    raise RemoteRewritten(
        f"{remote}/main was rewritten: it no longer contains {last[:7]}, what we synced last; "
        f"nothing was changed here. To keep this history, put it back with "
        f"`git push --force-with-lease={lease} {remote} main`; to take theirs, start from a "
        "fresh clone",
        hint="gitmem never force-pushes and never drops a local commit",
    )


_UNSAFE_MODES = {"120000": "a symlink", "160000": "a submodule"}


def _check_both(
    repo: MemoryRepo,
    remote: str,
    ours: Sha | None,
    theirs: Sha | None,
    outgoing_check: Callable[[], None],
) -> None:
    """Refuse a remote history that puts a symlink or submodule where memory lives (one
    ``git log --raw`` over the commits we would receive; without a pathspec, which would
    make git compare each commit with its parent twice, once to simplify history and once
    for the diff, so the paths are picked here), with ``outgoing_check`` (the
    secret scan of what leaves) run while git lists them. Both refuse before anything
    changes here, and the incoming refusal is the one reported when both would refuse."""
    if theirs is None:
        outgoing_check()
        return
    args = [
        "log",
        "-m",
        "--raw",
        "-z",
        "--no-renames",
        "--no-abbrev",
        "--format=%x00%H",
        theirs,
        *([f"^{ours}"] if ours else []),
    ]
    listing = repo.git.start(*args)
    try:
        outgoing_check()
    finally:
        found = _unsafe(listing.out())  # read first: a refusal of what comes in goes first
        if found is not None:
            path, what, commit = found
            raise UnsafePath(
                f"{remote}/main brings {path} as {what} (commit {commit[:7]}); gitmem never "
                "follows one where it keeps memory; nothing was changed here",
                hint=f"fix it on {remote} with a commit that makes it a real file or folder",
            )


def _unsafe(out: str) -> tuple[str, str, str] | None:
    """The first (path, "a symlink" or "a submodule", commit) where memory lives in
    ``git log --raw -z``'s ``out``, or None. An entry's new mode stands between two spaces (":100644 120000
    <sha> <sha> T"): when neither unsafe mode does anywhere in ``out``, no entry has one,
    and a path that holds one only sends ``out`` through the full reading."""
    if not any(f" {mode} " in out for mode in _UNSAFE_MODES):
        return None
    return _read_unsafe(out)


def _read_unsafe(out: str) -> tuple[str, str, str] | None:
    """``_unsafe`` by reading every entry."""
    items, commit = out.split("\0"), ""
    for i, item in enumerate(items):
        item = item.strip("\n")
        if len(item) in (40, 64) and all(c in "0123456789abcdef" for c in item):
            commit = item
        elif item.startswith(":") and i + 1 < len(items):
            mode, path = item[1:].split(" ")[1], items[i + 1]
            if mode in _UNSAFE_MODES and where_memory_lives(path):
                return path, _UNSAFE_MODES[mode], commit
    return None


@dataclass(frozen=True)
class _Scanned:
    """During the fetch, main (at ``ours``) had ``commits`` beyond what the remote had
    when last seen; scanned, they carry no secret."""

    ours: Sha
    commits: frozenset[str]


def _scan_early(repo: MemoryRepo, remote: str) -> _Scanned | None:
    """The secret scan of what main has beyond the remote as last seen (the last sync,
    else the remote-tracking main), run while the fetch runs; None when there is no such
    commit or the scan found something (the exact scan after the fetch then decides)."""
    from gitmem.memory.scan import scan_log

    ours = repo.tip(MAIN)
    since = repo.store.resolve(sync_ref(remote, "last-synced")) or repo.store.resolve(
        f"refs/remotes/{remote}/main"
    )
    if ours is None or since is None:
        return None
    try:
        if scan_log(repo, ours, f"^{since}"):
            return None
        return _Scanned(ours, frozenset(repo.git.out("rev-list", ours, f"^{since}").split()))
    except GitmemError:
        return None


def _check_outgoing(
    repo: MemoryRepo,
    remote: str,
    theirs: Sha | None,
    early: _Scanned | None = None,
    walk: _Walk | None = None,
) -> None:
    """Refuse, before anything changes here, to send commits that carry a secret: those
    main has and ``theirs`` has not. ``early``: clean commits scanned during the fetch;
    when main is still where it was and every commit that would leave (the left side of
    the round's ``walk``) is among them, nothing is scanned again."""
    from gitmem.memory.scan import outgoing

    ours = repo.tip(MAIN)
    if ours is None or ours == theirs:
        return
    if early is not None and early.ours == ours and theirs is not None and walk is not None:
        out = walk.out(ours, theirs)
        leaving = {line[1:] for line in (out or "").split("\n") if line.startswith("<")}
        if out is not None and leaving <= early.commits:
            return
    outgoing(repo, remote, ours, theirs)


def _check_sessions_outgoing(
    repo: MemoryRepo, remote: str, out: team.Outgoing, theirs: Sha | None
) -> None:
    """The session branches this round publishes carry no secret either."""
    from gitmem.memory.scan import outgoing as refuse_secrets

    for update in out.updates:
        if update.new and update.ref.startswith("refs/heads/gitmem/session/"):
            base = [b for b in (update.old, theirs) if b]
            refuse_secrets(repo, remote, update.new, base[0] if base else None)


def _while_fetching(repo: MemoryRepo, remote: str) -> _Scanned | None:
    """Do, while a started fetch runs, what each round would do only once it has
    fetched: load the secret scan's modules, gitmem.toml (its allow list) and who commits
    a merge, and scan what main has beyond the remote as last seen (``_scan_early``). The
    round's work after the fetch is then git's and the merge's. A gitmem.toml that cannot
    be read is refused here, as the scan would refuse it, before anything changed."""
    _ = repo.config
    repo.load_identity()
    return _scan_early(repo, remote)


def _while_pushing(
    repo: MemoryRepo, held: contextlib.ExitStack, before: Sha | None, after: Sha
) -> None:
    """While git pushes: the working tree follows main (``held`` closes: the follow, then
    the lock let go), then the index at main's new tip is refreshed and the behaviour
    files changed since ``before`` are found. They depend on main here only, whatever the
    push's outcome (a lost push's next round folds in its own merge). A failure is left to
    the same work once the round is done, which reports it."""
    held.close()
    try:
        index.refresh(repo, MAIN)
        behaviour_changes(repo, before, after)
    except GitmemError:
        return


def _finish_interrupted(repo: MemoryRepo, remote: str) -> list[str]:
    """The decisions a stopped process left, finished (``review.decision_intent``). That
    module brings the whole review stack: a sync with no decision file never imports it."""
    folder = repo.git_dir / "gitmem" / "decisions"
    if not folder.is_dir() or next(folder.glob("*.json"), None) is None:
        return []
    from gitmem.review import decision

    return decision.finish_interrupted(repo, remote)


def _guard(held: contextlib.ExitStack | None, mine: contextlib.ExitStack, repo: MemoryRepo) -> bool:
    """Take the working-tree lock for main (``worktree_guard``) until ``held`` closes, or
    without ``held`` until ``mine`` does; whether main is checked out."""
    return (held or mine).enter_context(worktree_guard(repo, MAIN))


def _follow_later(held: contextlib.ExitStack | None, done: Published) -> None:
    """The deferred follow runs when ``held`` closes, before the lock is let go."""
    if held is not None and done.follow is not None:
        held.callback(done.follow)


def _fast_forward(
    repo: MemoryRepo, ours: Sha, theirs: Sha, held: contextlib.ExitStack | None = None
) -> None:
    paths = changed_paths(repo, ours, theirs)
    with contextlib.ExitStack() as mine:
        live = _guard(held, mine, repo)
        if live:
            ensure_clean(repo, paths)
        planned = PlannedCommit(paths, lambda: (theirs, {}))
        reason = "gitmem sync: fast-forward"
        done = publish_once(
            repo, MAIN, ours, planned, live=live, reason=reason, later=held is not None
        )
        if done is None:
            raise _MainMoved
        _follow_later(held, done)


def _merge_base(repo: MemoryRepo, ours: Sha, theirs: Sha, remote: str) -> Sha:
    proc = repo.git.run("merge-base", ours, theirs, check=False)
    if proc.returncode:
        raise Conflict(
            f"main and {remote}/main share no history; clone {remote} on this machine "
            "instead of syncing a separately created memory"
        )
    return Sha(proc.stdout.decode().strip())


def _commit_merge(
    repo: MemoryRepo,
    remote: str,
    ours: Sha,
    theirs: Sha,
    merged: Merged,
    live: bool,
    extra: list[str],
    n: int,
    held: contextlib.ExitStack | None = None,
) -> Sha:
    tree = merged.tree
    assert tree is not None
    message = (
        f"gitmem sync: merge {remote}/main\n\n"
        f"{count(n, 'commit')} from {remote} joined to the local ones; "
        "no local commit was rewritten.\n"
    )
    paths = sorted(set(merged.touched) | set(extra))
    planned = PlannedCommit(paths, lambda: (repo.write_commit(tree, [ours, theirs], message), {}))
    reason = f"gitmem sync: merge {remote}/main"
    done = publish_once(repo, MAIN, ours, planned, live=live, reason=reason, later=held is not None)
    if done is None:
        raise _MainMoved
    _follow_later(held, done)
    return done.commit


def _stop(
    repo: MemoryRepo, remote: str, ours: Sha, theirs: Sha, merged: Merged, live: bool
) -> SyncResult:
    """Keep both versions and the state for --continue/--abort; main does not move."""
    written = sync_state.keep(repo, remote, ours, theirs, merged, live)
    note = ""
    if written:
        verb = "shows" if len(written) == 1 else "show"
        note = f"{', '.join(written)} in the working tree {verb} both versions between <<<<<<< and >>>>>>>."
    return SyncResult(remote, "conflict", ours, conflicts=merged.conflicts, note=note)


@dataclass(frozen=True)
class _Round:
    how: str  # none | fast-forward | merge
    received: int
    sent: int  # what main has that the remote has not, after integrating


def _integrate(
    repo: MemoryRepo,
    remote: str,
    theirs: Sha | None,
    walk: _Walk | None = None,
    held: contextlib.ExitStack | None = None,
) -> SyncResult | _Round:
    """Bring main up to ``theirs``; a SyncResult when the round stops at a conflict.
    ``walk``: ``_divergence``'s walk, begun earlier. ``held``: the working-tree lock stays
    held, and the working tree's follow waits, until ``held`` closes (while git pushes)."""
    ours = repo.tip(MAIN)
    if ours is None:
        raise NotFound("no main branch")
    ahead, behind, base = _divergence(repo, ours, theirs, walk)
    if theirs is None or behind == 0:
        return _Round("none", 0, ahead)
    if ahead == 0:
        _fast_forward(repo, ours, theirs, held)
        return _Round("fast-forward", behind, 0)
    base = base or _merge_base(repo, ours, theirs, remote)
    labels = (f"{MAIN} (this machine)", f"{remote}/main")
    with contextlib.ExitStack() as mine:
        live = _guard(held, mine, repo)
        changed = changed_paths(repo, base, theirs)
        if live:
            ensure_clean(repo, changed)
        if repo.tip(MAIN) != ours:
            raise _MainMoved
        merged = merge_trees(repo, base, ours, theirs, labels, changed=changed)
        if merged.conflicts:
            return _stop(repo, remote, ours, theirs, merged, live)
        _commit_merge(repo, remote, ours, theirs, merged, live, [], behind, held)
    return _Round("merge", behind, ahead + 1)


def sync(
    repo: MemoryRepo,
    remote: str = "origin",
    accept_redaction: bool = False,
    started: remote_mod.StartedFetch | None = None,
) -> SyncResult:
    """Exchange memory with the git remote ``remote``: fetch, integrate (fast-forward or
    a merge commit, section by section), push; never forced, never dropping a local
    commit. Returns a ``SyncResult``; the same section changed on both sides is status
    ``conflict``, not an exception. Raises ``Conflict`` (a stopped sync waits for
    ``continue_sync``/``abort_sync``, uncommitted edits), ``RemoteRewritten`` (the
    remote's history was rewritten: ``accept_redaction`` takes a ``gitmem redact``),
    ``NotFound`` (no such remote), ``RemoteError`` (exit 5: the remote cannot be
    reached or refused the push). ``started``: the first round's fetch, begun by
    ``first_fetch.start`` while this module was loaded."""
    try:
        return _sync(repo, remote, accept_redaction, started)
    finally:
        if started is not None and started.proc.returncode is None:  # refused before its round
            started.abandon()


def _sync(
    repo: MemoryRepo, remote: str, accept_redaction: bool, started: remote_mod.StartedFetch | None
) -> SyncResult:
    where = started.where if started is not None else remote_mod.url(repo, remote)
    state = sync_state.load(repo)
    if state is not None:
        raise Conflict(
            f"a sync with {state['remote']} stopped at a conflict; settle it and run "
            "`gitmem sync --continue`, or `gitmem sync --abort`"
        )
    if repo.tip(MAIN) is None:
        raise NotFound("no main branch")
    fetched = sync_ref(remote, "fetched")
    early = _while_fetching(repo, remote) if started is not None else None
    received, merged = 0, False
    start = repo.tip(MAIN)
    settled: list[str] = []
    notes: list[str] = []
    lost = "main moved here"
    finished: list[str] = []  # interrupted decisions finished here
    fetched_again = False  # after a fetch older than the last sync (``RemoteRewritten``)
    for attempt in range(MAX_ROUNDS):
        if attempt:
            _sleep(_jitter(0, min(BACKOFF_CAP, BACKOFF * 2**attempt)))
        done = False
        try:
            theirs = remote_mod.fetch_main(
                repo,
                remote,
                fetched,
                where,
                team_refs.fetch_specs(remote),
                started=None if attempt else started,
            )
            try:
                _check_history(repo, remote, theirs, accept_redaction)
            except RemoteRewritten:
                if fetched_again:
                    raise
                # Another sync of this clone may have pushed and recorded its merge since
                # this round fetched: what we synced last is then newer than the fetch.
                fetched_again = True
                continue
            accept_redaction = False  # accepted: the next rounds are ordinary ones
            # Where git pushes in the background, main's working tree follows the round's
            # merge once the push has started, the lock held till then (``held``).
            with contextlib.ExitStack() as held:
                walk = _Walk(repo, repo.tip(MAIN), theirs)  # git walks while the checks run
                try:
                    _check_both(
                        repo,
                        remote,
                        walk.tips[0],
                        theirs,
                        partial(
                            _check_outgoing, repo, remote, theirs, None if attempt else early, walk
                        ),
                    )
                    finished += _finish_interrupted(repo, remote)
                    seen = team.view(
                        repo, remote
                    )  # the remote's sessions and decisions, as fetched
                    got, notes = team.settle(repo, remote, seen)
                    settled += got
                    step = _integrate(
                        repo, remote, theirs, walk, None if progress.wanted() else held
                    )
                except _MainMoved:
                    continue
                finally:
                    walk.stop()
                if isinstance(step, SyncResult):
                    return step
                received, merged = received + step.received, merged or step.how == "merge"
                ours = repo.tip(MAIN)
                assert ours is not None
                out = outgoing(repo, remote, ours if step.sent else None, seen)
                _check_sessions_outgoing(repo, remote, out, theirs)
                pushed = None
                if out.updates:
                    meanwhile = partial(
                        _while_pushing, repo, held, start if received else None, ours
                    )
                    with remote_mod.meanwhile(meanwhile):
                        pushed = remote_mod.push_updates(repo, remote, out.updates, where)
            if pushed is not None and not pushed.ok:
                lost = pushed.rejected or lost
                continue  # someone pushed first: fetch and integrate again
            # one transaction: forget the fetched ref, remember what the remote now holds
            repo.git.run(
                "update-ref",
                "--stdin",
                input=f"delete {fetched}\nupdate {sync_ref(remote, 'last-synced')} {ours}\n".encode(),
            )
            done = True
        finally:
            if not done:
                repo.git.run("update-ref", "-d", fetched, check=False)
        if out.published or out.decided:  # pushed: the tracking refs say so now
            remote_mod.fetch_refs(repo, remote, team_refs.fetch_specs(remote), where)
            seen = team.view(repo, remote)
        index.refresh(repo, MAIN)
        done_notes = [f"finished the interrupted decision on {sid}" for sid in finished]
        note = "".join(f"\n{n}" for n in done_notes + notes + out.notes)
        waiting = team.waiting(repo, remote, seen)
        if not received and not step.sent and not (out.published or out.decided or settled):
            return SyncResult(
                remote, "up-to-date", ours, note=note, waiting=waiting, rounds=attempt + 1
            )
        changed = behaviour_changes(repo, start, ours) if received else []
        return SyncResult(
            remote,
            "synced",
            ours,
            received,
            step.sent,
            merged,
            note=note,
            behaviour=changed,
            before=start,
            published=out.published,
            decided=out.decided,
            settled=settled,
            waiting=waiting,
            rounds=attempt + 1,
        )
    raise Conflict(
        f"{remote} kept moving during sync ({MAX_ROUNDS} rounds, last: {lost}); nothing was "
        "lost, run `gitmem sync` again"
    )


def outgoing(
    repo: MemoryRepo, remote: str, main: Sha | None, seen: team.View | None = None
) -> team.Outgoing:
    """Everything this round pushes (``main`` when given, sessions, decisions): the one
    place to check what leaves this machine before it does."""
    return team.outgoing(repo, remote, main, seen)


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
        base = _merge_base(repo, ours, theirs, remote)
        changed = changed_paths(repo, base, theirs)
        if live:
            ensure_clean(repo, [p for p in changed if p not in resolved])
        labels = (f"{MAIN} (this machine)", f"{remote}/main")
        merged = merge_trees(repo, base, ours, theirs, labels, resolved, changed)
        if merged.conflicts:
            return _stop(repo, remote, ours, theirs, merged, live)
        try:
            n = _count(repo, ours, theirs)
            _commit_merge(repo, remote, ours, theirs, merged, live, sorted(resolved), n)
        except _MainMoved:
            raise Conflict(
                "main moved while the sync was continued; run `gitmem sync --continue` again"
            ) from None
    sync_state.clear(repo)
    done = sync(repo, remote)
    changed = behaviour_changes(repo, ours, done.main)
    if not changed:
        return done
    return replace(done, behaviour=changed, before=ours)


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
