"""Budget: ``gitmem sync`` receiving 1,000 commits with one local commit, and sending one
commit, each <= 2x ``git pull --rebase && git push`` of the same, through ``git daemon``
on 127.0.0.1.

Once: a bare remote of a generated client, served by ``git daemon``; a desktop made from
it by ``gitmem clone``; 1,000 edits (``gitmem.write_card``) on another copy, kept as a
second bare repo ("ahead"). Each round gets fresh copies: the desktop with one local
``gitmem write`` on a card the 1,000 do not touch, and a remote (ahead to receive, base to
send). Timed as processes: ``gitmem sync`` in one copy, ``git pull --rebase && git push``
(hooks off) in the other, interleaved. Medians::

    .venv/bin/python benchmarks/bench_sync.py                  # on a 10k-commit client
    .venv/bin/python benchmarks/bench_sync.py --quick          # on 1k, fewer rounds
    .venv/bin/python benchmarks/bench_sync.py --loose          # the new objects left loose
    .venv/bin/python benchmarks/bench_sync.py --spread 1       # the 1,000 edit one card
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import common
import daemon

import gitmem

PULL_PUSH = "git -c core.hooksPath=/dev/null pull -q --rebase && git push -q"


def new_commits(
    src: Path, dest: Path, env: dict[str, str], projects: list[str], n: int, loose: bool
) -> None:
    """A bare repo holding ``src`` and ``n`` more edits, spread over ``projects``,
    pushed to it as another clone's would be: git keeps a push of over 100 objects as
    one pack. ``loose``: a local ``git clone --bare`` of the laptop instead, which keeps
    the edits' objects loose (what this benchmark did before 12-07): the server then
    packs them for every fetch, the same time added to both sides of a round."""
    laptop = common.copy_of(src, dest.with_suffix(".work"))
    with gitmem.open_repo(laptop) as repo:
        for i in range(n):
            project = projects[i % len(projects)]
            entry = gitmem.IndexEntry.make(f"notes-{i}", ["bench"], f"laptop note {i}")
            gitmem.write_card(repo, project, "", f"\n## Notes {i}\n\n- laptop note {i}\n", entry)
    if loose:
        common.git(laptop.parent, env, "clone", "-q", "--bare", str(laptop), str(dest))
    else:
        common.git(laptop.parent, env, "clone", "-q", "--bare", str(src), str(dest))
        common.git(laptop, env, *common.PLAIN, "push", "-q", str(dest), "main")
    counts = dict(
        line.split(": ") for line in common.git(dest, env, "count-objects", "-v").splitlines()
    )
    print(f"the remote ahead: {counts['count']} loose objects, {counts['in-pack']} in packs")
    shutil.rmtree(laptop)


def measure(size: int, commits: int, rounds: int, loose: bool, spread: int) -> None:
    with common.scratch() as tmp:
        work = Path(tmp)
        env = common.bench_env(work / "home")
        srv = work / "srv"
        srv.mkdir()
        src = common.history(size)
        projects = sorted(p.stem for p in (src / "cards").glob("*.md"))
        common.git(work, env, "clone", "-q", "--bare", str(src), str(srv / "base.git"))
        new_commits(
            src, srv / "ahead.git", env, projects[: spread or len(projects) // 2], commits, loose
        )
        with daemon.git_daemon(srv, env) as port:
            url = f"git://127.0.0.1:{port}"
            desk0 = work / "desk0"
            common.run([common.GITMEM, "clone", f"{url}/base.git", str(desk0)], work, env)
            n = [0]

            def case(remote: str, ours: bool) -> float:
                n[0] += 1
                served = srv / f"r{n[0]}.git"
                shutil.copytree(srv / remote, served, symlinks=True)
                desk = common.copy_of(desk0, work / f"desk{n[0]}")
                common.git(desk, env, "remote", "set-url", "origin", f"{url}/{served.name}")
                note = ["--old", "", "--new", f"\n## Desk\n\n- desktop note {n[0]}\n"]
                note += ["--section", "desk", "--keywords", "desk", "--summary", "desktop note"]
                common.run([common.GITMEM, "write", projects[-1], *note], desk, env)
                cmd = [common.GITMEM, "sync"] if ours else ["sh", "-c", PULL_PUSH]
                took = common.run(cmd, desk, env)
                shutil.rmtree(desk)
                shutil.rmtree(served)
                return took

            got = common.interleaved(
                {
                    "receive gitmem": lambda: case("ahead.git", True),
                    "receive git": lambda: case("ahead.git", False),
                    "send gitmem": lambda: case("base.git", True),
                    "send git": lambda: case("base.git", False),
                },
                rounds,
            )
    print(f"on a {size:,}-commit client:")
    for what, label in (("receive", f"receive {commits:,} + 1 local commit"), ("send", "send 1")):
        ours, theirs = got[f"{what} gitmem"], got[f"{what} git"]
        common.row(f"  {label}: gitmem sync", common.ms(ours), "")
        common.row(f"  {label}: git pull --rebase && git push", common.ms(theirs), "")
        common.row(f"  {label}: gitmem / git", f"{ours / theirs:.2f}x", "<= 2x", ours <= 2 * theirs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common.add_sizes(ap, "10000", "1000")
    ap.add_argument("--commits", type=int, default=1000, help="commits received (1000)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--loose", action="store_true", help="the remote's new objects left loose")
    ap.add_argument("--spread", type=int, default=0, help="cards the commits edit (half)")
    args = ap.parse_args()
    common.machine()
    for size in common.sizes(args):
        rounds = 3 if args.quick else args.rounds
        measure(size, args.commits, rounds, args.loose, args.spread)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
