"""What a session may touch, and what accepting one checks first.

A session edits memory only. Its commits, made here or fetched from a remote, may change:

- an edit (a commit without ``Gitmem-Layer``): files under ``cards/``, the tree the memory
  tool writes (``/memories``), as plain files, no name starting with a dot but the
  ``.gitkeep`` that holds an empty folder;
- its transcript (``Gitmem-Layer: chat``): ``sessions/<its id>.jsonl``;
- its synthesis (``Gitmem-Layer: synthesis``): ``synthesis.md``.

Nothing else: not ``gitmem.toml``, ``persona.md``, ``.gitattributes``, ``.gitignore`` or
``logs/`` (gitmem appends a session's usage to main itself), no symlink, submodule or
executable file, no merge. Accepting a session that keeps to this still runs every check
``gitmem sync`` runs on what main receives (``ops/incoming.refuse``: names, symlinks,
attributes, settings, card sizes), with the same one-line refusals.
"""

from __future__ import annotations

from gitmem.errors import ConfigError, UnsafePath
from gitmem.memory import trailers as T
from gitmem.memory.cards import KEEP
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops import incoming
from gitmem.review.changes import PLAIN, Change
from gitmem.review.pending import SessionView


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


def problem(view: SessionView) -> str | None:
    """Why the session touches what a session may not (one line), or None."""
    sid = view.ref.id
    layers = {c.sha: c.commit.get(T.LAYER) for c in view.commits}
    for c in view.commits:
        if len(c.commit.parents) > 1:
            return f"session {sid} holds a merge (commit {c.sha[:7]}), which no session makes"
    for change in view.changes:
        why = _outside(change, layers.get(change.commit), sid)
        if why is not None:
            return (
                f"session {sid} changes {change.path} (commit {change.commit[:7]}), "
                f"which a session may not touch: {why}"
            )
    return None


def check(repo: MemoryRepo, view: SessionView) -> None:
    """Refuse (``UnsafePath``, ``ConfigError``) to accept a session that touches what a
    session may not, or that brings what ``gitmem sync`` refuses to receive."""
    hint = f"reject it with `gitmem review {view.ref.id} --reject`"
    why = problem(view)
    if why is not None:
        raise UnsafePath(f"{why}; nothing was changed here", hint=hint)
    main = repo.tip(MAIN)
    try:
        incoming.refuse(
            repo, view.ref.remote or "", main, view.ref.tip, name=f"session {view.ref.id}"
        )
    except (UnsafePath, ConfigError) as err:
        raise type(err)(str(err), hint=hint) from None
