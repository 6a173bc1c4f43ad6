"""Helpers shared by the tests: the CLI in-process, git, repo snapshots."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmem.cli import main as cli_main


@dataclass
class Result:
    code: int
    out: str
    err: str


def gm(*args: str, cwd: Path | None = None, stdin: str | bytes = b"") -> Result:
    """Run the gitmem CLI in-process, exactly as the console script does."""
    out, err = io.StringIO(), io.StringIO()
    data = stdin.encode() if isinstance(stdin, str) else stdin
    fake_in = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    old_cwd = Path.cwd()
    old_in = sys.stdin
    code = 0
    try:
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin = fake_in
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                cli_main(list(args))
            except SystemExit as exc:
                code = int(exc.code or 0)
    finally:
        sys.stdin = old_in
        os.chdir(old_cwd)
    return Result(code, out.getvalue(), err.getvalue())


def try_write(
    client: Path,
    project: str,
    old: str,
    new: str,
    section: str = "budget",
    summary: str | None = None,
) -> Result:
    """`gitmem write` of one edit, its keyword the section id and its summary given (or
    "<section> notes"); whatever it exits with."""
    entry = [
        "--section",
        section,
        "--keywords",
        section,
        "--summary",
        summary or f"{section} notes",
    ]
    return gm("-C", str(client), "write", project, "--old", old, "--new", new, *entry)


def write(
    client: Path,
    project: str,
    old: str,
    new: str,
    section: str = "budget",
    summary: str | None = None,
) -> Result:
    """`try_write`, asserting it succeeded."""
    res = try_write(client, project, old, new, section, summary)
    assert res.code == 0, res.err
    return res


def write_sha(path: Path, project: str, old: str, new: str, section: str, summary: str) -> str:
    """`write` of one edit, then main's new tip (the commit it made)."""
    write(path, project, old, new, section, summary)
    return git(path, "rev-parse", "main").strip()


def git(path: Path, *args: str, input: bytes | None = None, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=path, input=input, capture_output=True, check=False)
    if check and proc.returncode:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr.decode()}")
    return proc.stdout.decode()


def snapshot(path: Path) -> dict[str, str]:
    """Every file under ``path`` (.git included) by content hash.

    Empty advisory lock files under .git/gitmem are left out: creating one is how
    gitmem waits for another gitmem process, not a change to memory.
    """
    out: dict[str, str] = {}
    for f in sorted(path.rglob("*")):
        rel = f.relative_to(path).as_posix()
        if f.is_file() and not (rel.startswith(".git/gitmem/") and rel.endswith(".lock")):
            out[rel] = hashlib.sha1(f.read_bytes()).hexdigest()
    return out


def index_summaries(repo: Any) -> dict[str, str | None]:
    """The index as card/section -> summary; the incremental cache must equal a full replay."""
    from gitmem.index import build as index

    idx = index.refresh(repo)
    assert idx == index.resolve(repo, index.replay_all(repo))
    return {f"{c.project}/{s.id}": s.summary for c in idx.cards for s in c.sections}


def spy_full_replays(monkeypatch: Any) -> list[str]:
    """Record every full replay of a branch's history (the cost that grows with it): the
    branches replayed, in order."""
    from gitmem.index import replay
    from gitmem.memory.repo import MAIN, MemoryRepo

    calls: list[str] = []
    real = replay.replay_all

    def spy(repo: MemoryRepo, branch: str = MAIN) -> replay.Replay:
        calls.append(branch)
        return real(repo, branch)

    monkeypatch.setattr(replay, "replay_all", spy)
    return calls


def spy_git_processes(monkeypatch: Any) -> list[str]:
    """Record the git subcommand (``log``, ``cat-file``, ...) of every process started."""
    started: list[str] = []
    real = subprocess.Popen

    class Recording(real):  # type: ignore[misc,valid-type]
        def __init__(self, args: Any, *rest: Any, **kw: Any) -> None:
            argv = [str(a) for a in args] if isinstance(args, (list, tuple)) else [str(args)]
            if argv and Path(argv[0]).name == "git":
                words = argv[1:]
                while words[:1] in (["-c"], ["-C"]):
                    words = words[2:]
                started.append(words[0] if words else "")
            super().__init__(args, *rest, **kw)

    monkeypatch.setattr(subprocess, "Popen", Recording)
    return started
