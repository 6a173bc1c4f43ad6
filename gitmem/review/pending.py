"""Agent sessions seen like pull requests: which ones wait for review, and what each changed.

A session with the ``review`` policy ends with its commits on
``refs/heads/gitmem/session/<id>`` (pending). A decision moves that ref aside,
keeping the session's commits under a ref that says how it ended:

| ref | state |
|---|---|
| ``refs/heads/gitmem/session/<id>`` | pending (``pushed`` once a remote has the branch) |
| ``refs/gitmem/archive/<id>`` | accepted: every edit landed (also sessions landed by ``auto``) |
| ``refs/gitmem/partial/<id>`` | accepted in part: some commits or hunks were left out |
| ``refs/gitmem/rejected/<id>`` | rejected: nothing landed |

A landed session whose edits were all reverted since is shown as ``reverted``.
Decisions themselves live in ``decide.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gitmem.errors import NotFound
from gitmem.features.session_scope import Change, changes
from gitmem.git.runner import Sha
from gitmem.index.build import Replay
from gitmem.memory import names, refs
from gitmem.memory import trailers as T
from gitmem.memory.repo import ALLOWED_SIGNERS, MAIN, MemoryRepo
from gitmem.ops.history import Commit, read_log
from gitmem.ops.hunks import FileDiff, Hunk, commit_diffs

STATE_OF_PREFIX = {refs.PENDING: "pending"} | {p: s for s, p in refs.DECIDED.items()}


@dataclass(frozen=True)
class SessionRef:
    id: str
    state: str  # pending, pushed, remote, accepted, partial, rejected (reverted: list_sessions)
    ref: str
    tip: Sha
    remote: str | None = None  # the remote that has the pending branch (pushed, remote)
    machine: str | None = None  # the machine that published it, when a sync said so

    @property
    def pending(self) -> bool:
        return self.state in ("pending", "pushed", "remote")


def session_refs(repo: MemoryRepo) -> dict[str, SessionRef]:
    """Every session gitmem knows of, by id, from one ``git for-each-ref``: this clone's,
    and the pending ones a sync fetched from a remote (state ``remote``)."""
    out = repo.git.out(
        "for-each-ref",
        "--format=%(refname)%00%(objectname)",
        *(p.rstrip("/") for p in STATE_OF_PREFIX),
        "refs/remotes",
        refs.REMOTES,
    )
    found: dict[str, SessionRef] = {}
    tracked: dict[str, tuple[str, str, Sha]] = {}  # id -> (remote, ref, tip)
    made_on: dict[str, str] = {}
    for line in out.splitlines():
        ref, _, sha = line.partition("\0")
        if theirs := refs.tracked_session(ref):
            tracked.setdefault(theirs[1], (theirs[0], ref, Sha(sha)))
            continue
        if origin := refs.tracked_origin(ref):
            made_on[origin[1]] = origin[0]
            continue
        for prefix, state in STATE_OF_PREFIX.items():
            if ref.startswith(prefix):
                sid = ref[len(prefix) :]
                if sid not in found or state == "pending":  # a live branch wins
                    found[sid] = SessionRef(sid, state, ref, Sha(sha))
    for sid, (where, ref, tip) in tracked.items():
        got = found.get(sid)
        if got is None:
            found[sid] = SessionRef(sid, "remote", ref, tip, where, made_on.get(sid, where))
        elif got.state == "pending" and got.tip == tip:  # the remote has this very branch
            found[sid] = SessionRef(sid, "pushed", got.ref, got.tip, where, made_on.get(sid))
    return found


def find(repo: MemoryRepo, session_id: str) -> SessionRef:
    sid = names.session(session_id)
    got = session_refs(repo).get(sid)
    if got is None:
        raise NotFound(f"no session {sid!r}; `gitmem review --all` lists the sessions")
    return got


def session_commits(repo: MemoryRepo, s: SessionRef) -> list[Commit]:
    """The session's own commits, oldest first.

    Pending: what the branch has that main has not. Archived: the run of commits
    at the archived tip that carry the session's trailer (its commits may be in
    main already, when they were fast-forwarded).
    """
    if s.pending:
        return read_log(repo.git, f"{MAIN}..{s.tip}", reverse=True, first_parent=True)
    count = 64
    while True:
        log = read_log(repo.git, s.tip, first_parent=True, max_count=count)
        run: list[Commit] = []
        for c in log:
            if c.get(T.SESSION) != s.id:
                return run[::-1]
            run.append(c)
        if len(log) < count:
            return run[::-1]
        count *= 4


@dataclass(frozen=True)
class ReviewCommit:
    commit: Commit
    files: tuple[FileDiff, ...]

    @property
    def sha(self) -> Sha:
        return self.commit.sha

    @property
    def transcript(self) -> bool:
        """A transcript (layer C) commit: not a memory edit; it lands with any acceptance."""
        return self.commit.get(T.LAYER) is not None

    def entry(self) -> dict[str, object] | None:
        c = self.commit
        if not c.get(T.CARD):
            return None
        kws = [k.strip() for k in (c.get(T.KEYWORDS) or "").split(",") if k.strip()]
        return {
            "card": c.get(T.CARD),
            "section": c.get(T.SECTION),
            "keywords": kws,
            "summary": c.get(T.SUMMARY),
        }


@dataclass(frozen=True)
class NumberedHunk:
    number: int
    commit: ReviewCommit
    hunk: Hunk


@dataclass(frozen=True)
class SessionView:
    """A session seen like a pull request: its ref and state, base, and commits with
    their diffs (``hunks()`` numbers them as ``accept_session(hunks=)`` takes them)."""

    ref: SessionRef
    base: Sha | None  # the commit the session started from
    commits: tuple[ReviewCommit, ...]
    changes: tuple[Change, ...] = ()  # every file each commit changes, transcript's too
    # each commit's signature state (git/signing.py); empty in a repo that does not sign
    signed: dict[str, str] = field(default_factory=dict)

    @property
    def edits(self) -> list[ReviewCommit]:
        return [c for c in self.commits if not c.transcript]

    def paths(self) -> list[str]:
        """Files the edits touch, in the order the session first touched them."""
        out: list[str] = []
        for c in self.edits:
            out += [f.path for f in c.files if f.path not in out]
        return out

    def cards(self) -> list[str]:
        out: list[str] = []
        for c in self.edits:
            card = c.commit.get(T.CARD)
            if card and card not in out:
                out.append(card)
        return out

    def by_file(self) -> list[tuple[str, list[tuple[ReviewCommit, list[NumberedHunk]]]]]:
        """Each file the edits touch, with the edits that change it and their numbered hunks:
        the order ``gitmem review ID`` shows them in (per file, per commit)."""
        out: list[tuple[str, list[tuple[ReviewCommit, list[NumberedHunk]]]]] = []
        number = 0
        for path in self.paths():
            commits = []
            for c in self.edits:
                mine = []
                for f in c.files:
                    if f.path == path:
                        for h in f.hunks:
                            number += 1
                            mine.append(NumberedHunk(number, c, h))
                if mine:
                    commits.append((c, mine))
            out.append((path, commits))
        return out

    def hunks(self) -> list[NumberedHunk]:
        """Every hunk of every edit, numbered as shown: per file, per commit, in order."""
        return [h for _, commits in self.by_file() for _, mine in commits for h in mine]

    @property
    def started(self) -> str | None:
        return self.commits[0].commit.date if self.commits else None

    def to_json(self) -> dict[str, object]:
        grouped = self.by_file()
        files = [
            {
                "path": path,
                "commits": [
                    {
                        "sha": c.sha,
                        "subject": c.commit.subject,
                        "date": c.commit.date,
                        "author": c.commit.author,
                        "entry": c.entry(),
                        "signature": self.signed.get(c.sha),
                        "hunks": [_hunk_json(h) for h in mine],
                    }
                    for c, mine in commits
                ],
            }
            for path, commits in grouped
        ]
        return {
            "session": self.ref.id,
            "state": self.ref.state,
            "ref": self.ref.ref,
            "tip": self.ref.tip,
            "remote": self.ref.remote,
            "machine": self.ref.machine,
            "base": self.base,
            "started": self.started,
            "edits": len(self.edits),
            "cards": self.cards(),
            "files": files,
            "transcript": [c.sha for c in self.commits if c.transcript],
            "hunks": sum(len(mine) for _, commits in grouped for _, mine in commits),
            "changes": [c.to_json() for c in self.changes],
        }


def _hunk_json(h: NumberedHunk) -> dict[str, object]:
    return {
        "number": h.number,
        "path": h.hunk.path,
        "header": h.hunk.header,
        "added": h.hunk.added,
        "removed": h.hunk.removed,
        "lines": list(h.hunk.lines),
    }


def load_session(repo: MemoryRepo, session_id: str) -> SessionView:
    """A session with its commits and their diffs (one ``git log -p``), as a
    ``SessionView``. Raises ``NotFound`` for an unknown session, ``InvalidInput`` for a
    bad id."""
    return view_of(repo, find(repo, session_id))


def view_of(repo: MemoryRepo, s: SessionRef) -> SessionView:
    """``load_session`` for a session known by its ref (e.g. one whose branch is gone already)."""
    commits = session_commits(repo, s)
    if not commits:
        return SessionView(s, s.tip if s.pending else None, ())
    base = commits[0].parents[0] if commits[0].parents else None
    diffs = commit_diffs(repo, base, s.tip) if base else {}
    files = changes(repo, base, s.tip) if base else ()
    edits = tuple(ReviewCommit(c, tuple(diffs.get(c.sha, ()))) for c in commits)
    return SessionView(s, base, edits, files, _signed(repo, s.tip, [c.sha for c in commits]))


def _signed(repo: MemoryRepo, tip: str, shas: list[str]) -> dict[str, str]:
    """Each commit's signature state (none in a repo that does not sign)."""
    if repo.store.read_blob(f"{tip}:{ALLOWED_SIGNERS}") is None:
        return {}
    return {sha: v.state for sha, v in repo.verdicts(shas).items()}


@dataclass(frozen=True)
class SessionSummary:
    """One line of ``list_sessions``: id, state (pending, pushed, remote, accepted,
    partial, rejected, reverted), start date, memory edits and the cards they touch."""

    id: str
    state: str
    started: str | None
    edits: int
    cards: tuple[str, ...]
    machine: str | None = None  # a remote session: the machine it came from
    remote: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "session": self.id,
            "state": self.state,
            "started": self.started,
            "edits": self.edits,
            "cards": list(self.cards),
            "machine": self.machine,
            "remote": self.remote,
        }


def landed_by_session(
    repo: MemoryRepo, branch: str = MAIN
) -> tuple[dict[str, list[Commit]], Replay]:
    """Each session's edits on ``branch`` (not its transcript, not reverts), oldest first,
    and the replay of ``branch`` that says which of them are undone; one ``git log``.

    A session's edits are the commits gitmem wrote for it (``MemoryRepo.own_commits``):
    a commit that merely carries its ``Gitmem-Session`` trailer is not one of them.
    """
    landed: dict[str, list[Commit]] = {}
    replay = Replay()
    tip = repo.tip(branch)
    own = repo.own_commits()
    for c in read_log(repo.git, tip, reverse=True) if tip else []:
        replay.apply(c)
        sid = c.get(T.SESSION)
        if sid and not c.reverts and c.get(T.LAYER) is None and c.sha in own:
            landed.setdefault(sid, []).append(c)
    return landed, replay


def list_sessions(repo: MemoryRepo, *, decided: bool = False) -> list[SessionSummary]:
    """Pending sessions (and, with ``decided``, the accepted and rejected ones), oldest
    first, as ``SessionSummary`` values."""
    refs = [s for s in session_refs(repo).values() if decided or s.pending]
    landed: dict[str, list[Commit]] = {}
    replay = Replay()
    if any(not s.pending for s in refs):
        landed, replay = landed_by_session(repo)
    out = []
    for s in refs:
        commits = session_commits(repo, s)
        edits = [c for c in commits if c.get(T.LAYER) is None]
        cards = tuple(dict.fromkeys(c.get(T.CARD) or "" for c in edits if c.get(T.CARD)))
        state = s.state
        mine = [c.sha for c in landed.get(s.id, []) if c.get(T.CARD)]
        if state in ("accepted", "partial") and mine and all(m in replay.inactive for m in mine):
            state = "reverted"
        started = commits[0].date if commits else None
        machine, where = (s.machine, s.remote) if s.state == "remote" else (None, None)
        out.append(SessionSummary(s.id, state, started, len(edits), cards, machine, where))
    out.sort(key=lambda x: (x.started or "", x.id))
    return out


@dataclass(frozen=True)
class TokenSizes:
    """A session's effect on size: each card it touches and the I block, before and after
    (estimated, 4 bytes a token)."""

    cards: dict[str, tuple[int, int]]  # card -> (before, after); 0: no such card
    index: tuple[int, int]

    def to_json(self) -> dict[str, object]:
        return {
            "estimated": True,
            "cards": {k: {"before": a, "after": b} for k, (a, b) in self.cards.items()},
            "index": {"before": self.index[0], "after": self.index[1]},
        }


def token_sizes(repo: MemoryRepo, view: SessionView) -> TokenSizes | None:
    """Tokens before (the session's base) and after (its tip), per card and for the I block."""
    from gitmem.index import build as index_mod
    from gitmem.index.replay import replay_at
    from gitmem.memory.cards import card_path
    from gitmem.memory.transcript import estimate_tokens

    if view.base is None or not view.edits:
        return None

    def card_tokens(rev: str, card: str) -> int:
        raw = repo.store.read_blob(f"{rev}:{card_path(card)}")
        return estimate_tokens(raw.decode("utf-8", "replace")) if raw is not None else 0

    def index_tokens(rev: str) -> int:
        return estimate_tokens(index_mod.resolve(repo, replay_at(repo, rev)).render())

    cards = {c: (card_tokens(view.base, c), card_tokens(view.ref.tip, c)) for c in view.cards()}
    return TokenSizes(cards, (index_tokens(view.base), index_tokens(view.ref.tip)))
