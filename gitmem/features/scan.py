"""``gitmem scan``: secrets in the tree of main, or added by any commit of history.

The history is read with one ``git log -p`` (the lines each commit adds to memory,
and its index entry's summary and keywords); only a finding costs one more read,
of the file it is in, to name its section. ``outgoing`` is what ``gitmem sync``
checks before it pushes.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from gitmem.errors import Conflict
from gitmem.memory import secrets
from gitmem.memory import trailers as T
from gitmem.memory.cards import sections
from gitmem.memory.repo import MAIN, MemoryRepo

# What gitmem scans: memory (cards, persona, synthesis) and the session transcripts.
PATHS = ("cards", "persona.md", "synthesis.md", "sessions")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True)
class Hit:
    kind: str
    path: str  # a file, or "Gitmem-Summary" / "Gitmem-Keywords" of the commit
    line: int
    section: str | None = None
    commit: str | None = None  # None: the tree of main
    secret: str = ""  # kept for `gitmem redact`, never printed

    def to_json(self) -> dict[str, object]:
        d = asdict(self)
        del d["secret"]
        return d

    def text(self) -> str:
        at = f"{self.commit[:7]} " if self.commit else ""
        sec = f" § {self.section}" if self.section else ""
        return f"{at}{self.path}{sec} line {self.line}: {self.kind}"


@dataclass(frozen=True)
class ScanResult:
    """A scan for secrets: whether history was scanned, and the ``hits`` (each named by
    kind, path, line, section and commit; never the secret itself)."""

    history: bool
    hits: list[Hit]

    def to_json(self) -> dict[str, object]:
        return {"history": self.history, "findings": [h.to_json() for h in self.hits]}

    def text(self) -> str:
        if not self.hits:
            where = "history" if self.history else "main"
            return f"no secrets found in {where}.\n"
        lines = [h.text() for h in self.hits]
        lines.append(
            f"{len(self.hits)} finding(s); remove them from history with `gitmem redact`"
            if self.history
            else f"{len(self.hits)} finding(s); edit them out, then `gitmem scan --history`"
        )
        return "\n".join(lines) + "\n"


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


def scan_tree(repo: MemoryRepo, rev: str = MAIN) -> list[Hit]:
    s = secrets.scanner(repo.config.secrets_allow)
    out = repo.git.run("ls-tree", "-r", "-z", "--name-only", rev, "--", *PATHS)
    hits: list[Hit] = []
    for path in out.stdout.decode("utf-8", "surrogateescape").split("\0"):
        raw = repo.store.read_blob(f"{rev}:{path}") if path else None
        if raw is None:
            continue
        text = raw.decode("utf-8", "replace")
        for f in s.scan(text):
            hits.append(Hit(f.kind, path, f.line, _section(text, f.line, path), None, f.secret))
    return hits


def scan_log(repo: MemoryRepo, *revs: str) -> list[Hit]:
    """Findings in what each commit of ``revs`` (git log arguments) adds, oldest first."""
    s = secrets.scanner(repo.config.secrets_allow)
    fmt = f"--format=%x00%H%x1f%(trailers:key={T.SUMMARY},valueonly)%x1f%(trailers:key={T.KEYWORDS},valueonly)%x1f"
    raw = repo.git.run(
        *T.DEFAULT_BLOCKS,
        "log",
        "--reverse",
        "-p",
        "-U0",
        "--no-color",
        "--no-renames",
        "--no-ext-diff",
        fmt,
        *revs,
        "--",
        *PATHS,
    ).stdout.decode("utf-8", "surrogateescape")
    hits: list[Hit] = []
    for record in raw.split("\0")[1:]:
        sha, summary, keywords, diff = [*record.split("\x1f", 3), "", "", ""][:4]
        for key, value in ((T.SUMMARY, summary), (T.KEYWORDS, keywords)):
            for f in s.scan(value.strip()):
                hits.append(Hit(f.kind, key, 1, None, sha, f.secret))
        for path, added in added_lines(diff).items():
            text = "\n".join(t for _, t in added)
            for f in s.scan(text):
                n = added[f.line - 1][0]
                hits.append(Hit(f.kind, path, n, _section_at(repo, sha, path, n), sha, f.secret))
    return hits


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


def scan(repo: MemoryRepo, history: bool = False) -> ScanResult:
    """Secrets in memory: the cards, persona, synthesis and transcripts on main, or with
    ``history`` what every commit of every branch and session ref added."""
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
