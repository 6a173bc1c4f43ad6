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
from dataclasses import asdict, dataclass
from pathlib import Path

from gitmem.errors import GitmemError, NotFound, UnsafePath
from gitmem.git import safe_files, signing
from gitmem.git.runner import Sha
from gitmem.memory import cards, refs, trust
from gitmem.memory import trailers as T
from gitmem.memory.repo import MAIN, MEMORY_PATHS, MemoryRepo
from gitmem.ops.history import Commit, read_log

WHERE_LIMIT = 100  # findings whose card § section is worked out (a git process each)


@dataclass(frozen=True)
class VerifyFinding:
    """One thing that is not verified: ``subject`` is a short commit id or a path."""

    kind: str
    subject: str
    where: str  # "card § section, ..." or ""
    problem: str
    action: str
    commit: str | None = None
    path: str | None = None

    def line(self) -> str:
        where = f" {self.where}" if self.where else ""
        return f"{self.subject}{where}: {self.problem}; {self.action}"

    def to_json(self) -> dict[str, object]:
        return {**asdict(self), "line": self.line()}


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
    found = (*_history(repo), *_worktree(repo), *commits)
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
        key, sha = (repo.gitmem_dir / VERIFIED).read_text("ascii").split()
    except (OSError, ValueError):
        return None
    got = repo.store.read(f"{sha}^{{commit}}") if key == _key(repo) else None
    return sha if got is not None and got.sha == sha else None


def _record_verified(repo: MemoryRepo, tip: str) -> None:
    path = repo.gitmem_dir / VERIFIED
    tmp = path.with_name(f"{VERIFIED}.{os.getpid()}.tmp")
    try:
        tmp.write_text(f"{_key(repo)} {tip}\n", "ascii")
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only repo: the next verify checks it all again


def _signatures(repo: MemoryRepo, *revs: str) -> dict[Sha, signing.Signature]:
    """git's verdict on each commit of ``revs``, newest first in topological order; a
    signed commit this clone recorded as its own is trusted without checking its signature
    (its id is the hash of the very bytes this clone signed, while its key is trusted here)."""
    order = [Sha(sha) for sha in repo.git.out("rev-list", "--topo-order", *revs, "--").split()]
    own = repo.own_commits() if _own_key_trusted(repo) else frozenset()
    mine = {sha for sha in order if sha in own and _signed(repo, sha)}
    asked = [sha for sha in order if sha not in mine]
    found = signing.verdicts(repo.store, asked, repo.signature_settings()) if asked else {}
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
    for sha, sig in sigs.items():
        commit = logged.get(sha)
        said = commit.trailers if commit else {}
        problem = _problem(sig, said, client)
        if problem is None:
            continue
        kind, text = problem
        where = _where(repo, sha) if len(found) < WHERE_LIMIT else ""
        action = _action(sha, sig, said, pending, held.remote if held else None)
        found.append(VerifyFinding(kind, sha[:7], where, text, action, sha))
    return found


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


def _where(repo: MemoryRepo, sha: str) -> str:
    """The card § sections a commit changed (against its first parent)."""
    parent = f"{sha}^" if _parents(repo, sha) else None
    args = [parent] if parent else ["--root"]
    names = repo.git.out("diff-tree", "-r", "--no-commit-id", "--name-only", "-z", *args, sha)
    places: list[str] = []
    for path in names.split("\0"):
        card = cards.card_of(path)
        if card is None:
            continue
        old = repo.store.read_blob(f"{parent}:{path}") if parent else None
        new = repo.store.read_blob(f"{sha}:{path}")
        places += _sections(card, old, new)
    return ", ".join(places)


def _sections(card: str, old: bytes | None, new: bytes | None) -> list[str]:
    """``card § id`` for each section that differs between two versions of a card; the
    card alone when only the order of its sections or the text outside them changed."""
    a = cards.section_texts(old.decode("utf-8", "replace")) if old else {}
    b = cards.section_texts(new.decode("utf-8", "replace")) if new else {}
    changed = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
    if not changed:
        return [f"{card} (order of sections)" if list(a) != list(b) else card]
    return [f"{card} § {k}" for k in changed]


# -- history and the working tree --------------------------------------------------------
def _history(repo: MemoryRepo) -> list[VerifyFinding]:
    """A main that lost what gitmem last left it at; a remote's rewrite a sync refused."""
    found: list[VerifyFinding] = []
    seen = repo.store.resolve(refs.SEEN)
    if seen and not _contains(repo, MAIN, seen):
        found.append(
            VerifyFinding(
                "rolled-back",
                seen[:7],
                "",
                "main no longer contains this commit, where gitmem last left it "
                "(history rolled back or rewritten outside gitmem)",
                f"`git log --oneline main..{seen[:7]}` shows what went; "
                f"`git merge --ff-only {seen[:7]}` puts back a rollback; "
                f"`git update-ref {refs.SEEN} main` accepts one you made",
                seen,
            )
        )
    listed = repo.git.out(
        "for-each-ref", "--format=%(objectname) %(refname)", refs.SYNC, refs.REPLACE
    )
    for line in listed.splitlines():
        theirs, _, ref = line.partition(" ")
        if ref.startswith(refs.REPLACE):
            found.append(_replaced(ref.removeprefix(refs.REPLACE), theirs))
            continue
        remote = refs.rewritten_remote(ref)
        last = repo.store.resolve(refs.sync(remote, "last-synced")) if remote else None
        if remote and last and not _contains(repo, theirs, last):
            found.append(
                VerifyFinding(
                    "remote-rewritten",
                    theirs[:7],
                    "",
                    f"{remote}'s main was rewritten: it no longer contains {last[:7]}, "
                    "what was synced last (`gitmem sync` refused it)",
                    f"keep this history there with `git push --force-with-lease=main:{theirs} "
                    f"{remote} main`",
                    theirs,
                )
            )
    return found


def _replaced(original: str, replacement: str) -> VerifyFinding:
    problem = (
        f"git is told to show {replacement[:7]} in its place (`git replace`), so plain git "
        "shows text gitmem did not write; gitmem reads the original"
    )
    return VerifyFinding(
        "replaced-object",
        original[:7],
        "",
        problem,
        f"`git replace -d {original}` removes the replacement",
    )


def _contains(repo: MemoryRepo, tip: str, sha: str) -> bool:
    return repo.git.run("merge-base", "--is-ancestor", sha, tip, check=False).returncode == 0


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
            where = ", ".join(_sections(card, repo.store.read_blob(f"{MAIN}:{path}"), new))
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
