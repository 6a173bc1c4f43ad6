"""``gitmem status``: the state of a memory repo at a glance, from what is on this machine.

Nothing here contacts a remote: the sync state is counted against the refs gitmem
keeps (``refs/gitmem/sync/<remote>/last-synced``, the remote's main as of the last
sync) and, when a plain ``git fetch`` made one, the remote-tracking ref.
"""

from __future__ import annotations

import shlex
from dataclasses import asdict, dataclass, field

from gitmem.agent import budget
from gitmem.features.refused_paths import refused_paths
from gitmem.git.formats import ident_date
from gitmem.git.runner import Sha
from gitmem.index import build as index_mod
from gitmem.index.tiers import Split
from gitmem.memory import trust
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.review.pending import list_sessions
from gitmem.sync import redact_journal
from gitmem.sync import state as sync_state

LOCAL_ONLY = "counted from what this machine knows; `gitmem status` never contacts a remote"


@dataclass(frozen=True)
class Change:
    path: str
    state: str  # git's two-letter porcelain code, e.g. " M", "??"
    card: bool  # under cards/


@dataclass(frozen=True)
class RemoteState:
    name: str
    url: str
    last_synced: str | None  # the remote's main at our last sync (None: never synced)
    last_synced_date: str | None
    ahead: int | None  # commits on main not in last_synced: sent at the next sync
    behind: int | None  # commits in last_synced not on main (0 after a finished sync)
    tracking: str | None = None  # refs/remotes/<name>/main, when a git fetch made one
    tracking_ahead: int | None = None
    tracking_behind: int | None = None


@dataclass(frozen=True)
class Pending:
    session: str
    edits: int
    cards: tuple[str, ...]


@dataclass(frozen=True)
class RepoStatus:
    """The repo's state (``gitmem status``): branch, uncommitted edits, pending sessions,
    unindexed sections, the index's size and budget, stale entries, and per remote what
    main has to send."""

    branch: str | None  # None: a detached HEAD
    main: str | None
    uncommitted: tuple[Change, ...]
    pending: tuple[Pending, ...]
    unindexed: tuple[str, ...]  # "card § section"
    index_bytes: int
    index_tokens: int  # count_tokens with a key, else estimated (index_budget.estimated)
    remotes: tuple[RemoteState, ...]
    sync_stopped: str | None  # the remote of a sync stopped at a conflict
    note: str = field(default=LOCAL_ONLY)
    index_budget: dict[str, object] = field(default_factory=dict)  # budget.Budget.to_json()
    stale: tuple[str, ...] = ()  # "card § section": entries whose section changed since
    redact_interrupted: str | None = None  # what a redact left unfinished, and the command
    settings: tuple[trust.Setting, ...] = ()  # protective settings, where each comes from
    refused_paths: tuple[tuple[str, str], ...] = ()  # (path, why): names the path rule refuses
    signing_off: str | None = None  # why this clone's commits are not signed; None: signed
    signers_held: trust.HeldSetting | None = None  # keys a sync brought, not trusted until `trust`

    def to_json(self) -> dict[str, object]:
        held = self.signers_held and self.signers_held.to_json()
        return {
            **asdict(self),
            "settings": [x.to_json() for x in self.settings],
            "signers_held": held,
        }


def _changes(repo: MemoryRepo) -> list[Change]:
    raw = repo.git.run("status", "--porcelain=v1", "-z", "--untracked-files=all").stdout
    items = raw.decode("utf-8", "surrogateescape").split("\0")
    out: list[Change] = []
    i = 0
    while i < len(items):
        item = items[i]
        i += 1
        if len(item) < 4:
            continue
        code, path = item[:2], item[3:]
        if "R" in code or "C" in code:
            i += 1  # a rename names its source next
        out.append(Change(path, code, path.startswith("cards/")))
    return out


def _counts(repo: MemoryRepo, ours: Sha, theirs: Sha, known: _Counted) -> tuple[int, int]:
    """Commits only on ``ours`` and only on ``theirs``; a pair counted once per status
    (the last-synced ref and the tracking ref are one commit after a sync)."""
    if ours == theirs:
        return 0, 0
    if (ours, theirs) not in known:
        left, _, right = repo.git.out(
            "rev-list", "--left-right", "--count", f"{ours}...{theirs}"
        ).partition("\t")
        known[ours, theirs] = int(left), int(right)
    return known[ours, theirs]


_Counted = dict[tuple[Sha, Sha], tuple[int, int]]


def _remote(
    repo: MemoryRepo, name: str, url: str, main: Sha | None, known: _Counted
) -> RemoteState:
    from gitmem.memory import refs

    last = repo.store.resolve(refs.sync(name, "last-synced"))
    tracking = repo.store.resolve(f"refs/remotes/{name}/main")
    ahead = behind = t_ahead = t_behind = None
    date = None
    if last and main:
        ahead, behind = _counts(repo, main, last, known)
        date = ident_date(repo.store.read_commit(last).committer)
    if tracking and main:
        t_ahead, t_behind = _counts(repo, main, tracking, known)
    return RemoteState(name, url, last, date, ahead, behind, tracking, t_ahead, t_behind)


def repo_status(repo: MemoryRepo) -> RepoStatus:
    """The repo's ``Status``, from this machine only (no remote is contacted)."""
    main = repo.tip(MAIN)
    idx = index_mod.refresh(repo, MAIN)
    rendered, split = index_mod.shown(repo, MAIN) if main else (idx.render(), None)
    size = budget.measure(repo, rendered, split=split)
    rendered = budget.with_note(rendered, size)
    stale = tuple(f"{c.project} § {s.id}" for c in idx.cards for s in c.sections if s.stale)
    unindexed = tuple(
        f"{c.project} § {s.id}" for c in idx.cards for s in c.sections if not s.indexed
    )
    pending = tuple(Pending(s.id, s.edits, s.cards) for s in list_sessions(repo))
    stopped = sync_state.load(repo)
    known: _Counted = {}
    remotes = tuple(_remote(repo, n, url, main, known) for n, url in repo.remote_urls().items())
    return RepoStatus(
        branch=repo.head_branch(),
        main=main,
        uncommitted=tuple(_changes(repo)),
        pending=pending,
        unindexed=unindexed,
        index_bytes=len(rendered.encode()),
        index_tokens=size.tokens,
        remotes=remotes,
        sync_stopped=str(stopped["remote"]) if stopped else None,
        index_budget=size.to_json(),
        stale=stale,
        redact_interrupted=redact_journal.state(repo),
        settings=tuple(trust.settings(repo.root)),
        refused_paths=tuple(refused_paths(repo)),
        signing_off=_signing_off(repo),
        signers_held=trust.held(repo.root).get(trust.SIGNERS),
    )


def _signing_off(repo: MemoryRepo) -> str | None:
    from gitmem.git.signing import keygen_available

    if repo.signing_key is not None:
        return None
    if off := repo.signing_off_by():
        return off
    if not keygen_available():
        return "ssh-keygen is not installed"
    return "no signing key set up: `gitmem init .` in this clone sets one up"


def lines(st: RepoStatus) -> list[str]:
    """What ``gitmem status`` prints for people."""
    return [
        *_branch_lines(st),
        *_change_lines(st),
        *_review_lines(st),
        *_settings_lines(st),
        *([f"Signing is off: {st.signing_off}"] if st.signing_off else []),
        *_signers_lines(st),
        *_index_lines(st),
        *_remote_lines(st),
        f"({st.note})",
    ]


def _branch_lines(st: RepoStatus) -> list[str]:
    out = [f"On branch {st.branch}" if st.branch else "HEAD is detached (not on a branch)"]
    if st.branch and st.branch != MAIN:
        out.append("  memory lives on main: `git switch main` to see the agent's edits")
    if st.redact_interrupted:
        out.append(st.redact_interrupted[0].upper() + st.redact_interrupted[1:])
    for path, why in st.refused_paths:
        out.append(
            f"main holds {path}, a name gitmem never makes ({why}): "
            f"`gitmem recover --remove {shlex.quote(path)}`"
        )
    if st.sync_stopped:
        out.append(
            f"A sync with {st.sync_stopped} stopped at a conflict: settle it, then "
            "`gitmem sync --continue` (or `gitmem sync --abort`)"
        )
    return out


def _change_lines(st: RepoStatus) -> list[str]:
    if not st.uncommitted:
        return ["No uncommitted changes."]
    out = []
    cards = [c for c in st.uncommitted if c.card]
    other = [c for c in st.uncommitted if not c.card]
    if cards:
        out.append(f"Uncommitted card edits ({len(cards)}): the agent will not write over them")
        out += [f"  {c.state.strip() or '?':>2} {c.path}" for c in cards]
    if other:
        out.append(f"Other uncommitted changes ({len(other)}):")
        out += [f"  {c.state.strip() or '?':>2} {c.path}" for c in other]
    return out


def _review_lines(st: RepoStatus) -> list[str]:
    from gitmem.wording import count

    if not st.pending:
        return ["No sessions waiting for review."]
    return [f"Sessions waiting for review ({len(st.pending)}):"] + [
        f"  {p.session}  {count(p.edits, 'edit')}  {', '.join(p.cards) or '-'}"
        f"   `gitmem review {p.session}`"
        for p in st.pending
    ]


def _settings_lines(st: RepoStatus) -> list[str]:
    """Review policy and secret allow-list always; a limit only when it is held."""
    out = []
    for x in st.settings:
        if x.held is None and x.key.startswith("limits."):
            continue
        value = "none" if x.value == () else trust.shown(x.value)
        where = "not set: the default" if x.source == "default" else f"in {x.source}"
        line = f"{_LABELS.get(x.key, x.key)}: {value} ({x.key} {where})"
        if x.held is not None:
            h = x.held
            line = (
                f"{_LABELS.get(x.key, x.key)}: {value}, held on this machine: {h.remote}'s "
                f"gitmem.toml ({h.commit[:7]}) says {trust.shown(h.proposed)}; "
                "`gitmem trust` accepts it"
            )
        out.append(line)
    return out


def _signers_lines(st: RepoStatus) -> list[str]:
    from gitmem.wording import count

    h = st.signers_held
    if h is None:
        return []
    return [
        f"Signers held on this machine: {count(len(h.proposed), 'key')} that {h.remote}'s "
        f"allowed_signers ({h.commit[:7]}) adds; their commits do not verify until "
        "`gitmem trust signers`"
    ]


_LABELS = {"memory.review": "Review policy", "secrets.allow": "Secret allow-list"}


def _index_lines(st: RepoStatus) -> list[str]:
    from gitmem.index.card_list import size
    from gitmem.wording import count

    out = []
    if st.unindexed:
        out.append(f"Unindexed sections ({len(st.unindexed)}): no index entry says what they hold")
        out += _listed(st.unindexed)
    if st.stale:
        out.append(
            f"Stale entries ({len(st.stale)}): the section changed after its summary; "
            "`gitmem stale` for more"
        )
        out += _listed(st.stale)
    b = st.index_budget
    how = "estimated" if b.get("estimated", True) else "count_tokens"
    share = float(str(b.get("share", 0.0)))
    out.append(
        f"Index: {size(st.index_bytes)}, about {count(st.index_tokens, 'token')} ({how}), "
        f"{share:.0%} of its {int(str(b.get('limit', 0))):,}-token budget"
    )
    split = Split.from_json(b.get("split"))
    if split is not None and split.folded:
        fit = "folded, and still over" if b.get("state") == "over" else "folded to fit"
        out.append(f"  {fit}: {split.line()}")
    if b.get("state") == "over":
        out.append(
            "  over budget: the agent is told, nothing is cut; `gitmem consolidate` "
            "proposes a compaction for review"
        )
    elif b.get("state") == "warn":
        out.append("  above 80 % of the budget: `gitmem consolidate` proposes a compaction")
    return out


SHOWN = 10  # of a list of sections: at 1,000 cards the whole list is a wall


def _listed(sections: tuple[str, ...]) -> list[str]:
    """The first ``SHOWN`` of ``sections``, then how many more and where they are listed."""
    out = [f"  {u}" for u in sections[:SHOWN]]
    if len(sections) > SHOWN:
        out.append(f"  … and {len(sections) - SHOWN:,} more: `gitmem stale` lists them all")
    return out


def _remote_lines(st: RepoStatus) -> list[str]:
    from gitmem.wording import count

    if not st.remotes:
        return ["No remotes: `git remote add origin URL`, then `gitmem sync`."]
    out = []
    for r in st.remotes:
        out.append(f"Remote {r.name} ({r.url}):")
        if r.last_synced is None or r.ahead is None:
            out.append(f"  never synced with gitmem: `gitmem sync {r.name}`")
        else:
            when = (r.last_synced_date or "")[:16].replace("T", " ")
            out.append(
                f"  last synced at {r.last_synced[:7]} (a commit of {when}); main has "
                f"{count(r.ahead, 'commit')} to send"
                + (f" and lacks {count(r.behind or 0, 'commit')} it had" if r.behind else "")
            )
        if r.tracking is not None and r.tracking_behind:
            out.append(
                f"  {r.name}/main (from a git fetch) has "
                f"{count(r.tracking_behind, 'commit')} main has not"
            )
    return out
