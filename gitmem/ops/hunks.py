"""The hunks of a commit's diff, and applying a chosen subset of them to a file's text.

Review shows a session one hunk at a time and accepts some of them; the accepted
hunks of one commit are applied to the file as it is wherever they land (the
session base with earlier choices, then main), found by their context as
``patch`` finds them: where a left-out hunk changed the lines next to one, with up
to MAX_FUZZ of its outer context lines dropped at each end (its removed lines must
still be there exactly). Diffs come from one ``git log -p`` and are parsed with
unidiff.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gitmem.errors import Conflict
from gitmem.git.runner import Sha
from gitmem.memory.repo import MemoryRepo

if TYPE_CHECKING:
    from unidiff.patch import Hunk as RawHunk

# What gitmem parses must not depend on a person's diff settings.
_DIFF_ARGS = (
    "-p",
    "--no-color",
    "--no-ext-diff",
    "--no-renames",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--diff-algorithm=myers",
    "-U3",
)


@dataclass(frozen=True)
class Hunk:
    path: str
    header: str  # "@@ -3,7 +3,7 @@ ## Budget"
    source_start: int
    source_length: int
    lines: tuple[str, ...]  # " ctx", "-old", "+new", "\\ No newline at end of file"
    old: tuple[str, ...]  # the lines it replaces, with their line endings
    new: tuple[str, ...]  # the lines it puts there
    target_start: int  # where its new lines start in the new file

    @property
    def added(self) -> int:
        return sum(1 for ln in self.lines if ln.startswith("+"))

    @property
    def removed(self) -> int:
        return sum(1 for ln in self.lines if ln.startswith("-"))


@dataclass(frozen=True)
class FileDiff:
    path: str
    added: bool  # the commit created the file
    removed: bool  # the commit deleted the file
    hunks: tuple[Hunk, ...]


MAX_FUZZ = 2


class HunkDoesNotApply(Conflict):
    """The text a hunk changes is not where (or not what) the hunk expects."""


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on "\\n" only (as git does)."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _hunk(path: str, raw: RawHunk) -> Hunk:
    lines: list[str] = []
    old: list[str] = []
    new: list[str] = []
    for line in raw:
        kind, value = line.line_type, line.value
        if kind == "\\":  # the line before has no newline at the end of the file
            lines.append("\\" + value.rstrip("\n"))
            last = lines[-2][0] if len(lines) > 1 else " "
            for side in (old,) if last == "-" else (new,) if last == "+" else (old, new):
                if side:
                    side[-1] = side[-1].removesuffix("\n")
            continue
        lines.append(kind + value.removesuffix("\n"))
        if kind in (" ", "-"):
            old.append(value)
        if kind in (" ", "+"):
            new.append(value)
    header = (
        f"@@ -{raw.source_start},{raw.source_length} +{raw.target_start},{raw.target_length} @@"
    )
    if raw.section_header:
        header += f" {raw.section_header}"
    return Hunk(
        path,
        header,
        raw.source_start,
        raw.source_length,
        tuple(lines),
        tuple(old),
        tuple(new),
        raw.target_start,
    )


def parse(diff: str) -> list[FileDiff]:
    """The files and hunks of one commit's ``git diff`` output."""
    from unidiff.patch import PatchSet  # here: a merge needs only ``split_lines``

    out = []
    for f in PatchSet(split_lines(diff)):
        path = f.target_file[2:] if f.target_file.startswith("b/") else f.source_file[2:]
        out.append(
            FileDiff(path, f.is_added_file, f.is_removed_file, tuple(_hunk(path, h) for h in f))
        )
    return out


def commit_diffs(repo: MemoryRepo, base: str, tip: str) -> dict[Sha, list[FileDiff]]:
    """Each first-parent commit in ``base..tip`` -> its diff, from one ``git log -p``."""
    raw = repo.git.run(
        "log", "--first-parent", "--format=%x00%H", *_DIFF_ARGS, f"{base}..{tip}"
    ).stdout.decode("utf-8", "surrogateescape")
    out: dict[Sha, list[FileDiff]] = {}
    for record in raw.split("\0")[1:]:
        sha, _, diff = record.partition("\n")
        out[Sha(sha.strip())] = parse(diff.lstrip("\n"))
    return out


def _find(lines: list[str], old: Sequence[str], want: int, low: int) -> int | None:
    """Where ``old`` occurs in ``lines`` at or after ``low``, nearest to ``want``."""
    high = len(lines) - len(old)
    if high < low:
        return None
    want = min(max(want, low), high)
    n = len(old)
    for dist in range(0, max(want - low, high - want) + 1):
        for at in (want - dist, want + dist) if dist else (want,):
            if low <= at <= high and lines[at : at + n] == list(old):
                return at
    return None


def _context(lines: Sequence[str]) -> tuple[int, int]:
    """How many context lines open and close a hunk."""
    body = [ln for ln in lines if not ln.startswith("\\")]
    lead = next((i for i, ln in enumerate(body) if not ln.startswith(" ")), len(body))
    trail = next((i for i, ln in enumerate(reversed(body)) if not ln.startswith(" ")), len(body))
    return lead, trail


def _place(lines: list[str], h: Hunk, expected: int, low: int) -> tuple[int, int, int] | None:
    """(where, leading context dropped, trailing context dropped), or None.

    Like ``patch``, a hunk whose context changed (an earlier hunk next to it was
    left out) may match with up to MAX_FUZZ context lines dropped at each end;
    the lines it removes must still be exactly there.
    """
    lead, trail = _context(h.lines)
    # As `git apply`: a hunk with no trailing context was made at the end of the file and
    # one starting at line 1 at its beginning. Where its lines repeat ("a", "a", "a"), the
    # anchor is what places it; only when the anchored place no longer holds them is the
    # nearest match taken.
    at_end = trail == 0 and lead > 0
    at_start = h.source_start <= 1
    for fuzz in range(MAX_FUZZ + 1):
        a, b = min(fuzz, lead), min(fuzz, trail)
        old = h.old[a : len(h.old) - b]
        if fuzz and (not old or (a, b) == (min(fuzz - 1, lead), min(fuzz - 1, trail))):
            continue
        if not fuzz:
            for anchored, wanted in ((at_start, 0), (at_end, len(lines) - len(old))):
                if anchored and low <= wanted and lines[wanted : wanted + len(old)] == list(old):
                    return wanted, a, b
        at = _find(lines, old, expected + a, low)
        if at is not None:
            return at, a, b
    return None


def apply(text: str | None, hunks: Sequence[Hunk]) -> str:
    """``text`` with ``hunks`` (of one file, any subset of one diff) applied in order."""
    lines = split_lines(text or "")
    out: list[str] = []
    pos, offset = 0, 0
    for h in sorted(hunks, key=lambda h: h.source_start):
        expected = h.source_start - 1 if h.source_length else h.source_start
        found = _place(lines, h, expected + offset, pos)
        if found is None:
            raise HunkDoesNotApply(f"{h.path}: the text of hunk {h.header} is not there any more")
        at, a, b = found
        out += lines[pos:at]
        out += h.new[a : len(h.new) - b]
        pos = at + len(h.old) - a - b
        offset = at - a - expected
    out += lines[pos:]
    return "".join(out)
