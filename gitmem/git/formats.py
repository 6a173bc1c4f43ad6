"""git's object formats as typed records: a tree and a commit are parsed here only."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from gitmem.git.runner import Sha

TREE_MODE = b"40000"
BLOB_MODE = b"100644"
EXEC_MODE = b"100755"
LINK_MODE = b"120000"
GITLINK_MODE = b"160000"


@dataclass(frozen=True)
class TreeEntry:
    mode: bytes
    name: bytes
    sha: Sha

    @property
    def is_tree(self) -> bool:
        return self.mode == TREE_MODE


@dataclass(frozen=True, slots=True)
class GitObject:
    """One object as ``git cat-file --batch`` gives it: its id, its type and its bytes."""

    sha: Sha
    kind: str  # "blob", "tree", "commit" or "tag"
    data: bytes


@dataclass(frozen=True, slots=True)
class Commit:
    """A commit object's fields (``author``/``committer`` as ``Name <mail> 1700000000 +0000``)."""

    sha: Sha
    tree: Sha
    parents: tuple[Sha, ...]
    author: str
    committer: str
    message: str


def parse_commit(sha: Sha, data: bytes) -> Commit:
    """git's commit format: header lines (a continuation starts with a space), a blank
    line, the message."""
    head, _, message = data.decode("utf-8", "replace").partition("\n\n")
    fields: dict[str, list[str]] = {}
    for line in head.split("\n"):
        if not line.startswith(" "):  # (a continuation belongs to a signature)
            key, _, value = line.partition(" ")
            fields.setdefault(key, []).append(value)
    return Commit(
        sha,
        Sha(fields.get("tree", [""])[0]),
        tuple(Sha(p) for p in fields.get("parent", [])),
        fields.get("author", [""])[0],
        fields.get("committer", [""])[0],
        message,
    )


def signed_parts(data: bytes, header: bytes) -> tuple[bytes, bytes] | None:
    """A signed commit object split as git splits it to check it: (the payload, the
    signature), or None when it is not signed. ``header`` names the signature of the
    repository's object format (``gpgsig``; ``gpgsig-sha256`` in a sha256 repository);
    it and any other ``gpgsig*`` header are left out of the payload, the message kept
    whole (git's ``parse_buffer_signed_by_header``, step for step)."""
    payload, signature = [], []
    in_signature = other = False
    at = 0
    while at < len(data):
        nl = data.find(b"\n", at)
        end = len(data) if nl < 0 else nl + 1
        line, sig = data[at:end], None
        if in_signature and line.startswith(b" "):
            sig = line[1:]
        elif line.startswith(header + b" "):
            sig, other = line[len(header) + 1 :], False
        elif line.startswith(b"gpgsig"):
            other = True
        elif other and not line.startswith(b" "):
            other = False
        if sig is not None:
            signature.append(sig)
            in_signature = True
            at = end
            continue
        if line.startswith(b"\n"):
            end = len(data)  # the blank line: the message follows, kept whole
            line = data[at:]
        if not other:
            payload.append(line)
        in_signature, at = False, end
    return (b"".join(payload), b"".join(signature)) if signature else None


def commit_object(
    tree: Sha, parents: list[Sha], author: str, committer: str, message: str
) -> bytes:
    """A commit object's bytes as ``git commit-tree`` writes them (``message`` ends in a
    newline)."""
    lines = [f"tree {tree}", *(f"parent {p}" for p in parents)]
    lines += [f"author {author}", f"committer {committer}", "", message]
    text = "\n".join(lines)
    return (text if text.endswith("\n") else text + "\n").encode("utf-8")


def with_signature(payload: bytes, header: bytes, armored: bytes) -> bytes:
    """A commit's ``payload`` with its signature ``armored`` as git adds one: a ``header``
    line at the end of the headers, each further line of it after a space."""
    head, blank, message = payload.partition(b"\n\n")
    lines = armored.rstrip(b"\n").split(b"\n")
    return head + b"\n" + header + b" " + b"\n ".join(lines) + b"\n" + blank[1:] + message


def ident_date(ident: str) -> str:
    """The date of an author or committer line (``Name <mail> 1700000000 +0100``) as git's
    ``%aI``/``%cI`` give it: ``2023-11-14T23:13:20+01:00``."""
    stamp, zone = ident.rpartition(">")[2].split()
    sign = -1 if zone.startswith("-") else 1
    offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[3:5])) * sign
    return datetime.fromtimestamp(int(stamp), timezone(offset)).isoformat()


def tree_order(entry: TreeEntry) -> bytes:
    # git orders a tree as if directory names ended with "/".
    return entry.name + b"/" if entry.is_tree else entry.name


def parse_tree(data: bytes, n: int) -> list[TreeEntry]:
    """A tree object's entries (git's one tree format, parsed here only; ids of ``n`` bytes)."""
    entries: list[TreeEntry] = []
    pos = 0
    while pos < len(data):
        sp = data.index(b" ", pos)
        nul = data.index(b"\0", sp)
        sha = Sha(data[nul + 1 : nul + 1 + n].hex())
        entries.append(TreeEntry(data[pos:sp], data[sp + 1 : nul], sha))
        pos = nul + 1 + n
    return entries


def tree_line(e: TreeEntry) -> bytes:
    return e.mode + b" " + e.name + b"\0" + bytes.fromhex(e.sha)


def object_id(kind: str, data: bytes, sha_bytes: int = 20) -> Sha:
    """The id git gives an object of ``kind`` holding ``data`` (sha1, or sha256 for 32-byte ids)."""
    digest = hashlib.sha256 if sha_bytes == 32 else hashlib.sha1
    return Sha(digest(b"%s %d\0" % (kind.encode(), len(data)) + data).hexdigest())
