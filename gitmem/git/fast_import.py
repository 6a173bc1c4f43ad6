"""A chain of unsigned commits written by one ``git fast-import`` (each adds or replaces
one file on the one before), for writes of many commits at once (``gitmem import``).

One process writes every blob, tree and commit into one pack: no process, and no loose
object, per commit. The commits are written on a branch name that is reset before the
stream ends, so git moves no ref; the caller moves one (``ops.land``). fast-import in
git 2.39 writes no signature: a signed clone writes its commits one by one instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gitmem.git.runner import Git, Sha


@dataclass(frozen=True)
class FileCommit:
    """One commit of the chain: ``path`` set to ``data`` (a regular file)."""

    path: str
    data: bytes
    author: str  # "Name <email> <epoch> <+zone>", as a commit object has it
    committer: str
    message: str


def _data(blob: bytes) -> bytes:
    return b"data %d\n%s\n" % (len(blob), blob)


def _commit(mark: int, ref: str, c: FileCommit, parent: Sha | None) -> bytes:
    if not c.path or c.path.startswith('"') or any(ch in c.path for ch in "\n\0"):
        raise ValueError(f"not a plain path for fast-import: {c.path!r}")
    message = c.message if c.message.endswith("\n") else c.message + "\n"
    head = f"commit {ref}\nmark :{mark}\nauthor {c.author}\ncommitter {c.committer}\n"
    out = [head.encode(), _data(message.encode("utf-8"))]
    if parent is not None:
        out.append(f"from {parent}\n".encode())
    out += [f"M 100644 inline {c.path}\n".encode(), _data(c.data)]
    return b"".join(out)


def write_chain(git: Git, ref: str, parent: Sha, commits: Sequence[FileCommit]) -> list[Sha]:
    """Write ``commits`` one on the other, the first on ``parent``; their ids in order.
    ``ref`` is only a name for the stream: it is neither read nor written."""
    stream = [f"reset {ref}\nfrom {parent}\n\n".encode()]
    stream += [_commit(i, ref, c, None) for i, c in enumerate(commits, 1)]
    stream += [f"get-mark :{i}\n".encode() for i in range(1, len(commits) + 1)]
    stream.append(f"reset {ref}\n\ndone\n".encode())
    out = git.run("fast-import", "--quiet", "--done", input=b"".join(stream))
    shas = [Sha(s) for s in out.stdout.decode().split()]
    if len(shas) != len(commits):  # pragma: no cover - git answers every get-mark
        raise RuntimeError(f"fast-import gave {len(shas)} ids for {len(commits)} commits")
    return shas
