"""``gitmem redact``: remove every secret from history with git-filter-repo.

Each finding of ``gitmem scan --history`` is replaced by ``[REDACTED:<kind>]`` in
every blob and commit message (``git filter-repo --replace-text --replace-message``
on the branches and the session refs), so trailers stay trailers and ``gitmem
reindex`` gives the same index as the incremental one. What was redacted (kinds,
places, old -> new commit of main; never a secret) is kept as a commit under
``refs/gitmem/redactions/<n>`` and as a note on the new tip
(``refs/notes/gitmem-redactions``). Nothing leaves the machine until
``gitmem redact --push REMOTE``, which pushes main with ``--force-with-lease`` on the
exact tip we last synced, then the record; another clone's ``gitmem sync`` sees the
record and offers ``--accept-redaction`` instead of refusing a rewritten remote.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field

from gitmem.errors import Conflict, NotFound
from gitmem.features.scan import Hit, scan_log
from gitmem.git.objects import TreeEntry
from gitmem.git.runner import Sha, clean_env
from gitmem.index import build as index
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops import remote as remote_mod
from gitmem.ops.land import commits_between, land
from gitmem.ops.transplant import changed_paths
from gitmem.ops.worktree import (
    ensure_clean,
    move_and_follow,
    sync_worktree,
    worktree_guard,
)
from gitmem.sync.refs import sync_ref

RECORDS = "refs/gitmem/redactions/"
NOTES = "refs/notes/gitmem-redactions"
REWRITTEN = ("refs/heads/", "refs/gitmem/archive/", "refs/gitmem/partial/", "refs/gitmem/rejected/")
_PEM = rb"regex:-----BEGIN ([A-Z ]*)PRIVATE KEY-----[\s\S]*?-----END \1PRIVATE KEY-----"


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

    def text(self) -> str:
        if self.record is None:
            return "no secrets found in history: nothing to redact.\n"
        kinds = sorted({str(f["kind"]) for f in self.findings})
        out = (
            f"redacted {len(self.findings)} finding(s) ({', '.join(kinds)}); main "
            f"{(self.main_before or '')[:7]} -> {(self.main_after or '')[:7]}; "
            f"recorded in {self.record}.\n"
        )
        if self.pushed:
            out += f"pushed to {self.pushed} (force-with-lease); other clones run `gitmem sync --accept-redaction`.\n"
        else:
            out += "nothing was pushed: publish with `gitmem redact --push REMOTE`.\n"
        return out


def _replacements(hits: list[Hit]) -> bytes:
    lines: list[bytes] = []
    for h in hits:
        if h.kind == "private-key":
            lines.append(_PEM + b"==>[REDACTED:private-key]")
        elif h.secret and "\n" not in h.secret:
            lines.append(f"{h.secret}==>[REDACTED:{h.kind}]".encode())
    # longest first: a secret that contains another is replaced whole
    ordered = sorted(set(lines), key=lambda b: len(bytes(b)), reverse=True)
    return b"\n".join(ordered) + b"\n"


def _refs(repo: MemoryRepo) -> list[str]:
    out = repo.git.out("for-each-ref", "--format=%(refname)", *REWRITTEN)
    return [r for r in out.splitlines() if r]


def _filter_repo(repo: MemoryRepo, rules: bytes, refs: list[str]) -> dict[str, str]:
    """Run git-filter-repo (the installed package's script) on ``refs``; old -> new commits."""
    state = repo.git_dir / "filter-repo"  # its maps and its "already ran" mark
    shutil.rmtree(state, ignore_errors=True)
    fd, path = tempfile.mkstemp(prefix="gitmem-redact-", dir=repo.git_dir)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(rules)
        cmd = [
            sys.executable,
            "-m",
            "git_filter_repo",
            "--force",
            "--quiet",
            "--replace-text",
            path,
            "--replace-message",
            path,
            "--refs",
            *refs,
        ]
        proc = subprocess.run(cmd, cwd=repo.root, env=clean_env(), capture_output=True, check=False)
        if proc.returncode:
            last = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["?"]
            raise Conflict(f"git filter-repo failed ({proc.returncode}): {last[0]}")
    finally:
        os.unlink(path)
    mapping: dict[str, str] = {}
    cmap = state / "commit-map"
    if cmap.exists():
        for line in cmap.read_text().splitlines()[1:]:
            old, _, new = line.partition(" ")
            if old != new:
                mapping[old] = new
    shutil.rmtree(state, ignore_errors=True)
    return mapping


def _next_record(repo: MemoryRepo) -> str:
    have = [
        r.rsplit("/", 1)[-1]
        for r in repo.git.out("for-each-ref", "--format=%(refname)", RECORDS).split()
    ]
    n = max((int(x) for x in have if x.isdigit()), default=0) + 1
    return f"{RECORDS}{n}"


def _write_record(repo: MemoryRepo, ref: str, data: dict[str, object]) -> None:
    blob = repo.store.write("blob", json.dumps(data, indent=2, sort_keys=True).encode() + b"\n")
    tree = repo.store.write_tree([TreeEntry(b"100644", b"redaction.json", blob)])
    commit = repo.write_commit(tree, [], f"gitmem redact: {ref.rsplit('/', 1)[-1]}\n")
    repo.git.run("update-ref", ref, commit)


def redact(repo: MemoryRepo, push: str | None = None) -> Redaction:
    """Rewrite local history without its secrets; with ``push``, publish main and the record."""

    if repo.tip(MAIN) is None:
        raise NotFound("no main branch")
    if push:
        remote_mod.url(repo, push)  # an unknown remote is refused before anything is rewritten
    hits = scan_log(repo, *_refs(repo))
    if not hits:
        if push:
            return _push_pending(repo, push)
        return Redaction(None, [], repo.tip(MAIN), repo.tip(MAIN))
    before = repo.tip(MAIN)
    findings = [
        {k: v for k, v in h.to_json().items() if k in ("kind", "path", "line", "section", "commit")}
        for h in hits
    ]
    with worktree_guard(repo, MAIN) as live:
        if live:
            ensure_clean(
                repo, sorted({h.path for h in hits if "/" in h.path or h.path.endswith(".md")})
            )
        mapping = _filter_repo(repo, _replacements(hits), _refs(repo))
        after = repo.tip(MAIN)
        if live and before and after and after != before:
            # filter-repo on chosen refs leaves the working tree alone: it follows here
            sync_worktree(repo, after, changed_paths(repo, before, after))
    ref = _next_record(repo)
    data: dict[str, object] = {
        "findings": findings,
        "main_before": before,
        "main_after": after,
        "map": mapping,
    }
    _write_record(repo, ref, data)
    if after:
        kinds = ", ".join(sorted({h.kind for h in hits}))
        repo.git.run(
            "notes",
            f"--ref={NOTES}",
            "add",
            "-f",
            "-m",
            f"gitmem redact ({ref}): {len(hits)} finding(s) replaced by [REDACTED:<kind>]: {kinds}",
            after,
        )
    index.rebuild(repo)
    done = Redaction(ref, findings, before, after)
    return _publish(repo, push, done) if push else done


def _push_pending(repo: MemoryRepo, remote: str) -> Redaction:
    records = repo.git.out(
        "for-each-ref", "--sort=-refname", "--format=%(refname)", RECORDS
    ).split()
    if not records:
        raise NotFound("nothing to push: history has no secrets and no redaction was made")
    last = records[0]
    data = json.loads(repo.git.out("show", f"{last}:redaction.json"))
    done = Redaction(last, data["findings"], data["main_before"], data["main_after"])
    return _publish(repo, remote, done)


def _publish(repo: MemoryRepo, remote: str, done: Redaction) -> Redaction:

    where = remote_mod.url(repo, remote)
    lease = repo.store.resolve(sync_ref(remote, "last-synced"))
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
    repo.git.run("update-ref", sync_ref(remote, "last-synced"), tip)
    return Redaction(done.record, done.findings, done.main_before, done.main_after, remote)


# -- another clone ----------------------------------------------------------------
class RemoteRedacted(Conflict):
    """The remote's main was rewritten by `gitmem redact`."""


def fetch_records(repo: MemoryRepo, remote: str) -> list[dict[str, object]]:
    """The remote's redaction records, fetched under ``refs/gitmem/remote-redactions/``."""
    into = f"refs/gitmem/remote-redactions/{remote}/"
    repo.git.run(
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        "--refmap=",
        remote,
        f"+{RECORDS}*:{into}*",
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
    repo.git.run("update-ref", sync_ref(remote, "last-synced"), new_last)
    index.rebuild(repo)
    return new_last
