"""Three-way merges of memory for sync and landings: cards section by section, logs by union.

Two machines (or two sessions) that edited different cards, or different sections
of one card, merge without a word; sections added on both sides all stay, ours
first. The same section edited differently on both sides is a conflict named by
card and section: the merge then yields the card with both versions of that
section between ``<<<<<<<`` / ``=======`` / ``>>>>>>>`` lines for the person to
settle, and no tree. Nothing here touches refs or the working tree.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from gitmem.errors import Conflict
from gitmem.git.objects import BLOB_MODE, EXEC_MODE, GITLINK_MODE, LINK_MODE, TreeEntry
from gitmem.git.runner import Sha
from gitmem.memory.cards import card_of, sections
from gitmem.memory.repo import MemoryRepo, where_memory_lives
from gitmem.ops.hunks import split_lines
from gitmem.ops.transplant import (
    apply_changes,
    changed_paths,
    merge_changed,
    merge_contents,
    merge_text,
)

TOP = "(top)"  # the part of a card before its first section: the title
MARKERS = ("<<<<<<< ", "=======", ">>>>>>> ")
LANDING = ("main", "session")  # the sides of a landing, as a conflict names them


@dataclass(frozen=True)
class FileConflict:
    path: str
    card: str | None  # the project, for a card
    sections: tuple[str, ...]  # section ids edited on both sides (empty: not a card, or removed)

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def label(self) -> str:
        if self.card and self.sections:
            return f"{self.card} § {', '.join(self.sections)}"
        if self.card:
            return f"{self.card} (removed on one side, edited on the other)"
        return self.path


@dataclass
class Merged:
    tree: Sha | None  # None when there are conflicts
    touched: list[str] = field(default_factory=list)  # paths that differ from ours
    conflicts: list[FileConflict] = field(default_factory=list)
    marked: dict[str, bytes] = field(default_factory=dict)  # conflicted path -> both versions


def has_markers(data: bytes | None) -> bool:
    if not data:
        return False
    lines = data.decode("utf-8", "replace").split("\n")
    return any(ln.startswith(MARKERS[0]) for ln in lines) and any(
        ln.startswith(MARKERS[2]) for ln in lines
    )


def _blocks(text: str) -> dict[str, str]:
    """A card as ordered blocks: the top part, then each section by id."""
    lines = split_lines(text)
    found = sections(text)
    out = {TOP: "".join(lines[: found[0].start] if found else lines)}
    for s in found:
        out[s.id] = "".join(lines[s.start : s.end])
    return out


def _order(base: dict[str, str], ours: dict[str, str], theirs: dict[str, str]) -> list[str]:
    """Our order of blocks; a block only they have goes after its predecessor in their
    card, past the blocks only we added there: ours first, then theirs in their order."""
    keys = list(ours)
    prev = TOP
    for key in theirs:
        if key not in keys:
            at = keys.index(prev) + 1 if prev in keys else len(keys)
            while at < len(keys) and keys[at] not in base and keys[at] not in theirs:
                at += 1
            keys.insert(at, key)
        prev = key
    return keys


def _nl(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def _tail(block: str | None) -> str | None:
    return None if block is None else block[len(block.rstrip("\n")) :]


def _pick(mine: str | None, yours: str | None, was: str | None) -> tuple[str | None, bool]:
    """One block's merge: (text, conflict). Blank lines at a block's end are compared apart:
    appending a section after a block adds one there, which is not an edit of that block."""
    cm, cy, cw = (None if x is None else x.rstrip("\n") for x in (mine, yours, was))
    if cm == cy or cy == cw:
        core = cm
    elif cm == cw:
        core = cy
    else:
        return None, True
    if core is None:
        return None, False
    tm, ty, tw = _tail(mine), _tail(yours), _tail(was)
    tail = tm if tm is not None and (tm != tw or ty is None) else ty
    return core + (tail or ""), False


def merge_card(base: str, ours: str, theirs: str, labels: tuple[str, str]) -> tuple[str, list[str]]:
    """The merged card and the sections edited differently on both sides (marked in the text)."""
    b, o, t = _blocks(base), _blocks(ours), _blocks(theirs)
    out: list[str] = []
    clashes: list[str] = []
    for key in _order(b, o, t):
        mine, yours = o.get(key), t.get(key)
        pick, clash = _pick(mine, yours, b.get(key))
        if clash:
            clashes.append(key)
            pick = (
                f"{MARKERS[0]}{labels[0]}\n{_nl(mine or '')}{MARKERS[1]}\n"
                f"{_nl(yours or '')}{MARKERS[2]}{labels[1]}\n"
            )
        if pick:
            if out and not out[-1].endswith("\n"):  # a last section without a final newline
                out[-1] += "\n"
            out.append(pick)
    return "".join(out), clashes


def _merge_marked(repo: MemoryRepo, o: bytes, b: bytes, t: bytes, labels: tuple[str, str]) -> bytes:
    return merge_contents(repo, o, b, t, "-L", labels[0], "-L", "base", "-L", labels[1])[1]


def merge_file(
    repo: MemoryRepo,
    path: str,
    base: bytes | None,
    ours: bytes | None,
    theirs: bytes | None,
    labels: tuple[str, str],
) -> tuple[bytes | None, FileConflict | None]:
    """One file changed on both sides: (merged content, None) or (both versions, the conflict)."""
    card = card_of(path)
    if ours is None or theirs is None:  # removed on one side, changed on the other
        kept = ours if ours is not None else theirs
        return kept, FileConflict(path, card, ())
    if card is not None:
        text, clashes = merge_card(
            (base or b"").decode("utf-8", "surrogateescape"),
            ours.decode("utf-8", "surrogateescape"),
            theirs.decode("utf-8", "surrogateescape"),
            labels,
        )
        merged = text.encode("utf-8", "surrogateescape")
        return merged, (FileConflict(path, card, tuple(clashes)) if clashes else None)
    try:
        return merge_text(repo, ours, base or b"", theirs, path), None  # union for logs
    except Conflict:
        return _merge_marked(repo, ours, base or b"", theirs, labels), FileConflict(path, None, ())


def land_tree(
    repo: MemoryRepo, tip: Sha, pairs: list[tuple[Sha | None, Sha | None]]
) -> tuple[Sha, list[str]]:
    """``transplant`` for a landing: a card ``tip`` changed too merges section by section,
    so sections added on both sides all stay; Conflict names a section changed on both."""
    return apply_changes(repo, tip, pairs, lambda *f: _settle(repo, *f))


def _settle(
    repo: MemoryRepo, path: str, base: bytes | None, ours: bytes | None, theirs: bytes | None
) -> bytes:
    if ours is None or theirs is None or card_of(path) is None:
        return merge_changed(repo, path, base, ours, theirs)
    merged, conflict = merge_file(repo, path, base, ours, theirs, LANDING)
    if conflict is not None or merged is None:
        where = conflict.label() if conflict else path
        raise Conflict(f"{where} was changed on both sides; the change does not apply cleanly")
    return merged


def _blob_ids(
    repo: MemoryRepo, path: str, base: Sha, ours: Sha, theirs: Sha
) -> tuple[Sha | None, Sha | None, Sha | None] | None:
    """The (base, ours, theirs) blob ids of the file ``path`` (None where it is missing),
    read from the trees alone; None when one side holds something else there (a folder, a
    symlink, a submodule), which the reading of contents then handles."""
    ids: list[Sha | None] = []
    for rev in (base, ours, theirs):
        entry = repo.store.entry(rev, path)
        if entry is not None and entry.mode not in (BLOB_MODE, EXEC_MODE):
            return None
        ids.append(entry.sha if entry is not None else None)
    return ids[0], ids[1], ids[2]


def _links(
    repo: MemoryRepo, path: str, base: Sha, ours: Sha, theirs: Sha
) -> tuple[TreeEntry | None, TreeEntry | None, TreeEntry | None] | None:
    """The (base, ours, theirs) entries of ``path`` when it is not where memory lives and
    one of them is a symlink or a submodule: merged as entries, never read as text."""
    if where_memory_lives(path):
        return None
    got = (
        repo.store.entry(base, path),
        repo.store.entry(ours, path),
        repo.store.entry(theirs, path),
    )
    if any(e is not None and e.mode in (LINK_MODE, GITLINK_MODE) for e in got):
        return got
    return None


@dataclass
class _Changes:
    """What a merge takes into our tree, path by path."""

    updates: dict[str, bytes | None] = field(default_factory=dict)  # new contents
    theirs_blob: dict[str, Sha] = field(default_factory=dict)  # updates stored already
    as_is: dict[str, TreeEntry | None] = field(default_factory=dict)  # their links outside memory
    taken: dict[str, Sha | None] = field(default_factory=dict)  # their blob: only they changed it


def _merge_links(repo: MemoryRepo, path: str, revs: tuple[Sha, Sha, Sha], into: _Changes) -> bool:
    """A symlink or submodule outside memory merged as an entry; whether ``path`` is one."""
    kept = _links(repo, path, *revs)
    if kept is None:
        return False
    b_e, o_e, t_e = kept
    if o_e == b_e and t_e != b_e:
        into.as_is[path] = t_e
    elif t_e not in (b_e, o_e):
        raise Conflict(
            f"{path} was changed here and on the other side, and is a symlink or a "
            "submodule, which gitmem does not merge: settle it with git (`git merge`)"
        )
    return True


def _merge_path(
    repo: MemoryRepo,
    path: str,
    revs: tuple[Sha, Sha, Sha],
    labels: tuple[str, str],
    resolved: dict[str, bytes | None],
    into: _Changes,
    result: Merged,
) -> None:
    base, ours, theirs = revs
    ids = None if path in resolved else _blob_ids(repo, path, base, ours, theirs)
    if ids is not None:  # a file on each side (or none): its ids say who changed it
        b_id, o_id, t_id = ids
        if o_id == t_id or t_id == b_id:
            return
        if o_id == b_id:
            into.taken[path] = t_id
            return
    if _merge_links(repo, path, revs, into):
        return
    o = repo.store.read_blob(f"{ours}:{path}")
    got = repo.store.read(f"{theirs}:{path}")
    t = got.data if got is not None and got.kind == "blob" else None
    if path in resolved:
        if resolved[path] != o:
            into.updates[path] = resolved[path]
        return
    b = repo.store.read_blob(f"{base}:{path}")
    if o == t or t == b:
        return
    if o == b:
        into.updates[path] = t
        if got is not None and t is not None:
            into.theirs_blob[path] = got.sha
        return
    merged, conflict = merge_file(repo, path, b, o, t, labels)
    if conflict is not None:
        result.conflicts.append(conflict)
        result.marked[path] = merged or b""
    elif merged != o:
        into.updates[path] = merged


def merge_trees(
    repo: MemoryRepo,
    base: Sha,
    ours: Sha,
    theirs: Sha,
    labels: tuple[str, str],
    resolved: dict[str, bytes | None] | None = None,
    changed: list[str] | None = None,
) -> Merged:
    """Our tree with their changes since ``base``; ``resolved`` settles conflicted paths.

    ``changed`` is ``changed_paths(repo, base, theirs)`` when the caller has it already.
    """
    root = repo.store.read(f"{ours}^{{tree}}")
    tree = root.sha if root else None
    result = Merged(None)
    into = _Changes()
    for path in changed if changed is not None else changed_paths(repo, base, theirs):
        _merge_path(repo, path, (base, ours, theirs), labels, resolved or {}, into, result)
    result.touched = sorted([*into.updates, *into.as_is, *into.taken])
    if result.conflicts:
        return result
    blobs: dict[str, Sha | TreeEntry | None] = {**into.as_is, **into.taken}
    for path, data in sorted(into.updates.items()):
        blobs[path] = into.theirs_blob.get(path) or (
            repo.store.write("blob", data) if data is not None else None
        )
    tree = repo.store.update_paths(tree, blobs) if blobs else tree
    result.tree = tree or repo.store.write_tree([])
    return result
