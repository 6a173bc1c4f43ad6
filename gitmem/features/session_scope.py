"""What a session may touch: the files its commits change, the rule they must keep, and
the check run before its commits reach main (accepted in review, or landed at once by
``review = "auto"``).

A session edits memory only. Its commits, made here or fetched from a remote, may change:

- an edit (a commit without ``Gitmem-Layer``): files under ``cards/``, the tree the memory
  tool writes (``/memories``), as plain files, no name starting with a dot but the
  ``.gitkeep`` that holds an empty folder;
- its transcript (``Gitmem-Layer: chat``): ``sessions/<its id>.jsonl``;
- its synthesis (``Gitmem-Layer: synthesis``): ``synthesis.md``.

Nothing else: not ``gitmem.toml``, ``persona.md``, ``.gitattributes``, ``.gitignore`` or
``logs/`` (gitmem appends a session's usage to main itself), no symlink, submodule or
executable file, no merge. A session that keeps to this still passes every check
``gitmem sync`` runs on what main receives (``ops/incoming.refuse``: names, symlinks,
attributes, settings, card sizes), with the same one-line refusals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gitmem.errors import ConfigError, UnsafePath
from gitmem.git.runner import Sha
from gitmem.memory import trailers as T
from gitmem.memory.cards import KEEP
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops import incoming
from gitmem.ops.history import Commit

PLAIN = "100644"
_KINDS = {
    PLAIN: "a file",
    "100755": "an executable file",
    "120000": "a symlink",
    "160000": "a submodule",
    "040000": "a folder",
}


@dataclass(frozen=True)
class Change:
    """One file one commit changes: git's status letter (A, M, D, T) and new mode."""

    commit: Sha
    path: str
    status: str
    mode: str  # "000000" when removed

    @property
    def kind(self) -> str:
        return _KINDS.get(self.mode, f"a file of mode {self.mode}")

    def to_json(self) -> dict[str, str]:
        return {"commit": self.commit, "path": self.path, "status": self.status, "kind": self.kind}


def changes(repo: MemoryRepo, base: str, tip: str) -> tuple[Change, ...]:
    """Each file each first-parent commit of ``base..tip`` changes, oldest first (a merge
    is compared with its first parent)."""
    found = incoming.raw_log(repo, "--reverse", "--first-parent", f"{base}..{tip}")
    return tuple(Change(Sha(c), p, st, m) for c, m, st, p in found)


def _outside(change: Change, layer: str | None, sid: str) -> str | None:
    """Why a session's commit of ``layer`` may not make ``change``, or None."""
    if change.status != "D" and change.mode != PLAIN:
        return f"it is {change.kind}, and a session writes only plain files"
    if layer is None:
        parts = change.path.split("/")
        dotted = [p for p in parts[1:] if p.startswith(".") and p != KEEP]
        if parts[0] != "cards" or len(parts) < 2 or dotted:
            return "a session's edits change only the cards (cards/)"
        return None
    allowed = {"chat": f"sessions/{sid}.jsonl", "synthesis": "synthesis.md"}.get(layer)
    if allowed is None:
        return f"no session writes a {layer!r} commit"
    return None if change.path == allowed else f"its {layer} commit writes only {allowed}"


def problem(sid: str, commits: Sequence[Commit], found: Sequence[Change]) -> str | None:
    """Why session ``sid``'s ``commits``, changing ``found``, touch what a session may not
    (one line), or None."""
    layers = {c.sha: c.get(T.LAYER) for c in commits}
    for c in commits:
        if len(c.parents) > 1:
            return f"session {sid} holds a merge (commit {c.sha[:7]}), which no session makes"
    for change in found:
        why = _outside(change, layers.get(change.commit), sid)
        if why is not None:
            return (
                f"session {sid} changes {change.path} (commit {change.commit[:7]}), "
                f"which a session may not touch: {why}"
            )
    return None


def check(
    repo: MemoryRepo,
    sid: str,
    tip: Sha,
    commits: Sequence[Commit],
    found: Sequence[Change],
    remote: str | None = None,
) -> None:
    """Refuse (``UnsafePath``, ``ConfigError``) session ``sid`` at ``tip`` before its
    commits reach main, when it touches what a session may not or brings what ``gitmem
    sync`` refuses to receive (``remote``: where it came from, when not made here)."""
    hint = f"reject it with `gitmem review {sid} --reject`"
    why = problem(sid, commits, found)
    if why is not None:
        raise UnsafePath(f"{why}; nothing was changed here", hint=hint)
    try:
        incoming.refuse(repo, remote or "", repo.tip(MAIN), tip, name=f"session {sid}")
    except (UnsafePath, ConfigError) as err:
        raise type(err)(str(err), hint=hint) from None
