"""Git processes per operation: each of gitmem's beside plain git doing the same, counted
from git's own trace (``GIT_TRACE2_EVENT``: one ``start`` event per git process, the ones
git starts itself included). Budget: plain git's count + at most 2.

- a write: ``gitmem write`` / ``git add`` + ``git commit``;
- a hook run: ``git commit`` with gitmem's hooks / without;
- ``gitmem index`` after 10 plain commits / ``git log`` of them;
- ``gitmem status`` / ``git status``;
- a receiving and a sending ``gitmem sync`` / ``git pull --rebase && git push``, through
  ``git daemon`` on 127.0.0.1 (10 commits received).

Counts are deterministic (no timing)::

    .venv/bin/python benchmarks/bench_git_processes.py
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections import Counter
from pathlib import Path

import common
import daemon

PULL_PUSH = "git -c core.hooksPath=/dev/null pull -q --rebase && git push -q"
SLACK = 2  # gitmem may start this many more git processes than plain git


def counted(cmd: list[str], cwd: Path, env: dict[str, str], trace: Path) -> Counter[str]:
    """The git processes ``cmd`` started, by git command name."""
    trace.unlink(missing_ok=True)
    common.run(cmd, cwd, env | {"GIT_TRACE2_EVENT": str(trace)})
    names: Counter[str] = Counter()
    for line in trace.read_text().splitlines() if trace.exists() else []:
        event = json.loads(line)
        if event.get("event") == "start":
            names[command(event.get("argv", []))] += 1
    return names


def command(argv: list[str]) -> str:
    """The git command of ``argv`` (``-c KEY=VALUE`` and ``-C DIR`` passed over)."""
    args = iter(argv[1:])
    for arg in args:
        if arg in ("-c", "-C"):
            next(args, None)
        elif not arg.startswith("-"):
            return arg
    return "git"


def note(desk: Path, env: dict[str, str], card: str, n: int) -> None:
    """A hand edit of ``card``, committed without hooks (not counted)."""
    path = desk / "cards" / f"{card}.md"
    path.write_text(path.read_text() + f"\n- a note typed by hand, {n}\n")
    common.git(desk, env, *common.PLAIN, "commit", "-q", "-am", f"Notes by hand {n}")


def report(what: str, ours: Counter[str], theirs: Counter[str]) -> None:
    a, b = sum(ours.values()), sum(theirs.values())
    common.row(f"  {what}: gitmem", str(a), f"<= {b} + {SLACK}", a <= b + SLACK)
    common.row(f"  {what}: plain git", str(b), "")
    print(f"    gitmem: {dict(sorted(ours.items()))}")
    print(f"    git:    {dict(sorted(theirs.items()))}")


def measure(size: int) -> None:
    with common.scratch() as tmp:
        work = Path(tmp)
        env = common.bench_env(work / "home")
        trace = work / "trace.json"
        src = common.history(size)
        projects = sorted(p.stem for p in (src / "cards").glob("*.md"))
        srv = work / "srv"
        srv.mkdir()
        common.git(work, env, "clone", "-q", "--bare", str(src), str(srv / "base.git"))
        with daemon.git_daemon(srv, env) as port:
            url = f"git://127.0.0.1:{port}"
            desk = work / "desk"
            common.run([common.GITMEM, "clone", f"{url}/base.git", str(desk)], work, env)
            common.run([common.GITMEM, "index"], desk, env)  # the cache, as a user has it
            print(f"on a {size:,}-commit client:")
            new = ["--old", "", "--section", "desk", "--keywords", "desk", "--summary", "a note"]
            ours = counted(
                [common.GITMEM, "write", projects[0], *new, "--new", "\n## Desk\n\n- a note\n"],
                desk,
                env,
                trace,
            )
            path = desk / "cards" / f"{projects[1]}.md"
            path.write_text(path.read_text() + "\n## Desk\n\n- a note\n")
            theirs = counted(["git", "add", str(path)], desk, env, trace)
            theirs += counted(
                ["git", *common.PLAIN, "commit", "-q", "-m", "a note"], desk, env, trace
            )
            report("a write", ours, theirs)

            path.write_text(path.read_text() + "- by hand\n")
            ours = counted(["git", "commit", "-q", "-am", "by hand"], desk, env, trace)
            path.write_text(path.read_text() + "- by hand again\n")
            commit = ["git", *common.PLAIN, "commit", "-q", "-am", "by hand again"]
            report("a hook run (git commit)", ours, counted(commit, desk, env, trace))

            common.run([common.GITMEM, "index"], desk, env)
            for n in range(10):
                note(desk, env, projects[n % len(projects)], n)
            ours = counted([common.GITMEM, "index"], desk, env, trace)
            theirs = counted(["git", "log", "-q", "-10", "--raw"], desk, env, trace)
            report("gitmem index after 10 plain commits", ours, theirs)
            ours = counted([common.GITMEM, "status"], desk, env, trace)
            report("gitmem status", ours, counted(["git", "status"], desk, env, trace))
            common.run([common.GITMEM, "sync"], desk, env)  # level with the remote

            for what, ahead in (("sending sync (1 commit)", 0), ("receiving sync (10)", 10)):
                got = []
                for cmd in ([common.GITMEM, "sync"], ["sh", "-c", PULL_PUSH]):
                    served = srv / f"case-{len(got)}.git"
                    shutil.rmtree(served, ignore_errors=True)
                    shutil.copytree(srv / "base.git", served, symlinks=True)
                    mine = common.copy_of(desk, work / f"desk-{len(got)}")
                    common.git(mine, env, "remote", "set-url", "origin", f"{url}/{served.name}")
                    common.git(mine, env, "fetch", "-q", "origin")
                    common.git(mine, env, "reset", "-q", "--hard", "origin/main")
                    common.run([common.GITMEM, "index"], mine, env)
                    ahead_of(served, work / "other", env, projects, ahead)
                    note(mine, env, projects[-1], 99)
                    got.append(counted(cmd, mine, env, trace))
                    shutil.rmtree(mine)
                report(what, got[0], got[1])


def ahead_of(served: Path, other: Path, env: dict[str, str], projects: list[str], n: int) -> None:
    """``n`` commits pushed to ``served`` from another clone (not counted)."""
    if not n:
        return
    shutil.rmtree(other, ignore_errors=True)
    common.git(served.parent, env, "clone", "-q", str(served), str(other))
    for i in range(n):
        note(other, env, projects[i % (len(projects) // 2)], 1000 + i)
    common.git(other, env, "push", "-q", "origin", "HEAD:main")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--commits", type=int, default=1000, help="the client's history (1000)")
    args = ap.parse_args()
    common.machine()
    measure(args.commits)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
