"""``gitmem redact``: remove every secret from history with git-filter-repo.

Refused while anything is uncommitted or a session is running (its branch and transcript
would be rewritten under it). Each finding of ``gitmem scan --history`` is replaced
whole by ``[REDACTED:<kind>]`` in every blob and commit message, and a secret in a
file's name by ``redacted-<kind>-<n>`` (``rewrite.py``: filter-repo writes into a
scratch repository, the result is scanned again before any ref moves), on the branches
and the session refs, so trailers stay trailers and ``gitmem reindex`` gives the same
index as the incremental one. gitmem's record of its own commits takes the new ids, so
``gitmem log`` and ``gitmem revert SESSION`` still know them. Interrupted, it is rolled
back or finished by ``gitmem recover`` (``redact_journal.py``). What was redacted (kinds,
places, old -> new commit of main; never a secret) is kept as a commit under
``refs/gitmem/redactions/<n>`` and as a note on the new tip
(``refs/notes/gitmem-redactions``). Nothing leaves the machine until
``gitmem redact --push REMOTE``, which pushes main with ``--force-with-lease`` on the
exact tip we last synced, then the record; another clone's ``gitmem sync`` sees the
record and offers ``--accept-redaction`` instead of refusing a rewritten remote.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from gitmem.errors import Conflict, NotFound
from gitmem.features import session_live
from gitmem.features.scan import Hit, scan_log
from gitmem.git.runner import Sha
from gitmem.index import build as index
from gitmem.memory import refs
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops import remote as remote_mod
from gitmem.ops.land import commits_between, land
from gitmem.ops.linked_worktrees import move_and_follow
from gitmem.ops.transplant import changed_paths
from gitmem.ops.worktree import ensure_clean, worktree_guard
from gitmem.sync import redact_journal as journal
from gitmem.sync import rewrite
from gitmem.sync.redact_journal import NOTES

REWRITTEN = ("refs/heads/", *refs.DECIDED.values())


@dataclass(frozen=True)
class Redaction:
    """A redaction: its record ref (``None`` when nothing was found), the findings (kind,
    path, line, section, commit; never the secret), main before and after, and what was pushed."""

    record: str | None  # the ref holding the record; None when nothing was found
    findings: list[dict[str, object]]
    main_before: str | None
    main_after: str | None
    pushed: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def _refs(repo: MemoryRepo) -> list[str]:
    out = repo.git.out("for-each-ref", "--format=%(refname)", *REWRITTEN)
    return [r for r in out.splitlines() if r]


def _next_record(repo: MemoryRepo) -> str:
    have = [
        r.rsplit("/", 1)[-1]
        for r in repo.git.out("for-each-ref", "--format=%(refname)", refs.REDACTIONS).split()
    ]
    n = max((int(x) for x in have if x.isdigit()), default=0) + 1
    return f"{refs.REDACTIONS}{n}"


def redact_secrets(repo: MemoryRepo, push: str | None = None) -> Redaction:
    """Rewrite local history without its secrets; with ``push``, publish main and the record.

    Refused (DirtyCard) while anything is uncommitted, (Conflict) while a session runs; a
    redact interrupted before is finished (or rolled back) first."""

    if repo.tip(MAIN) is None:
        raise NotFound("no main branch")
    if push:
        remote_mod.url(repo, push)  # an unknown remote is refused before anything is rewritten
    with repo.lock("redact"):
        if journal.load(repo) is not None:
            _refuse_live(repo)
        resumed = journal.finish_locked(repo)
        done = _redact(repo, resumed)
    if push:
        return _publish(repo, push, done if done.record else _last(repo, done.notes))
    return done


def _redact(repo: MemoryRepo, resumed: list[str]) -> Redaction:
    refs = _refs(repo)
    hits = scan_log(repo, *refs)
    if not hits:
        if resumed:
            return _last(repo, resumed)
        return Redaction(None, [], repo.tip(MAIN), repo.tip(MAIN), notes=resumed)
    _refuse_live(repo)
    head = repo.head_branch()
    with worktree_guard(repo, head or MAIN) as live:
        journal.refuse_uncommitted(repo)
        journal.save(repo, {"phase": "prepare"})
        try:
            done = rewrite.rewrite(repo, hits, refs)
        except BaseException:
            journal.clear(repo)
            raise
        before = repo.tip(MAIN)
        after = done.tips.get(f"refs/heads/{MAIN}", before)
        record, findings = _next_record(repo), [_finding(h) for h in done.found]
        data: dict[str, object] = {
            "phase": "apply",
            "record": record,
            "findings": findings,
            "main_before": before,
            "main_after": after,
            "refs": {ref: [repo.store.resolve(ref), new] for ref, new in done.tips.items()},
            "map": done.commits,
        }
        journal.save(repo, data)
        notes = journal.apply(repo, data, head if live else None)
    if notes:  # a concurrent writer moved a ref: that ref keeps its history
        raise Conflict(f"redact incomplete: {'; '.join(notes)}")
    if repo.store.resolve("refs/stash"):
        notes.append(
            "refs/stash still holds history from before the redact: `git stash pop` the "
            "work onto the new history (then `gitmem scan --history` is clean)"
        )
    return Redaction(record, findings, before, after, notes=resumed + notes)


def _refuse_live(repo: MemoryRepo) -> None:
    """Refuse (Conflict) while a session runs: its branch and transcript would be rewritten
    under it. A crashed session holds no lock and does not count."""
    live = [(s, pid) for s in session_live.listed(repo) if (pid := session_live.running(repo, s))]
    if live:
        named = ", ".join(f"{s} (process {pid})" for s, pid in live)
        one = len(live) == 1
        raise Conflict(
            f"{'session' if one else 'sessions'} {named} {'is' if one else 'are'} still "
            f"running; end {'it' if one else 'them'} first (close the MCP client or the "
            "chat), then `gitmem redact` again; nothing was rewritten"
        )


def _finding(h: Hit) -> dict[str, object]:
    return {
        k: v for k, v in h.to_json().items() if k in ("kind", "path", "line", "section", "commit")
    }


def _last(repo: MemoryRepo, notes: list[str]) -> Redaction:
    """The redaction last recorded (the one an interrupted run just finished)."""
    records = repo.git.out(
        "for-each-ref", "--sort=-refname", "--format=%(refname)", refs.REDACTIONS
    ).split()
    if not records:
        raise NotFound("nothing to push: history has no secrets and no redaction was made")
    last = records[0]
    data = json.loads(repo.git.out("show", f"{last}:redaction.json"))
    return Redaction(last, data["findings"], data["main_before"], data["main_after"], notes=notes)


def _publish(repo: MemoryRepo, remote: str, done: Redaction) -> Redaction:

    where = remote_mod.url(repo, remote)
    lease = repo.store.resolve(refs.sync(remote, "last-synced"))
    tip = repo.tip(MAIN)
    assert tip is not None and done.record is not None
    expect = lease or ""
    proc = repo.git.run(
        "push",
        "--porcelain",
        "--quiet",
        f"--force-with-lease=refs/heads/main:{expect}",
        remote,
        f"{tip}:refs/heads/main",
        f"{done.record}:{done.record}",
        f"{NOTES}:{NOTES}",
        check=False,
    )
    if proc.returncode:
        raise Conflict(
            f"{remote} ({where}) refused the redacted main: its main is no longer "
            f"{expect[:7] or 'absent'}, the tip last synced; nothing was overwritten. Run "
            "`gitmem sync` first (it refuses while secrets remain), then redact again"
        )
    repo.git.run("update-ref", refs.sync(remote, "last-synced"), tip)
    return Redaction(done.record, done.findings, done.main_before, done.main_after, remote)


# -- another clone ----------------------------------------------------------------
class RemoteRedacted(Conflict):
    """The remote's main was rewritten by `gitmem redact`."""


def fetch_records(repo: MemoryRepo, remote: str) -> list[dict[str, object]]:
    """The remote's redaction records, fetched under ``refs/gitmem/remote-redactions/``."""
    into = refs.remote_redactions(remote)
    repo.git.run(
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        "--refmap=",
        remote,
        f"+{refs.REDACTIONS}*:{into}*",
        check=False,
    )
    out: list[dict[str, object]] = []
    for ref in repo.git.out("for-each-ref", "--format=%(refname)", into).split():
        out.append(json.loads(repo.git.out("show", f"{ref}:redaction.json")))
    return out


def redacted_as(repo: MemoryRepo, remote: str, last: str) -> str | None:
    """What the remote's redaction made of ``last`` (a commit we synced), if it did."""
    for rec in fetch_records(repo, remote):
        mapping = rec.get("map")
        if isinstance(mapping, dict) and isinstance(mapping.get(last), str):
            return str(mapping[last])
    return None


def accept_redaction(repo: MemoryRepo, remote: str, theirs: Sha, last: Sha) -> str:
    """Take the remote's rewritten main: main moves to its rewrite of ``last`` and the
    local commits since are re-created on top; the next sync round merges and pushes."""

    new_last = redacted_as(repo, remote, last)
    if new_last is None or repo.store.resolve(new_last) is None:
        raise Conflict(
            f"{remote}/main was rewritten, but not by a `gitmem redact` this clone knows"
        )
    ours = repo.tip(MAIN)
    assert ours is not None
    local = commits_between(repo, last, ours)
    if any(len(repo.git.out("rev-list", "--parents", "-n1", c).split()) > 2 for c in local):
        raise Conflict(
            "local commits since the last sync include a merge; accept the redaction from a fresh clone"
        )
    paths = changed_paths(repo, ours, Sha(new_last))
    with worktree_guard(repo, MAIN) as live:
        if live:
            ensure_clean(repo, paths)
        if not move_and_follow(
            repo,
            MAIN,
            Sha(new_last),
            ours,
            paths,
            live=live,
            reason="gitmem sync: accept redaction",
        ).moved:
            raise Conflict("main moved while the redaction was accepted; run it again")
    land(repo, local, MAIN, "gitmem sync: local commits onto the redacted history")
    repo.git.run("update-ref", refs.sync(remote, "last-synced"), new_last)
    index.rebuild(repo)
    return new_last
