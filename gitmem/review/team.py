"""Sessions and decisions across machines: what ``gitmem sync`` exchanges besides ``main``.

On the remote, beside ``main``:

| ref | meaning |
|---|---|
| ``refs/heads/gitmem/session/<id>`` | a pending session, published by the machine that ran it |
| ``refs/gitmem/from/<machine>/<id>`` | which machine published it |
| ``refs/gitmem/{archive,partial,rejected}/<id>`` | the decision on it (the session's tip) |
| ``refs/gitmem/by/<machine>/<id>`` | which machine decided |

A sync fetches them into tracking refs (``refs/remotes/<remote>/gitmem/session/*``,
``refs/gitmem/remotes/<remote>/...``; local branches are never touched), takes in the
decisions it did not know (``settle``: a pending branch decided elsewhere is archived
under the same ref as there), then pushes with ``main`` what the remote lacks
(``outgoing``): this machine's pending sessions (a session branch only grows; never
forced) and its decisions, each with the removal of the decided branch under a lease on
its tip. One atomic push: all of it or none, and a lost race is another round.

A decision on a session a remote has (``remote`` or ``pushed`` in ``gitmem review``)
first claims it there (``claim``): the decision refs are created and the pending branch
removed in one atomic push whose lease is the tip that was reviewed. The first claim to
reach the remote wins; a later one is refused before anything lands here.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field

from gitmem.errors import Conflict, InvalidInput
from gitmem.git.runner import Sha
from gitmem.memory import names
from gitmem.memory.refs import BY, DECIDED, FROM, PENDING, SESSION_PREFIX, tracking
from gitmem.memory.repo import MemoryRepo
from gitmem.ops import remote as remote_mod
from gitmem.ops.remote import RemoteError, Update


def fetch_specs(remote: str) -> list[str]:
    """The refspecs a sync fetches beside main (pruned: a decided session's branch goes)."""
    specs = [f"+{PENDING}*:{tracking(remote, 'session')}*"]
    specs += [
        f"+{FROM}*:{tracking(remote, 'from')}*",
        f"+{BY}*:{tracking(remote, 'by')}*",
    ]
    for action, prefix in DECIDED.items():
        specs.append(f"+{prefix}*:{tracking(remote, action)}*")
    return specs


MACHINE_KEY = "gitmem.machine"
SAID = {"accepted": "accepted", "partial": "accepted in part", "rejected": "rejected"}


def machine(repo: MemoryRepo) -> str:
    """This clone's name in session refs: ``git config gitmem.machine``, else the host name."""
    known = repo.memo.get(("machine", ""))
    if isinstance(known, str):
        return known
    proc = repo.git.run("config", "--get", MACHINE_KEY, check=False)
    name = proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else ""
    if not name:
        name = os.uname().nodename  # the host name, as gethostname() gives it
    got = names.slugify(name) or "machine"
    repo.memo[("machine", "")] = got
    return got


@dataclass
class View:
    """Sessions, decisions and who made each, as one side holds them."""

    sessions: dict[str, Sha] = field(default_factory=dict)  # pending: id -> tip
    made_on: dict[str, str] = field(default_factory=dict)  # id -> machine
    decisions: dict[str, tuple[str, Sha]] = field(default_factory=dict)  # id -> (action, tip)
    decided_on: dict[str, str] = field(default_factory=dict)  # id -> machine


def _prefixes(remote: str | None) -> dict[str, str]:
    if remote is None:
        out = {"session": PENDING, "from": FROM, "by": BY}
        return out | DECIDED
    return {w: tracking(remote, w) for w in ("session", "from", "by", *DECIDED)}


def view(repo: MemoryRepo, remote: str | None = None) -> View:
    """This clone's view (``remote=None``) or the remote's as last fetched: one for-each-ref."""
    return _views(repo, [remote])[0]


def views(repo: MemoryRepo, remote: str) -> tuple[View, View]:
    """This clone's view and the remote's as last fetched, from one for-each-ref."""
    mine, theirs = _views(repo, [None, remote])
    return mine, theirs


def _views(repo: MemoryRepo, sides: list[str | None]) -> list[View]:
    every = [_prefixes(side) for side in sides]
    out = repo.git.out(
        "for-each-ref",
        "--format=%(refname)%00%(objectname)",
        *(p.rstrip("/") for prefixes in every for p in prefixes.values()),
    )
    got = [View() for _ in sides]
    for line in out.splitlines():
        ref, _, sha = line.partition("\0")
        for one, prefixes in zip(got, every, strict=True):
            for what, prefix in prefixes.items():
                if ref.startswith(prefix):
                    _take(one, what, ref[len(prefix) :], Sha(sha))
    return got


def _take(got: View, what: str, rest: str, sha: Sha) -> None:
    """One ref of a view: ``rest`` is its name below the prefix of ``what``."""
    if what == "session":
        got.sessions[rest] = sha
    elif what in ("from", "by"):
        who, _, sid = rest.partition("/")
        (got.made_on if what == "from" else got.decided_on)[sid] = who
    else:
        got.decisions[rest] = (what, sha)


def _transaction(repo: MemoryRepo, lines: list[str], reason: str) -> bool:
    tx = "start\n" + "".join(ln + "\n" for ln in lines) + "prepare\ncommit\n"
    return (
        repo.git.run(
            "update-ref", "-m", reason, "--stdin", input=tx.encode(), check=False
        ).returncode
        == 0
    )


def settle(
    repo: MemoryRepo, remote: str, theirs: View | None = None, mine: View | None = None
) -> tuple[list[str], list[str]]:
    """Take in the decisions the remote holds and this clone does not.

    A pending branch at the decided tip is archived under the same ref as there; one
    that grew since stays pending (noted). Returns (sessions archived here, notes).
    """
    theirs = theirs or view(repo, remote)
    if not theirs.decisions:
        return [], []
    mine = mine if mine is not None else view(repo)
    if not theirs.decisions.keys() - mine.decisions.keys():
        return [], []
    from gitmem.ops.worktree import checked_out

    archived: list[str] = []
    notes: list[str] = []
    for sid, (action, tip) in sorted(theirs.decisions.items()):
        if sid in mine.decisions:
            continue
        lines = [f"create {DECIDED[action]}{sid} {tip}"]
        who = theirs.decided_on.get(sid)
        if who and sid not in mine.decided_on:
            lines.append(f"create {BY}{who}/{sid} {tip}")
        branch = mine.sessions.get(sid)
        if branch is not None:
            if branch != tip or checked_out(repo, SESSION_PREFIX + sid):
                notes.append(
                    f"session {sid} was {SAID[action]} on {who or remote}, but this machine's branch "
                    "has changed since; it stays pending here"
                )
                continue
            lines.append(f"delete {PENDING}{sid} {tip}")
        if _transaction(repo, lines, f"gitmem sync: {action} on {who or remote}") and branch:
            archived.append(sid)
    return archived, notes


@dataclass(frozen=True)
class Outgoing:
    updates: list[Update]
    published: list[str]  # session ids whose branch this push creates or grows
    decided: list[str]  # session ids whose decision this push carries
    notes: list[str]
    mine: View  # this clone's sessions and decisions, as the push was planned from them


def _grows(repo: MemoryRepo, old: str, new: str) -> bool:
    return repo.git.run("merge-base", "--is-ancestor", old, new, check=False).returncode == 0


def outgoing(
    repo: MemoryRepo,
    remote: str,
    main: Sha | None,
    theirs: View | None = None,
    mine: View | None = None,
) -> Outgoing:
    """Everything a sync round pushes: ``main`` (when given), this machine's pending
    sessions and its decisions the remote lacks (``mine``: as read since its refs last
    changed). Nothing in it is forced."""
    mine = mine if mine is not None else view(repo)
    theirs = theirs or view(repo, remote)
    updates = [Update("refs/heads/main", main)] if main else []
    published, decided, notes = [], [], []
    # A session branch with nothing beyond main (just started) has nothing to review yet.
    ahead = (
        set(
            repo.git.out(
                "for-each-ref",
                "--no-merged=refs/heads/main",
                "--format=%(refname)",
                PENDING.rstrip("/"),
            ).split()
        )
        if mine.sessions
        else set()
    )
    for sid, tip in sorted(mine.sessions.items()):
        if sid in theirs.decisions or theirs.sessions.get(sid) == tip:
            continue
        if PENDING + sid not in ahead:
            continue
        there = theirs.sessions.get(sid)
        if there is not None and not _grows(repo, there, tip):
            notes.append(f"session {sid} differs on {remote}; it was not published")
            continue
        updates.append(Update(PENDING + sid, tip))
        if sid not in theirs.made_on:
            updates.append(Update(f"{FROM}{machine(repo)}/{sid}", tip))
        published.append(sid)
    for sid, (action, tip) in sorted(mine.decisions.items()):
        if sid in theirs.decisions:
            continue
        there = theirs.sessions.get(sid)
        if there is not None and there != tip:
            notes.append(f"session {sid} grew on {remote} after it was decided here; not sent")
            continue
        if there is not None:
            updates.append(Update(PENDING + sid, None, tip))
        updates.append(Update(DECIDED[action] + sid, tip))
        who = mine.decided_on.get(sid)
        if who and sid not in theirs.decided_on:
            updates.append(Update(f"{BY}{who}/{sid}", tip))
        decided.append(sid)
    return Outgoing(updates, published, decided, notes, mine)


def waiting(
    repo: MemoryRepo, remote: str, theirs: View | None = None, mine: View | None = None
) -> list[str]:
    """Sessions pending on the remote that came from elsewhere: for review here."""
    theirs = theirs or view(repo, remote)
    if not theirs.sessions:
        return []
    mine = mine or view(repo)
    return sorted(set(theirs.sessions) - set(mine.sessions) - set(mine.decisions))


# -- deciding on a session a remote has -----------------------------------------------
def claim(repo: MemoryRepo, remote: str, sid: str, tip: Sha, action: str) -> None:
    """Record ``action`` on ``sid`` (reviewed at ``tip``) at ``remote`` before anything
    lands here; the lease is the remote's branch as last fetched.

    Refused (Conflict, nothing changed) when another machine decided first, or when the
    session on the remote is no longer the one fetched.
    """
    where = remote_mod.url(repo, remote)
    there = repo.store.resolve(tracking(remote, "session") + sid) or tip
    updates = [
        Update(PENDING + sid, None, there),
        Update(DECIDED[action] + sid, tip),
        Update(f"{BY}{machine(repo)}/{sid}", tip),
    ]
    if remote_mod.push_updates(repo, remote, updates, where).ok:
        return
    remote_mod.fetch_refs(repo, remote, fetch_specs(remote), where)
    theirs = view(repo, remote)
    if sid in theirs.decisions:
        done, _ = theirs.decisions[sid]
        who = theirs.decided_on.get(sid, "another machine")
        raise Conflict(
            f"session {sid} was {SAID[done]} on {who} first ({remote}); your decision "
            f"({SAID[action]}) was not taken and nothing changed here"
        )
    if sid in theirs.sessions:
        raise Conflict(
            f"session {sid} changed on {remote} since you reviewed it; nothing changed here: "
            f"review it again with `gitmem review {sid}`"
        )
    raise Conflict(f"session {sid} is no longer on {remote}; nothing changed here")


def record(repo: MemoryRepo, sid: str, tip: Sha, action: str, remote: str | None) -> str:
    """Keep this clone's copy of a claimed decision: the decision ref, who decided, and the
    session's branch and tracking ref gone; one ref transaction."""
    target = DECIDED[action] + sid
    lines = [f"create {target} {tip}", f"create {BY}{machine(repo)}/{sid} {tip}"]
    if repo.store.resolve(PENDING + sid) is not None:
        lines.append(f"delete {PENDING}{sid} {tip}")
    if remote is not None and repo.store.resolve(tracking(remote, "session") + sid) is not None:
        lines.append(f"delete {tracking(remote, 'session')}{sid}")
    if not _transaction(repo, lines, f"gitmem review: {action}"):
        raise Conflict(f"session {sid} was decided here concurrently; see `gitmem review --all`")
    return target


@dataclass(frozen=True)
class PushedSession:
    """A session branch pushed for a pull request: the session, remote, URL, branch and commit."""

    session: str
    remote: str
    url: str
    branch: str
    commit: str

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def push_session(repo: MemoryRepo, session_id: str, name: str) -> PushedSession:
    """Publish a pending session's branch so a forge can show it as a pull request."""
    from gitmem.review.pending import find

    s = find(repo, session_id)
    if not s.pending:
        raise InvalidInput(
            f"session {s.id} was {s.state} already; only pending sessions are pushed"
        )
    if s.state == "remote":
        raise InvalidInput(
            f"session {s.id} came from {s.machine} through {s.remote}; it is published there already"
        )
    where = remote_mod.url(repo, name)
    branch = s.ref.removeprefix("refs/heads/")
    done = remote_mod.push(repo, name, s.ref, s.ref, where)
    if not done.ok:
        raise RemoteError(f"{name} has a different {branch} ({done.rejected}); nothing was pushed")
    return PushedSession(s.id, name, where, branch, s.tip)
