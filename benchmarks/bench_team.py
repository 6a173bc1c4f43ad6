"""N machines writing and syncing one memory at once, through a real ``git daemon``.

A bare remote served by ``git daemon`` on 127.0.0.1 (a random free port, receive-pack
on, reflog of every update kept), N clones of it, and N threads, one per clone, each
running R rounds of ``gitmem write`` (one edit to the clone's own card) then
``gitmem sync``, as processes, all at once. Then each clone syncs once more, in turn.

Printed: edits, syncs, refusals that reached the caller (a sync that exited non-zero),
syncs that needed more than one push round, the most rounds one sync took, wall time;
and the checks: nothing lost (every edit on the remote's main), the remote only moved
forward (each update in its reflog descends from the one before), all clones converged
(the same main, the same index). Exit status 1 when a check fails; the refusal count is
a figure, not a check (the goal is at most 1 in 20 syncs).

    .venv/bin/python benchmarks/bench_team.py [--clones 4] [--rounds 15]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

GITMEM = str(Path(sys.executable).with_name("gitmem"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import daemon  # noqa: E402

ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GITMEM_"))},
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def run(
    cwd: Path, *cmd: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env or ENV, capture_output=True, text=True, check=False)


@dataclass(frozen=True)
class Gitmem:
    """How to run gitmem: this checkout's console script, or an older source tree."""

    cmd: tuple[str, ...] = (GITMEM,)
    env: dict[str, str] = field(default_factory=lambda: ENV)

    def __call__(self, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return run(cwd, *self.cmd, *args, env=self.env)


def baseline(rev: str, into: Path) -> Gitmem:
    """gitmem as of ``rev`` of this repository (``git archive``), run from its source."""
    here = Path(__file__).resolve().parent.parent
    into.mkdir()
    tar = subprocess.run(
        ["git", "-C", str(here), "archive", rev, "gitmem", "template-repo", "hooks"],
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=tar.stdout, check=True)
    env = {**ENV, "PYTHONPATH": str(into)}
    return Gitmem((sys.executable, "-c", "from gitmem.cli import main; main()"), env)


def git(cwd: Path, *args: str) -> str:
    proc = run(cwd, "git", *args)
    if proc.returncode:
        raise SystemExit(f"git {' '.join(args)} failed in {cwd}: {proc.stderr}")
    return proc.stdout


@contextmanager
def git_daemon(base: Path) -> Iterator[int]:
    with daemon.git_daemon(base, ENV) as port:
        yield port


@dataclass
class Figures:
    clones: int
    rounds: int
    edits: int = 0
    syncs: int = 0
    refusals: int = 0  # syncs that exited non-zero: what reached the person
    retried: int = 0  # syncs that took more than one push round
    max_rounds: int = 0
    wall_s: float = 0.0
    lost: int = 0
    remote_forward: bool = False
    converged: bool = False
    messages: list[str] = field(default_factory=list)


def _machine(
    gm: Gitmem,
    path: Path,
    me: int,
    rounds: int,
    figs: Figures,
    lock: threading.Lock,
    written: list[str],
) -> None:
    for r in range(rounds):
        new = f"# Card {me}\n\n## Notes\nround 0\n" if r == 0 else f"round {r}\n"
        w = gm(
            path,
            "write",
            f"card-{me}",
            "--old",
            "",
            "--new",
            new,
            "--section",
            "notes",
            "--keywords",
            "notes",
            "--summary",
            f"card {me} at round {r}",
        )
        s = gm(path, "sync", "--json")
        with lock:
            if w.returncode:
                figs.messages.append(w.stderr.strip())
            else:
                figs.edits += 1
                written.append(f"card-{me}: round {r}")
            figs.syncs += 1
            if s.returncode:
                figs.refusals += 1
                figs.messages.append(s.stderr.strip() or s.stdout.strip())
            else:
                n = int(json.loads(s.stdout).get("rounds", 1))
                figs.retried += n > 1
                figs.max_rounds = max(figs.max_rounds, n)


def load(work: Path, clones: int, rounds: int, gm: Gitmem | None = None) -> Figures:
    """Run the load in ``work`` (an empty folder) and check what it left."""
    gm = gm or Gitmem()
    figs = Figures(clones, rounds)
    bare = work / "remote.git"
    git(work, "init", "-q", "--bare", "-b", "main", str(bare))
    git(bare, "config", "core.logAllRefUpdates", "always")
    with git_daemon(work) as port:
        url = f"git://127.0.0.1:{port}/remote.git"
        first = work / "m0"
        proc = gm(work, "init", str(first))
        if proc.returncode:
            raise SystemExit(proc.stderr)
        git(first, "remote", "add", "origin", url)
        if gm(first, "sync").returncode:
            raise SystemExit("first sync failed")
        paths = [first]
        for i in range(1, clones):
            git(work, "clone", "-q", url, str(work / f"m{i}"))
            paths.append(work / f"m{i}")
        lock = threading.Lock()
        written: list[str] = []
        threads = [
            threading.Thread(target=_machine, args=(gm, p, i, rounds, figs, lock, written))
            for i, p in enumerate(paths)
        ]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        figs.wall_s = round(time.perf_counter() - start, 2)
        for p in paths + paths:  # twice: the last one's push reaches the first
            gm(p, "sync")
        mains = {git(p, "rev-parse", "main").strip() for p in paths}
        # --json: the entries history gives; the I block also names what this clone
        # cannot verify (these clones are made by plain git clone, without signing)
        indexes = {gm(p, "index", "--json").stdout for p in paths}
    remote_main = git(bare, "rev-parse", "main").strip()
    figs.converged = mains == {remote_main} and len(indexes) == 1
    cards = {
        f"card-{i}": git(bare, "show", f"main:cards/card-{i}.md") if _has(bare, i) else ""
        for i in range(clones)
    }
    figs.lost = sum(1 for w in written if f"\n{w.split(': ')[1]}\n" not in cards[w.split(":")[0]])
    updates = git(bare, "reflog", "show", "--format=%H", "refs/heads/main").split()[::-1]
    figs.remote_forward = all(
        run(bare, "git", "merge-base", "--is-ancestor", a, b).returncode == 0
        for a, b in itertools.pairwise(updates)
    )
    return figs


def _has(bare: Path, i: int) -> bool:
    return run(bare, "git", "cat-file", "-e", f"main:cards/card-{i}.md").returncode == 0


def report(title: str, figs: Figures) -> None:
    print(title)
    print(f"  edits                        {figs.edits}")
    print(f"  syncs                        {figs.syncs}")
    print(
        f"  refusals reaching the caller {figs.refusals} ({figs.refusals / max(figs.syncs, 1):.1%})"
    )
    print(f"  syncs retried (>1 round)     {figs.retried}")
    print(f"  most rounds in one sync      {figs.max_rounds}")
    print(f"  wall time                    {figs.wall_s} s")
    print(f"  edits lost                   {figs.lost}")
    print(f"  remote only moved forward    {'yes' if figs.remote_forward else 'NO'}")
    print(f"  all clones converged         {'yes' if figs.converged else 'NO'}")
    for m in sorted(set(figs.messages)):
        print(f"  refused ({figs.messages.count(m)}x): {m}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clones", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument(
        "--baseline", metavar="REV", help="also run the load on gitmem as of REV, first"
    )
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    runs: list[tuple[str, Figures]] = []
    with tempfile.TemporaryDirectory(prefix="gitmem-team-") as tmp:
        if args.baseline:
            (Path(tmp) / "base").mkdir()
            old = baseline(args.baseline, Path(tmp) / "src")
            runs.append(
                (f"gitmem {args.baseline}", load(Path(tmp) / "base", args.clones, args.rounds, old))
            )
        (Path(tmp) / "now").mkdir()
        runs.append(("this gitmem", load(Path(tmp) / "now", args.clones, args.rounds)))
    if args.json:
        print(json.dumps({name: asdict(f) for name, f in runs}, indent=2))
    else:
        for name, figs in runs:
            report(
                f"{name}: {figs.clones} clones x {figs.rounds} rounds of write + sync through git daemon",
                figs,
            )
    figs = runs[-1][1]
    return 0 if figs.lost == 0 and figs.remote_forward and figs.converged else 1


if __name__ == "__main__":
    sys.exit(main())
