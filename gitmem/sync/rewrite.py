"""History without its secrets, written beside this repository's: git-filter-repo's run.

filter-repo reads this repository (``--source``) and writes a new bare one (``--target``,
under ``.git/gitmem/redact-work``): run in place it would move the refs itself and end
with ``git reset --hard``, which throws away uncommitted work. Here no ref and no file of
this repository changes; the new commits are fetched back as objects only, then checked
with the same scanner, and ``gitmem redact`` moves the refs.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from gitmem.errors import Conflict
from gitmem.features.scan import Hit, scan_log
from gitmem.git import signing
from gitmem.git.runner import Git, Sha, clean_env
from gitmem.memory.repo import MemoryRepo

WORK = "redact-work"  # under .git/gitmem/
_PEM = rb"regex:-----BEGIN ([A-Z ]*)PRIVATE KEY-----[\s\S]*?-----END \1PRIVATE KEY-----"
_PEM_CUT = rb"regex:-----BEGIN [A-Z ]*PRIVATE KEY-----(?:\n[A-Za-z0-9+/=]+)*"  # no END line
_PUTTY = rb"regex:PuTTY-User-Key-File-\d:[^\n]*(?:\n(?:[\w-]+: [^\n]*|[A-Za-z0-9+/=]+))*"


@dataclasses.dataclass(frozen=True)
class Rewritten:
    tips: dict[str, str]  # ref -> its new tip, for each ref the rewrite changed
    commits: dict[str, str]  # old -> new, for each commit the rewrite changed
    found: list[Hit] = dataclasses.field(default_factory=list)  # every finding replaced


def replacements(hits: list[Hit]) -> dict[str, str]:
    """secret -> what replaces it: ``[REDACTED:<kind>]``, or for a secret in a file's name
    a valid card name ``redacted-<kind>-<n>`` (the same in the name, the text and the
    ``Gitmem-Card`` trailer, so the card stays one card)."""
    out: dict[str, str] = {}
    n = 0
    for h in sorted(hits, key=lambda h: h.line):  # names (line 0) first
        if not h.secret or h.kind == "private-key" or h.secret in out:
            continue
        if h.line == 0:
            n += 1
            out[h.secret] = f"redacted-{h.kind}-{n}"
        else:
            out[h.secret] = f"[REDACTED:{h.kind}]"
    return out


def rules(hits: list[Hit], swap: dict[str, str]) -> bytes:
    """filter-repo's ``--replace-text`` file: each secret whole, longest first (a secret
    that contains another is replaced whole), and every private key block."""
    lines: list[bytes] = []
    if any(h.kind == "private-key" for h in hits):
        lines += [k + b"==>[REDACTED:private-key]" for k in (_PEM, _PEM_CUT, _PUTTY)]
    for secret in sorted(swap, key=len, reverse=True):
        if "==>" in secret:
            lines.append(b"regex:" + re.escape(secret).encode() + b"==>" + swap[secret].encode())
        else:
            lines.append(b"literal:" + secret.encode() + b"==>" + swap[secret].encode())
    return b"\n".join(lines) + b"\n"


def _renames(hits: list[Hit], swap: dict[str, str]) -> str:
    """filter-repo's ``--filename-callback`` body: secrets in names replaced."""
    named = sorted({h.secret for h in hits if h.line == 0 and h.secret}, key=len, reverse=True)
    body = "".join(
        f"filename = filename.replace({s.encode()!r}, {swap[s].encode()!r})\n" for s in named
    )
    return body + "return filename\n"


def work_dir(repo: MemoryRepo) -> Path:
    return repo.git_dir / "gitmem" / WORK


def rewrite(repo: MemoryRepo, hits: list[Hit], refs: list[str]) -> Rewritten:
    """The history of ``refs`` with every finding of ``hits`` replaced, its objects here.
    The rewritten history is scanned again: what a replacement uncovers (a secret beside
    another on one line) is added and the rewrite run again from the original, until
    nothing is left (``found`` then names every finding, by its original commit).
    Conflict when filter-repo fails or a finding is left that no replacement removes."""
    found = list(hits)
    while True:
        done = _pass(repo, found, refs)
        # the proof: every ref as it will be, scanned as `gitmem scan --history` scans
        left = scan_log(repo, *(done.tips.get(ref, ref) for ref in refs))
        known = {h.secret for h in found}
        new = [h for h in left if h.secret and h.secret not in known]
        if not left:
            return dataclasses.replace(resign(repo, done, refs), found=found)
        if not new:  # each pass adds a secret, so the loop ends
            kinds = ", ".join(sorted({h.kind for h in left}))
            raise Conflict(
                f"redact stopped: the rewritten history would still hold {len(left)} "
                f"finding(s) ({kinds}); nothing was changed. gitmem has no rule that removes "
                "them: please report it (`gitmem scan --history` names each one)"
            )
        back = {n: o for o, n in done.commits.items()}
        found += [dataclasses.replace(h, commit=back.get(h.commit or "", h.commit)) for h in new]


def _pass(repo: MemoryRepo, hits: list[Hit], refs: list[str]) -> Rewritten:
    """One filter-repo run from this repository's history, ``hits`` replaced; the new
    commits fetched here as objects only (no ref of this repository moves)."""
    work = work_dir(repo)
    shutil.rmtree(work, ignore_errors=True)
    target = work / f"target-{os.getpid()}.git"  # not one a killed run's orphan still writes
    target.mkdir(parents=True)
    Git(target).run("init", "--quiet", "--bare", ".")
    swap = replacements(hits)
    (work / "rules").write_bytes(rules(hits, swap))
    cmd = [
        *(sys.executable, "-m", "git_filter_repo", "--quiet", "--force"),
        *("--source", str(repo.root), "--target", str(target)),
        *("--replace-text", str(work / "rules"), "--replace-message", str(work / "rules")),
        *("--filename-callback", _renames(hits, swap), "--refs", *refs),
    ]
    proc = subprocess.run(cmd, cwd=repo.root, env=clean_env(), capture_output=True, check=False)
    if proc.returncode:
        last = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["?"]
        raise Conflict(f"git filter-repo failed ({proc.returncode}): {last[0]}")
    done = _read(repo, target)
    if done.tips:
        repo.git.run(
            *("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--refmap="),
            str(target),
            *done.tips,
        )
    return done


def _read(repo: MemoryRepo, target: Path) -> Rewritten:
    meta = target / "filter-repo"
    commits: dict[str, str] = {}
    for line in (meta / "commit-map").read_text().splitlines()[1:]:
        old, _, new = line.partition(" ")
        if old != new:
            commits[old] = new
    tips: dict[str, str] = {}
    listed = Git(target).out("for-each-ref", "--format=%(objectname) %(refname)")
    for line in listed.splitlines():
        new, _, ref = line.partition(" ")
        if repo.store.resolve(ref) not in (None, new):
            tips[ref] = new
    return Rewritten(tips, commits)


def resign(repo: MemoryRepo, done: Rewritten, refs: list[str]) -> Rewritten:
    """The rewritten commits signed again by this clone where the originals were signed by
    a trusted key (fast-export drops every signature); the others re-created on their new
    parents as they are, unsigned. The same trees, messages, authors and committers (a
    redact run twice gives the same commits): the scan still holds."""
    if repo.signing_key is None or not done.commits:
        return done
    was = signing.signatures(repo.git, *refs)
    back = {new: old for old, new in done.commits.items()}
    listed = repo.git.out("rev-list", "--topo-order", "--reverse", *done.tips.values())
    again: dict[str, str] = {}
    for new in listed.split():
        if new not in back:
            continue  # not rewritten: nor is anything it descends from
        raw = repo.store.read_commit(new)
        parents = [Sha(again.get(p, p)) for p in raw.parents]
        if was.get(Sha(back[new])) and was[Sha(back[new])].state == "trusted":
            again[new] = repo.write_commit(
                raw.tree, parents, raw.message, raw.author, raw.committer
            )
        else:
            again[new] = repo.store.write_commit(
                raw.tree, parents, raw.author, raw.committer, raw.message
            )
    return dataclasses.replace(
        done,
        tips={ref: again.get(tip, tip) for ref, tip in done.tips.items()},
        commits={old: again.get(new, new) for old, new in done.commits.items()},
    )


def clean(repo: MemoryRepo) -> None:
    shutil.rmtree(work_dir(repo), ignore_errors=True)
