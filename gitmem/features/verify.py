"""``gitmem verify``: what this clone can prove about its memory.

Each commit on main and on the pending session branches is checked with git's verdict on
its signature (``git/signing.py``: in-process where it is certain to be git's, else one
``git log`` for the rest) against the keys
this clone trusts (``.git/gitmem/allowed_signers``), and with the client its
``Gitmem-Client`` trailer binds it to (one machine key signs every client's repo, so a
commit replayed from another client's memory is signed too, but for that client). Then
the memory files in the working tree against main, and main's history against what
gitmem last left it at (``refs/gitmem/seen/main``) and what a sync refused as rewritten.
Old repos are checked from their first signed commit, or from ``since``.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from gitmem.errors import GitmemError, NotFound, UnsafePath
from gitmem.features import verify_history as history
from gitmem.features import verify_objects
from gitmem.features import verify_places as places
from gitmem.features.verify_places import VerifyFinding as VerifyFinding
from gitmem.git import safe_files, signing
from gitmem.git.runner import Sha
from gitmem.memory import cards, refs, trust
from gitmem.memory import trailers as T
from gitmem.memory.repo import MAIN, MEMORY_PATHS, MemoryRepo
from gitmem.ops.history import Commit, read_log

WHERE_LIMIT = 100  # findings whose card § section is worked out (a git process each)


@dataclass(frozen=True)
class Verification:
    """What ``verify`` found: nothing checked when ``off`` says why signing is off."""

    off: str | None
    start: str | None  # the first commit checked, None: from the root
    checked: int
    findings: tuple[VerifyFinding, ...] = ()
    verified_before: str | None = None  # main's tip at the last clean verify: checked after it

    @property
    def verified(self) -> bool:
        return not self.findings

    def to_json(self) -> dict[str, object]:
        return {
            "verified": self.verified,
            "signing_off": self.off,
            "start": self.start,
            "checked": self.checked,
            "verified_before": self.verified_before,
            "findings": [f.to_json() for f in self.findings],
        }


def verify_memory(repo: MemoryRepo, since: str | None = None) -> Verification:
    """Check every commit on main and on the pending sessions (from ``since``, else from
    the first signed commit, or only those after a main an earlier verify found nothing
    to report in, against the same signers), the working tree and main's history.
    NotFound for a ``since`` that names no commit."""
    off = repo.signing_off_by() or (None if signing.keygen_available() else "no ssh-keygen")
    if not off and repo.signing_key is None:
        off = "no signing key is set up for this clone (user.signingKey)"
    if off:
        return Verification(off, None, 0)
    tip = repo.tip(MAIN)
    if tip is None:
        raise NotFound("no main branch")
    start = _commit(repo, since) if since else None
    done = None if since else _verified(repo)
    before = [f"^{done}"] if done else _before(repo, start)
    on_main = _signatures(repo, tip, *before)
    if start is None and done is None:
        start, on_main = _from_first_signed(repo, on_main)
        before = _before(repo, start)
    sessions = repo.git.out("for-each-ref", "--format=%(refname)", refs.PENDING).split()
    pending = _signatures(repo, *sessions, f"^{tip}", *before) if sessions else {}
    logged = {c.sha: c for c in read_log(repo.git, tip, extra=[*sessions, *before])}
    commits = _commits(repo, {**on_main, **pending}, logged, set(pending))
    if not since and not any(f.commit in on_main for f in commits):
        _record_verified(repo, tip)
    damaged = verify_objects.damaged(repo)  # (git diff cannot compare what it cannot read)
    worktree = [] if damaged else _worktree(repo)
    found = (*history.state(repo), *history.history(repo), *damaged, *worktree, *commits)
    return Verification(None, start, len(on_main) + len(pending), found, done)


# Under .git/gitmem/: main's tip at the last verify that found no commit of main to report,
# with what that depends on (the trusted signers, the client): later runs check only what
# came after it, so a verify costs what is new.
VERIFIED = "verified"


def _key(repo: MemoryRepo) -> str:
    trusted = trust.trusted_path(repo.root)
    data = trusted.read_bytes() if trusted.exists() else b""
    return hashlib.sha256(data + b"\0" + repo.config.client.encode()).hexdigest()


def _verified(repo: MemoryRepo) -> str | None:
    try:
        key, sha, mark = (repo.gitmem_dir / VERIFIED).read_text("ascii").split()
    except (OSError, ValueError):
        return None
    sealed = key == _key(repo) and mark == repo.sealed(f"{key} {sha}")  # (not planted)
    got = repo.store.read(f"{sha}^{{commit}}") if sealed else None
    return sha if got is not None and got.sha == sha else None


def _record_verified(repo: MemoryRepo, tip: str) -> None:
    path = repo.gitmem_dir / VERIFIED
    tmp = path.with_name(f"{VERIFIED}.{os.getpid()}.tmp")
    try:
        key = _key(repo)
        tmp.write_text(f"{key} {tip} {repo.sealed(f'{key} {tip}')}\n", "ascii")
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only repo: the next verify checks it all again


def _signatures(repo: MemoryRepo, *revs: str) -> dict[Sha, signing.Signature]:
    """git's verdict on each commit of ``revs``, newest first in topological order; a
    commit this clone recorded as signed by itself (sealed) is trusted without checking
    its signature (its id is the hash of the very bytes it signed, while its key is trusted)."""
    order = [Sha(sha) for sha in repo.git.out("rev-list", "--topo-order", *revs, "--").split()]
    own = repo.signed_own() if _own_key_trusted(repo) else frozenset()
    mine = {sha for sha in order if sha in own and _signed(repo, sha)}
    asked = [sha for sha in order if sha not in mine]
    found = repo.verdicts(asked)
    here = signing.Signature("trusted", "", "this clone")
    return {
        sha: here if sha in mine else found[sha] for sha in order if sha in mine or sha in found
    }


def _own_key_trusted(repo: MemoryRepo) -> bool:
    """Whether this clone's signing key is trusted here (else git checks its commits too)."""
    if repo.signing_key is None:
        return False
    trusted = trust.trusted_path(repo.root)
    try:
        public = signing.public_key(Path(repo.signing_key))
        return public in trusted.read_text("utf-8", "replace")
    except (GitmemError, OSError):
        return False


def _signed(repo: MemoryRepo, sha: str) -> bool:
    got = repo.store.read(sha)
    return got is not None and b"\ngpgsig " in got.data.partition(b"\n\n")[0]


def _parents(repo: MemoryRepo, sha: str) -> list[str]:
    return repo.git.out("rev-list", "--parents", "-n1", sha).split()[1:]


def _before(repo: MemoryRepo, start: str | None) -> list[str]:
    """git log's arguments that leave out what comes before ``start`` (it stays in)."""
    return [f"^{p}" for p in _parents(repo, start)] if start else []


def _commit(repo: MemoryRepo, rev: str) -> str:
    got = repo.git.run("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
    if got.returncode:
        raise NotFound(f"no commit {rev!r} to verify from")
    return got.stdout.decode().strip()


def _from_first_signed(
    repo: MemoryRepo, sigs: dict[Sha, signing.Signature]
) -> tuple[str | None, dict[Sha, signing.Signature]]:
    """The first signed commit (oldest in topological order) and the commits from it on;
    every commit when none is unsigned, or none is signed."""
    signed = [sha for sha, s in sigs.items() if s.state != "unsigned"]
    if not signed or len(signed) == len(sigs):
        return None, sigs
    first = signed[-1]
    parents = _parents(repo, first)
    before = set(repo.git.out("rev-list", *parents, "--").split()) if parents else set()
    return first, {sha: s for sha, s in sigs.items() if sha not in before}


# -- commits ---------------------------------------------------------------------------
_STATE = {
    "unsigned": "not signed (made outside gitmem, e.g. with plain git)",
    "unknown": "signed by a key this clone does not trust",
    "bad": "its signature does not match it (changed after it was signed)",
    "unchecked": "its signature cannot be checked here",
}


def _commits(
    repo: MemoryRepo,
    sigs: dict[Sha, signing.Signature],
    logged: dict[Sha, Commit],
    pending: set[Sha],
) -> list[VerifyFinding]:
    client = repo.config.client
    held = trust.held(repo.root).get(trust.SIGNERS)
    found: list[VerifyFinding] = []
    undone = _undone(sigs, logged, client)
    for sha, sig in sigs.items():
        commit = logged.get(sha)
        said = commit.trailers if commit else {}
        problem = _problem(sig, said, client)
        if problem is None or sha in undone:
            continue
        kind, text = problem
        where = places.of_commit(repo, sha) if len(found) < WHERE_LIMIT else ""
        action = _action(sha, sig, said, pending, held.remote if held else None)
        found.append(VerifyFinding(kind, sha[:7], where, text, action, sha))
    return found


def _undone(sigs: dict[Sha, signing.Signature], logged: dict[Sha, Commit], client: str) -> set[str]:
    """The commits a verified revert (``gitmem revert``, ``Gitmem-Reverts``) undid, as the
    line's action says to: settled. A revert of that revert brings them back."""
    undid: dict[str, tuple[str, ...]] = {}
    for sha in reversed(list(sigs)):  # oldest first
        commit = logged.get(sha)
        if commit and commit.reverts and _problem(sigs[sha], commit.trailers, client) is None:
            undid[sha] = commit.reverts
    undone: set[str] = set()
    for reverts in undid.values():
        for old in reverts:
            undone.add(old)
            undone.difference_update(undid.get(old, ()))
    return undone


def _problem(sig: signing.Signature, said: dict[str, str], client: str) -> tuple[str, str] | None:
    """What is wrong with one commit (kind, words), None when nothing is."""
    if sig.state != "trusted":
        state = _STATE.get(sig.state, _STATE["unknown"])
        if sig.key and sig.state == "unknown":
            state += f" ({sig.key})"
        claims = [f"{k}: {said[k]}" for k in (T.SESSION, T.ACTOR) if k in said]
        if claims and (T.SESSION in said or said.get(T.ACTOR) in T.AGENT_ACTORS):
            return "forged", f"claims to be the agent's ({', '.join(claims)}) but is {state}"
        return sig.state, state
    bound = said.get(T.CLIENT)
    if bound is None:
        return "unbound", "signed, but names no client (not written by gitmem)"
    if bound != client:
        return "other-client", (
            f"signed for client {bound!r}, not {client!r} (replayed from another memory)"
        )
    return None


def _action(
    sha: str, sig: signing.Signature, said: dict[str, str], pending: set[Sha], held: str | None
) -> str:
    if sig.state == "unchecked":
        return "install ssh-keygen and run `gitmem verify` again"
    if sha in pending:
        session = said.get(T.SESSION)
        undo = f"`gitmem review --reject {session}`" if session else "`gitmem review --reject`"
    else:
        undo = f"`gitmem revert {sha[:7]}`"
    if sig.state == "unknown" and held:
        return f"a sync holds the signers {held} added: `gitmem trust signers` if you trust them"
    if sig.state == "unknown":
        return f"`gitmem trust signers` if a sync held its key, else undo it: {undo}"
    return f"undo it with {undo} unless you made it"


# -- the working tree -----------------------------------------------------------------
def _worktree(repo: MemoryRepo) -> list[VerifyFinding]:
    """Memory files in the working tree that are not as main has them (main checked out)."""
    if repo.head_branch() != MAIN:
        return []
    raw = repo.git.out("diff", "--no-renames", "--name-status", "-z", MAIN, "--", *MEMORY_PATHS)
    items = raw.split("\0")
    changed = [(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
    extra = repo.git.out("ls-files", "-z", "--others", "--exclude-standard", "--", *MEMORY_PATHS)
    changed += [("?", p) for p in extra.split("\0") if p]
    said = {"D": "deleted", "?": "not on main"}
    found = []
    for status, path in sorted(changed, key=lambda c: c[1]):
        card = cards.card_of(path)
        where = ""
        if card is not None:
            try:
                new = None if status == "D" else safe_files.read(repo.root, path)
            except UnsafePath:
                new = None
            where = ", ".join(places.sections(card, repo.store.read_blob(f"{MAIN}:{path}"), new))
        found.append(
            VerifyFinding(
                "tampered-file",
                path,
                where,
                f"{said.get(status[:1], 'differs from main')} in the working tree "
                "(changed outside gitmem, not committed)",
                f"`git diff main -- {path}` shows it; `git checkout main -- {path}` puts "
                "main's back",
                path=path,
            )
        )
    return found
