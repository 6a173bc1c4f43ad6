"""Reading history: every ``git log`` of gitmem's trailers runs here; git finds each
trailer block and ``trailers.gitmem_trailers`` reads it. ``read_log`` gives a list of
commits (the audit trail, review, revert); ``iter_log`` gives them one at a time while
git still writes, each with the blobs it changed (``--raw``), for the replay of all
history (``index/replay.py``): the index's stale marks and recency come from that pass."""

from __future__ import annotations

from collections.abc import Generator, Iterator
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
    # path -> the blob it has after the commit (the zero id: removed); ``iter_log`` only,
    # and empty for a merge (git shows no diff of one without -m)
    changed: dict[str, str] = field(default_factory=dict, hash=False, compare=False)

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


def _commit(record: str, changed: dict[str, str] | None = None) -> Commit:
    sha, parents, date, author, subject, block = (record.split("\x1f", 5) + [""] * 6)[:6]
    trailers, reverts = gitmem_trailers(block)
    return Commit(
        Sha(sha),
        tuple(Sha(p) for p in parents.split()),
        date,
        author,
        subject,
        trailers,
        reverts,
        changed if changed is not None else {},
    )


def _parsed(raw: str) -> Iterator[Commit]:
    for record in raw.split("\0"):
        record = record.lstrip("\n")
        if record:
            yield _commit(record)


def _parsed_raw(pieces: Iterator[bytes]) -> Iterator[Commit]:
    """Commits of ``log -z --raw --no-renames``: each record, then for each path it
    changed ``:MODE MODE OLD NEW STATUS`` and the path, every one NUL-ended (a record
    starts with its sha, never with ``:``)."""
    head: str | None = None
    changed: dict[str, str] = {}
    blob: str | None = None  # of the raw line whose path comes next
    for piece in pieces:
        # a piece ends on a NUL, never inside a UTF-8 sequence
        for item in piece.decode("utf-8", "replace").split("\0"):
            if blob is not None:
                changed[item], blob = blob, None
                continue
            item = item.lstrip("\n")
            if item.startswith(":"):
                blob = item.split(" ", 4)[3]
            elif item:
                if head is not None:
                    yield _commit(head, changed)
                head, changed = item, {}
    if head is not None:
        yield _commit(head, changed)


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


def iter_log(
    git: Git, rev: str, *, reverse: bool = False, paths: list[str] | None = None
) -> Generator[Commit]:
    """``read_log(git, rev, reverse=reverse, paths=paths)`` one commit at a time, read
    while git writes (a replay of 100k commits never holds all of them); without
    ``paths`` each with ``changed`` filled. Git is stopped when the reader stops early
    (closing the iterator), so a reader that found what it wanted walks no further."""
    raw = [] if paths else ["--raw", "--no-renames", "--no-abbrev"]
    with git.stream(*_args(rev, reverse, paths, None, False, raw)) as out:
        if paths:  # git flushes each commit into a pipe: a piece is a few records
            for piece in out.pieces(_PIECE):
                yield from _parsed(piece.decode("utf-8", "replace"))
        else:
            yield from _parsed_raw(out.pieces(_PIECE))
