"""A ``gitmem redact`` that is rolled back or finished, whenever it was interrupted.

Before anything is rewritten, ``.git/gitmem/redact.json`` says a redact is preparing;
killed then, nothing of the repository changed and ``gitmem recover`` only removes the
scratch repository. Once the rewritten history is here and checked, the file holds
every step's data (each ref's old and new tip, old -> new commits, the record to
write): from then on the redact is rolled forward, step by step and each step
idempotent, by whoever runs next (``gitmem recover``, ``gitmem redact``). The
checked-out branch moves with ``move_and_follow``: its working tree follows or the
next gitmem command finishes it, so HEAD is never left redacted over a secret on disk.
``gitmem status`` names a redact left unfinished.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from gitmem.errors import Conflict, DirtyCard
from gitmem.git.objects import TreeEntry
from gitmem.git.runner import Sha
from gitmem.index import build as index
from gitmem.memory.repo import MAIN, REDACT_JOURNAL, MemoryRepo, where_memory_lives
from gitmem.ops.linked_worktrees import move_and_follow, others
from gitmem.ops.refs import saw
from gitmem.ops.transplant import changed_paths
from gitmem.ops.worktree import worktree_guard
from gitmem.sync import rewrite

JOURNAL = REDACT_JOURNAL
NOTES = "refs/notes/gitmem-redactions"


def _path(repo: MemoryRepo) -> Path:
    return repo.git_dir / "gitmem" / JOURNAL


def save(repo: MemoryRepo, data: dict[str, Any]) -> None:
    path = repo.private_dir() / JOURNAL
    tmp = path.with_name(JOURNAL + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)  # the commit point of the redact, when the phase is "apply"


def load(repo: MemoryRepo) -> dict[str, Any] | None:
    try:
        data = json.loads(_path(repo).read_text("utf-8"))
    except FileNotFoundError:
        return None
    except ValueError:
        return {"phase": "prepare"}  # torn: os.replace never leaves one, a disk might
    return data if isinstance(data, dict) else {"phase": "prepare"}


def clear(repo: MemoryRepo) -> None:
    rewrite.clean(repo)
    with contextlib.suppress(FileNotFoundError):
        _path(repo).unlink()


def state(repo: MemoryRepo) -> str | None:
    """What ``gitmem status`` says of a redact left unfinished (None: there is none)."""
    data = load(repo)
    if data is None:
        return None
    if data.get("phase") != "apply":
        return "a redact was interrupted before it changed anything: `gitmem recover` cleans up"
    return "a redact was interrupted after history was rewritten: `gitmem recover` finishes it"


def refuse_uncommitted(repo: MemoryRepo) -> None:
    """DirtyCard naming every uncommitted change (staged or not, and untracked files where
    memory lives): a rewrite must not meet a person's work, so nothing is rewritten."""
    raw = repo.git.run(
        *("--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all")
    ).stdout.decode("utf-8", "surrogateescape")
    items = raw.split("\0")
    dirty: list[str] = []
    i = 0
    while i < len(items):
        code, path = items[i][:2], items[i][3:]
        i += 2 if code[:1] in ("R", "C") else 1  # a rename names its source next
        if path and (code != "??" or where_memory_lives(path)):
            dirty.append(path)
    if dirty:
        raise DirtyCard(
            f"refused: uncommitted changes to {', '.join(sorted(set(dirty)))}; nothing was "
            "rewritten. Commit them first (`git add`, `git commit`: the redact rewrites that "
            "commit too), or put them aside with `git stash -u` (and `git stash pop` after); "
            "then run `gitmem redact` again",
            hint="a rewrite of history must not meet uncommitted work",
        )


def apply(repo: MemoryRepo, data: dict[str, Any], live: str | None) -> list[str]:
    """Roll the redact of ``data`` forward (the working-tree lock held; ``live``: the
    branch checked out here); what could not be done, one line each."""
    notes: list[str] = []
    own = repo.own_commits()  # recorded before any ref moves: a commit not landed is harmless
    repo.record_own([Sha(new) for old, new in data["map"].items() if old in own])
    moves: dict[str, list[str]] = data["refs"]
    live_ref = f"refs/heads/{live}" if live else None
    batch = []
    elsewhere = []  # branches checked out in a linked worktree: moved with it following
    for ref, (old, new) in moves.items():
        now = repo.store.resolve(ref)
        branch = ref.removeprefix("refs/heads/")
        if now == old and ref != live_ref and ref != branch and others(repo, branch):
            elsewhere.append((branch, Sha(old), Sha(new)))
        elif now == old and ref != live_ref:
            batch.append(f"update {ref} {new} {old}\n")
        elif now not in (old, new):
            notes.append(f"{ref} moved since the rewrite: left as it is; redact again")
    if batch:  # one transaction: all of these refs move, or none
        repo.git.run("update-ref", "-m", "gitmem redact", "--stdin", input="".join(batch).encode())
    for branch, old, new in elsewhere:
        paths = changed_paths(repo, old, new)
        if not move_and_follow(
            repo, branch, new, old, paths, live=False, reason="gitmem redact"
        ).moved:
            notes.append(
                f"refs/heads/{branch} moved during the redact: left as it is; redact again"
            )
    if live_ref in moves and repo.store.resolve(live_ref) == moves[live_ref][0]:
        old, new = (Sha(x) for x in moves[live_ref])
        paths = changed_paths(repo, old, new)
        refuse_uncommitted(repo)
        if not move_and_follow(
            repo, str(live), new, old, paths, live=True, reason="gitmem redact"
        ).moved:
            notes.append(f"{live_ref} moved during the redact: left as it is; redact again")
    main = f"refs/heads/{MAIN}"
    if main in moves and repo.store.resolve(main) == moves[main][1]:
        saw(repo, Sha(moves[main][0]), Sha(moves[main][1]))  # before gc: the old commits go
    _write_record(repo, data)
    index.rebuild(repo)
    _forget_old(repo)
    clear(repo)
    return notes


def _forget_old(repo: MemoryRepo) -> None:
    """The old commits out of this clone too: reflogs expired, the objects only they
    kept pruned, and git's copy of the last commit message (which may hold the secret)
    removed. Each step again if a kill stopped it (the journal is still there)."""
    repo.git.run("reflog", "expire", "--expire=now", "--all")
    (repo.git_dir / "COMMIT_EDITMSG").unlink(missing_ok=True)
    repo.git.run("gc", "--prune=now", "--quiet")


def _write_record(repo: MemoryRepo, data: dict[str, Any]) -> None:
    """The record (kinds, places, old -> new commits; never a secret) and a note on main."""
    ref = str(data["record"])
    keep = {k: data[k] for k in ("findings", "main_before", "main_after", "map")}
    blob = repo.store.write("blob", json.dumps(keep, indent=2, sort_keys=True).encode() + b"\n")
    tree = repo.store.write_tree([TreeEntry(b"100644", b"redaction.json", blob)])
    commit = repo.write_commit(tree, [], f"gitmem redact: {ref.rsplit('/', 1)[-1]}\n")
    repo.git.run("update-ref", ref, commit)
    after = data.get("main_after")
    if after and repo.store.resolve(str(after)):
        kinds = ", ".join(sorted({str(f["kind"]) for f in data["findings"]}))
        repo.git.run(
            *("notes", f"--ref={NOTES}", "add", "-f", "-m"),
            f"gitmem redact ({ref}): {len(data['findings'])} finding(s) replaced by "
            f"[REDACTED:<kind>]: {kinds}",
            str(after),
        )


def finish_redact(repo: MemoryRepo) -> list[str]:
    """Roll back a redact interrupted while preparing, roll forward one interrupted
    after; what was done, one line each ([] when no redact was interrupted). Waits for
    a redact still running."""
    with repo.lock("redact"):
        return finish_locked(repo)


def finish_locked(repo: MemoryRepo) -> list[str]:
    """``finish`` with the redact lock held."""
    data = load(repo)
    if data is None:
        return []
    if data.get("phase") != "apply":
        clear(repo)
        return ["rolled back an interrupted redact: nothing had been rewritten"]
    head = repo.head_branch()
    with worktree_guard(repo, head or MAIN) as live:
        try:
            notes = apply(repo, data, head if live else None)
        except DirtyCard as exc:
            raise Conflict(
                f"an interrupted redact cannot finish: {exc}; then run `gitmem recover`"
            ) from None
    return ["finished an interrupted redact", *notes]
