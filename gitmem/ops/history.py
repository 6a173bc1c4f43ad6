"""Reading history: every ``git log`` of gitmem's trailers runs here; git finds each
trailer block and ``trailers.gitmem_trailers`` reads it. ``read_log`` gives a list of
commits (the audit trail, review, revert); ``iter_log`` gives them one at a time while
git still writes, for the replay of all history (``index/replay.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from gitmem.git.runner import Git, Sha
from gitmem.memory.trailers import DEFAULT_BLOCKS, gitmem_trailers

# NUL ends a record (-z); 0x1f separates fields; the trailer block comes last, as written.
_FORMAT = "%H%x1f%P%x1f%aI%x1f%an%x1f%s%x1f%(trailers)"
_PIECE = 1 << 20  # bytes of log parsed at once: a full replay holds no more of it


@dataclass(frozen=True)
class Commit:
    sha: Sha
    parents: tuple[Sha, ...]
    date: str
    author: str
    subject: str
    trailers: dict[str, str] = field(hash=False)
    # Every Gitmem-Reverts value in order: a session revert undoes several commits at once.
    reverts: tuple[str, ...] = ()

    def get(self, key: str) -> str | None:
        return self.trailers.get(key)


def _args(
    rev: str,
    reverse: bool,
    paths: list[str] | None,
    max_count: int | None,
    first_parent: bool,
    extra: list[str] | None,
) -> list[str]:
    args = [*DEFAULT_BLOCKS, "log", "-z", f"--format={_FORMAT}", *(extra or [])]
    if first_parent:
        args.append("--first-parent")
    if max_count is not None:
        args.append(f"--max-count={max_count}")
    if reverse:
        args += ["--reverse", "--topo-order"]
    args.append(rev)
    if paths:
        args += ["--", *paths]
    return args


def _parsed(raw: str) -> Iterator[Commit]:
    for record in raw.split("\0"):
        record = record.lstrip("\n")
        if not record:
            continue
        sha, parents, date, author, subject, block = (record.split("\x1f", 5) + [""] * 6)[:6]
        trailers, reverts = gitmem_trailers(block)
        yield Commit(
            Sha(sha),
            tuple(Sha(p) for p in parents.split()),
            date,
            author,
            subject,
            trailers,
            reverts,
        )


def read_log(
    git: Git,
    rev: str,
    *,
    reverse: bool = False,
    paths: list[str] | None = None,
    max_count: int | None = None,
    first_parent: bool = False,
    extra: list[str] | None = None,
) -> list[Commit]:
    args = _args(rev, reverse, paths, max_count, first_parent, extra)
    return list(_parsed(git.run(*args).stdout.decode("utf-8", "replace")))


def iter_log(git: Git, rev: str, *, reverse: bool = False) -> Iterator[Commit]:
    """``read_log(git, rev, reverse=reverse)`` one commit at a time, read while git writes
    (a replay of 100k commits never holds all of them)."""
    with git.stream(*_args(rev, reverse, None, None, False, None)) as out:
        for piece in out.pieces(_PIECE):
            # a piece ends on a NUL, never inside a UTF-8 sequence
            yield from _parsed(piece.decode("utf-8", "replace"))
