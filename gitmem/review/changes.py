"""Every file a session's commits change, and what kind of file each is: a symlink or a
submodule is not a line of text, whatever its diff shows."""

from __future__ import annotations

from dataclasses import dataclass

from gitmem.git.runner import Sha
from gitmem.memory.repo import MemoryRepo
from gitmem.ops.incoming import raw_entries

PLAIN = "100644"
_KINDS = {
    PLAIN: "a file",
    "100755": "an executable file",
    "120000": "a symlink",
    "160000": "a submodule",
    "040000": "a folder",
}
_DONE = {"A": "added", "M": "changed", "D": "removed", "T": "made"}


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

    def text(self) -> str:
        """``added, a symlink``; ``changed, a file``; ``removed``."""
        done = _DONE.get(self.status, self.status)
        return done if self.status == "D" else f"{done}, {self.kind}"

    def to_json(self) -> dict[str, str]:
        return {"commit": self.commit, "path": self.path, "status": self.status, "kind": self.kind}


def changes(repo: MemoryRepo, base: str, tip: str) -> tuple[Change, ...]:
    """Each file each first-parent commit of ``base..tip`` changes, oldest first (one
    ``git log --raw``; a merge is compared with its first parent)."""
    listing = repo.git.out(
        "log",
        "--reverse",
        "--first-parent",
        "-m",
        "--raw",
        "-z",
        "--no-renames",
        "--no-abbrev",
        "--format=%x00%H",
        f"{base}..{tip}",
    )
    return tuple(Change(Sha(c), p, st, m) for c, m, st, p in raw_entries(listing))


def by_path(found: tuple[Change, ...]) -> list[tuple[str, str, bool]]:
    """Each file once, in the order first changed: (path, what the session did to it, whether
    it stays a plain file), e.g. ("cards/notes.md", "added, a symlink", False)."""
    seen: dict[str, list[Change]] = {}
    for ch in found:
        seen.setdefault(ch.path, []).append(ch)
    out = []
    for path, chs in seen.items():
        first, last = chs[0], chs[-1]
        kind = next((c.kind for c in reversed(chs) if c.status != "D"), "a file")
        plain = all(c.status == "D" or c.mode == PLAIN for c in chs)
        if last.status == "D":
            done = "added and removed" if first.status == "A" else "removed"
        else:
            done = f"{'added' if first.status == 'A' else 'changed'}, {kind}"
        out.append((path, done, plain))
    return out
