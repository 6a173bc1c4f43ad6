"""``gitmem scan``: secrets in the tree of main, or added by any commit of history.

Every tracked file is scanned, not only memory's folders: ``gitmem sync`` pushes them
all (``gitmem.toml``, ``logs/``, a file committed by hand). The history is read with one
``git log -p`` (the lines each commit adds, the names of the files it creates, and its
whole message); only a finding costs one
more read, of the file it is in, to name its section. Each finding keeps its whole
token (a detector may match only a prefix: ``ghp``, the first 24 characters of a Stripe
key), so ``gitmem redact`` replaces all of it. A secret in a file's name is a finding at
line 0 of that file; a path is never printed with its secret in it. ``outgoing`` is
what ``gitmem sync`` checks before it pushes.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from gitmem.errors import Conflict
from gitmem.memory import secrets
from gitmem.memory import trailers as T
from gitmem.memory.cards import sections
from gitmem.memory.repo import MAIN, MemoryRepo

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_TOKEN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+/=-")


@dataclass(frozen=True)
class Hit:
    kind: str
    path: str  # a file (its secrets masked), "Gitmem-Summary"/"Gitmem-Keywords", "message"
    line: int  # 0: in the file's name
    section: str | None = None
    commit: str | None = None  # None: the tree of main
    secret: str = ""  # kept for `gitmem redact`, never printed

    def to_json(self) -> dict[str, object]:
        d = asdict(self)
        del d["secret"]
        return d


@dataclass(frozen=True)
class ScanResult:
    """A scan for secrets: whether history was scanned, and the ``hits`` (each named by
    kind, path, line, section and commit; never the secret itself)."""

    history: bool
    hits: list[Hit]

    def to_json(self) -> dict[str, object]:
        return {"history": self.history, "findings": [h.to_json() for h in self.hits]}


def _section(text: str, line: int, path: str) -> str | None:
    """The id of the section of ``text`` (the file ``path``) that holds ``line``."""
    if not path.endswith(".md"):
        return None
    for s in sections(text):
        if s.start < line <= s.end:
            return s.id
    return None


def _section_at(repo: MemoryRepo, rev: str, path: str, line: int) -> str | None:
    raw = repo.store.read_blob(f"{rev}:{path}") if path.endswith(".md") else None
    return None if raw is None else _section(raw.decode("utf-8", "replace"), line, path)


def whole(line: str, secret: str) -> str:
    """The whole token of ``line`` around ``secret``: a detector may report only a prefix
    (``ghp`` of a GitHub token, 24 characters of a longer Stripe key)."""
    at = line.find(secret)
    if at < 0 or not secret:
        return secret
    start, end = at, at + len(secret)
    while start > 0 and line[start - 1] in _TOKEN and line[start - 1] != "=":
        start -= 1
    while end < len(line) and line[end] in _TOKEN:
        end += 1
    return line[start:end]


def _found(s: secrets.Scanner, text: str) -> list[tuple[int, str, str]]:
    """(line, kind, whole secret) of each finding in ``text``."""
    lines = text.split("\n")
    return [(f.line, f.kind, whole(lines[f.line - 1], f.secret)) for f in s.scan(text)]


def name_findings(s: secrets.Scanner, path: str) -> list[tuple[str, str]]:
    """(kind, whole secret) of each secret in the parts of ``path``'s name."""
    out: list[tuple[str, str]] = []
    for part in path.split("/"):
        stem = part[:-3] if part.endswith(".md") else part
        out += [(kind, secret) for _, kind, secret in _found(s, stem)]
    return out


def masked(path: str, found: list[tuple[str, str]]) -> str:
    """``path`` with each secret of its name replaced by its kind: safe to print."""
    for kind, secret in found:
        path = path.replace(secret, f"[REDACTED:{kind}]")
    return path


def scan_tree(repo: MemoryRepo, rev: str = MAIN) -> list[Hit]:
    s = secrets.scanner(repo.config.secrets_allow)
    out = repo.git.run("ls-tree", "-r", "-z", "--name-only", rev)
    hits: list[Hit] = []
    for path in out.stdout.decode("utf-8", "surrogateescape").split("\0"):
        raw = repo.store.read_blob(f"{rev}:{path}") if path else None
        if raw is None:
            continue
        named = name_findings(s, path)
        shown = masked(path, named)
        hits += [Hit(kind, shown, 0, None, None, secret) for kind, secret in named]
        text = raw.decode("utf-8", "replace")
        for n, kind, secret in _found(s, text):
            hits.append(Hit(kind, shown, n, _section(text, n, path), None, secret))
    return hits


def _message_hits(s: secrets.Scanner, sha: str, message: str) -> list[Hit]:
    """Findings in a commit's message, each named by the trailer it is in (or "message");
    a secret the subject repeats from the summary is one finding."""
    hits: dict[str, Hit] = {}
    lines = message.split("\n")
    for n, kind, secret in _found(s, message):
        key, sep, _ = lines[n - 1].partition(":")
        where = T.canonical(key) if sep else None
        where = where if where in (T.SUMMARY, T.KEYWORDS) else "message"
        if secret not in hits or where != "message":
            hits[secret] = Hit(kind, where, 1, None, sha, secret)
    return list(hits.values())


def scan_log(repo: MemoryRepo, *revs: str) -> list[Hit]:
    """Findings in what each commit of ``revs`` (git log arguments) adds, oldest first."""
    s = secrets.scanner(repo.config.secrets_allow)
    raw = repo.git.run(
        *T.DEFAULT_BLOCKS,
        "log",
        "--reverse",
        "-p",
        "-U0",
        "--no-color",
        "--no-renames",
        "--no-ext-diff",
        "--summary",
        "--format=%x00%H%x1f%B%x1f",
        *revs,
        "--",
    ).stdout.decode("utf-8", "surrogateescape")
    hits: list[Hit] = []
    for record in raw.split("\0")[1:]:
        sha, message, diff = [*record.split("\x1f", 2), "", ""][:3]
        hits += _message_hits(s, sha, message.strip())
        for path in created(diff):
            named = name_findings(s, path)
            hits += [Hit(k, masked(path, named), 0, None, sha, x) for k, x in named]
        for path, added in added_lines(diff).items():
            text = "\n".join(t for _, t in added)
            shown = masked(path, name_findings(s, path))
            for line, kind, secret in _found(s, text):
                n = added[line - 1][0]
                hits.append(Hit(kind, shown, n, _section_at(repo, sha, path, n), sha, secret))
    return hits


def created(diff: str) -> list[str]:
    """The paths a commit creates, from ``git log --summary``'s " create mode" lines."""
    return [
        ln.split(" ", 4)[4]
        for ln in diff.split("\n")
        if ln.startswith(" create mode ") and ln.count(" ") >= 4
    ]


def added_lines(diff: str) -> dict[str, list[tuple[int, str]]]:
    """path -> the lines a ``-U0`` diff adds to it, with their line numbers after."""
    out: dict[str, list[tuple[int, str]]] = {}
    path, line = "", 0
    for ln in diff.split("\n"):
        if ln.startswith("+++ "):
            path = ln[6:] if ln.startswith("+++ b/") else ""
        elif ln.startswith("@@"):
            m = _HUNK.match(ln)
            line = int(m.group(1)) if m else 0
        elif ln.startswith("+") and path:
            out.setdefault(path, []).append((line, ln[1:]))
            line += 1
    return out


def scan_secrets(repo: MemoryRepo, history: bool = False) -> ScanResult:
    """Secrets in every file on main, or with ``history`` what every commit of every
    branch and session ref added."""
    if history:
        return ScanResult(True, scan_log(repo, "--all"))
    return ScanResult(False, scan_tree(repo))


class SecretsInHistory(Conflict):
    """Commits about to leave this machine carry a secret."""


def outgoing(repo: MemoryRepo, remote: str, ours: str, theirs: str | None) -> None:
    """Refuse (SecretsInHistory) to send commits ``theirs..ours`` that carry a finding."""
    hits = scan_log(repo, ours, *([f"^{theirs}"] if theirs else []))
    if not hits:
        return
    named = ", ".join(sorted({f"{(h.commit or '')[:7]} ({h.kind})" for h in hits}))
    raise SecretsInHistory(
        f"not pushed to {remote}: commits carry a secret: {named}; nothing was sent. "
        "Remove it with `gitmem redact` (see `gitmem scan --history`)"
    )
