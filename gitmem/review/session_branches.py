"""Agent sessions: each writes on its own branch ``gitmem/session/<id>``.

A session starts as a branch at ``main``'s tip. Its memory edits are commits on
that branch (``edit.write_card(branch=...)``); its transcript lives in
``.git/gitmem/sessions/<id>.jsonl`` while it runs (flushed every turn, outside the
person's working tree) and is committed to ``sessions/<id>.jsonl`` on the branch
when it ends. Then the review policy decides: ``auto`` lands the branch on main
and archives it under ``refs/gitmem/archive/<id>``; ``review`` leaves it pending.
"""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

from gitmem.errors import ConfigError, Conflict, DirtyCard, InvalidInput, NotFound, UnsafePath
from gitmem.features import session_live, session_scope
from gitmem.features.session_live import transcript_file
from gitmem.features.session_scope import changes
from gitmem.git.runner import Sha, held_stop_signals
from gitmem.memory import branch_files, names, refs
from gitmem.memory import trailers as T
from gitmem.memory.refs import SESSION_PREFIX
from gitmem.memory.repo import MAIN, REDACT_JOURNAL, MemoryRepo
from gitmem.ops.history import read_log
from gitmem.ops.land import commits_between, land
from gitmem.ops.publish import commit_files
from gitmem.ops.refs import cas


def new_id(now: datetime | None = None) -> str:
    when = now or datetime.now(UTC)
    return f"{when:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def branch_of(session_id: str) -> str:
    return SESSION_PREFIX + names.session(session_id)


@dataclass
class Session:
    """A running session: its id, its branch ``gitmem/session/<id>`` (write its edits
    there) and ``base``, main's tip when it started."""

    id: str
    branch: str
    base: Sha  # main's tip when the session started
    live: int | None = field(default=None, repr=False, compare=False)  # session_live's lock
    created: bool = field(default=False, compare=False)  # its branch was made by this start

    @property
    def ref(self) -> str:
        return f"refs/heads/{self.branch}"


def start_session(
    repo: MemoryRepo, session_id: str | None = None, *, resume: bool = False
) -> Session:
    """Create the session branch at main's tip (``session_id``: its name, default a new
    dated id), or reopen it with ``resume``. Returns a ``Session``. Raises
    ``InvalidInput`` (a bad id, or a session of that id exists without ``resume``),
    ``NotFound`` (nothing to resume, no main), ``Conflict`` (created concurrently).
    Waits for a redact that is running, and refuses (``Conflict``) while one killed
    half-way is not finished: a branch made from main then would keep the history the
    redact removes."""
    with repo.lock("redact"):
        if (repo.git_dir / "gitmem" / REDACT_JOURNAL).exists():
            raise Conflict(
                "a redact was interrupted and is not finished; `gitmem recover` finishes "
                "it, then start the session again (nothing was started)"
            )
        return _start(repo, session_id, resume)


def _start(repo: MemoryRepo, session_id: str | None, resume: bool) -> Session:
    sid = names.session(session_id) if session_id else new_id()
    branch = branch_of(sid)
    tip = repo.tip(branch)
    if tip is not None:
        if not resume:
            raise InvalidInput(
                f"session {sid} exists already; `gitmem chat --resume {sid}` continues it"
            )
        base = repo.git.out("merge-base", MAIN, branch)
        return Session(sid, branch, Sha(base), _hold(repo, sid))
    if resume:
        ended = any(repo.store.resolve(prefix + sid) for prefix in refs.DECIDED.values())
        if not ended and not transcript_file(repo, sid).exists():
            raise NotFound(
                f"no session {sid!r} to resume; `gitmem review --all` lists the sessions"
            )
    main = repo.tip(MAIN)
    if main is None:
        raise NotFound("no main branch")
    # A refusal that left the branch absent is retried: ``cas`` tells a held lock from
    # a git that cannot write here (a full disk), which it reports itself.
    while not cas(repo, f"refs/heads/{branch}", main, None, f"gitmem session start: {sid}"):
        if repo.tip(branch) is not None:
            raise Conflict(f"session branch {branch} was created concurrently")
    return Session(sid, branch, main, _hold(repo, sid), created=True)


def _hold(repo: MemoryRepo, sid: str) -> int:
    fd = session_live.hold(repo, sid)
    if fd is None:
        pid = session_live.running(repo, sid) or "?"
        raise InvalidInput(f"session {sid} is still running (process {pid}); end it there first")
    return fd


def save_transcript(repo: MemoryRepo, session: Session) -> Sha | None:
    """Commit the live transcript to ``sessions/<id>.jsonl`` on the session branch."""
    live = transcript_file(repo, session.id)
    if not live.exists():
        return None
    data = live.read_bytes()
    path = f"sessions/{session.id}.jsonl"
    message = (
        f"session {session.id}: transcript\n\n"
        f"{T.SESSION}: {session.id}\n{T.LAYER}: chat\n{T.ACTOR}: agent\n"
    )
    return commit_files(
        repo, session.branch, lambda _tip: {path: data}, message, f"gitmem transcript: {session.id}"
    )


@dataclass(frozen=True)
class FinishResult:
    """How a session ended: its commits and memory edits, what ``landed`` on main, or
    ``pending`` review (with the ``reason`` when an automatic landing was refused)."""

    session: str
    policy: str
    commits: int
    landed: list[str] = field(default_factory=list)
    pending: bool = False
    reason: str | None = None
    # Memory edits among ``commits`` (not the transcript or synthesis): what review counts.
    edits: int = 0
    # The session did nothing and was taken back whole (``drop_session``): no ref, no commit.
    dropped: bool = False

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def archive(
    repo: MemoryRepo,
    session_id: str,
    tip: Sha,
    *,
    prefix: str = refs.ARCHIVE,
    reason: str = "gitmem archive",
) -> str:
    """Keep a session's commits under ``<prefix><id>`` and drop its branch, in one ref
    transaction; returns the ref kept."""
    target = f"{prefix}{session_id}"
    branch = f"refs/heads/{branch_of(session_id)}"
    tx = f"start\nupdate {target} {tip}\ndelete {branch} {tip}\nprepare\ncommit\n"
    repo.git.run("update-ref", "-m", reason, "--stdin", input=tx.encode())
    branch_files.drop(repo, branch_of(session_id))  # the branch is gone: so is its cache
    return target


def finish_session(
    repo: MemoryRepo, session: Session, policy: str | None = None, *, drop: bool = False
) -> FinishResult:
    """End a session as ``_end`` says, SIGTERM and SIGHUP waiting for it (the end is one
    step); from then on it is no longer running (``session_live``), so a review may
    decide it, even when ending failed. With ``drop`` (a session that wrote nothing: a
    `gitmem ask` the model never answered) a branch this start made is taken back
    instead, so the repo is as it was: no branch, no transcript commit, no archive ref
    moved."""
    policy = policy or repo.config.review
    with held_stop_signals():
        try:
            if drop and _dropped(repo, session):
                return FinishResult(session.id, policy, 0, dropped=True)
            return _end(repo, session, policy)
        finally:
            if session.live is not None:
                session_live.release(repo, session.id, session.live)
                session.live = None


def _end(repo: MemoryRepo, session: Session, policy: str) -> FinishResult:
    """End a session: commit its transcript, then land its commits on main (``policy``
    ``auto``, or a session with no memory edits: only its transcript) or leave them
    pending for review (``review``). Returns a ``FinishResult`` (a landing refused by
    uncommitted edits leaves the session pending and says why). Raises ``NotFound`` when
    the session branch is gone."""
    save_transcript(repo, session)
    tip = repo.tip(session.branch)
    if tip is None:
        raise NotFound(f"session branch {session.branch} is gone")
    shas = commits_between(repo, MAIN, tip)
    log = read_log(repo.git, f"{MAIN}..{tip}", first_parent=True) if shas else []
    edits = sum(1 for c in log if c.get(T.LAYER) is None)  # as review.list_sessions counts
    if policy != "auto" and edits:  # no memory edits: nothing to review, only a transcript
        return FinishResult(session.id, policy, len(shas), pending=True, edits=edits)
    try:
        if log:  # what review checks before it accepts, before an automatic landing too
            session_scope.check(repo, session.id, tip, log, changes(repo, MAIN, tip))
        landed = land(repo, shas, MAIN, f"gitmem land session {session.id}")
    except (DirtyCard, Conflict, UnsafePath, ConfigError) as err:
        return FinishResult(
            session.id, policy, len(shas), pending=True, reason=str(err), edits=edits
        )
    archive(repo, session.id, tip)
    return FinishResult(session.id, policy, len(shas), landed=list(landed), edits=edits)


def _dropped(repo: MemoryRepo, session: Session) -> bool:
    """Take back a session that wrote nothing: the branch this start made (only while it
    is still at its base) goes, and a live transcript left empty with the index it kept.
    False when the branch was there before or has moved."""
    if not session.created:
        return False
    proc = repo.git.run("update-ref", "-d", session.ref, session.base, check=False)
    if proc.returncode:
        return False
    branch_files.drop(repo, session.branch)
    live = transcript_file(repo, session.id)
    if not live.exists() or not live.stat().st_size:
        for path in (live, live.with_name(f"{live.stem}.index.txt")):
            path.unlink(missing_ok=True)
    return True
