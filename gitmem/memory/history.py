"""Reading history: every ``git log`` of gitmem's trailers runs here, one process each;
git finds each trailer block. ``read_log`` gives commits as values (the audit trail,
review, revert); ``stream_log`` gives the raw records while git still writes them, for
the replay that folds all of history (``index/replay.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gitmem.git.runner import Git, Sha, Stream
from gitmem.memory.trailers import DEFAULT_BLOCKS, gitmem_trailers

# NUL ends a record (-z); 0x1f separates fields; the trailer block comes last, as written.
_FORMAT = "%H%x1f%P%x1f%aI%x1f%an%x1f%s%x1f%(trailers)"
# For the replay: sha, parents and the trailer block as written. The cheapest of git's
# trailer formats: asking git for some keys only, unfolded (``%(trailers:key=...,unfold)``),
# costs git a quarter more time than gitmem spends reading the whole block, while git's
# walk is what a full replay waits for.
TRAILERS = "%H%x1f%P%x1f%(trailers)"


def stream_log(git: Git, rev: str, form: str) -> Stream:
    """``rev``'s history newest first in topological order, one ``form`` record each,
    read while git writes it (``Stream.pieces``)."""
    return git.stream(*DEFAULT_BLOCKS, "log", "-z", "--topo-order", f"--format={form}", rev)


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
    raw = git.run(*args).stdout.decode("utf-8", "replace")
    out: list[Commit] = []
    for record in raw.split("\0"):
        record = record.lstrip("\n")
        if not record:
            continue
        sha, parents, date, author, subject, block = (record.split("\x1f", 5) + [""] * 6)[:6]
        trailers, reverts = gitmem_trailers(block)
        out.append(
            Commit(
                Sha(sha),
                tuple(Sha(p) for p in parents.split()),
                date,
                author,
                subject,
                trailers,
                reverts,
            )
        )
    return out
