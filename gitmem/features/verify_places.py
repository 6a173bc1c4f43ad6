"""A finding of ``gitmem verify`` and where the change it names lies: the card § sections it changed,
a card's path with what it became when that is no longer a file, any other path."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from gitmem.errors import UnsafePath
from gitmem.memory import cards
from gitmem.memory.repo import MemoryRepo
from gitmem.ops.incoming import raw_entries


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


def of_commit(repo: MemoryRepo, sha: str) -> str:
    """What a commit changed against its first parent: the card § sections, the card's
    path with what it became when that is a link, and any other file by its path."""
    parent = f"{sha}^" if repo.git.out("rev-list", "--parents", "-n1", sha).split()[1:] else None
    args = [parent] if parent else ["--root"]
    raw = repo.git.out(
        "diff-tree", "-r", "--raw", "-z", "--no-renames", "--no-abbrev", "--no-commit-id",
        *args, sha,
    )  # fmt: skip
    places: list[str] = []
    for _, mode, status, path in raw_entries(raw):
        card = cards.card_of(path)
        if mode in _NOT_FILES:
            places.append(f"{path} ({_NOT_FILES[mode]}, which gitmem refuses to read)")
        elif card is None:
            places.append(path)
        else:
            new = None if status == "D" else _blob(repo, f"{sha}:{path}")
            old = _blob(repo, f"{parent}:{path}") if parent else None
            places += sections(card, old, new, mode)
    shown = places[:WHERE_SHOWN]
    more = f", and {len(places) - WHERE_SHOWN} more" if len(places) > WHERE_SHOWN else ""
    return ", ".join(shown) + more


WHERE_SHOWN = 8  # places a finding names; the rest counted
_NOT_FILES = {"120000": "a symlink", "160000": "a submodule"}


def _blob(repo: MemoryRepo, rev: str) -> bytes | None:
    try:
        return repo.store.read_blob(rev)
    except UnsafePath:  # a link on the way to it: named by its own entry
        return None


def sections(card: str, old: bytes | None, new: bytes | None, mode: str = "100644") -> list[str]:
    """``card § id`` for each section that differs between two versions of a card; the
    card alone when only the order of its sections, the text outside them or its mode
    (``mode``, the new one) changed."""
    a = cards.section_texts(old.decode("utf-8", "replace")) if old else {}
    b = cards.section_texts(new.decode("utf-8", "replace")) if new else {}
    changed = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
    if not changed and list(a) != list(b):
        return [f"{card} (order of sections)"]
    if not changed:
        return [card if mode in ("100644", "000000") else f"{card} (mode {mode})"]
    return [f"{card} § {k}" for k in changed]
