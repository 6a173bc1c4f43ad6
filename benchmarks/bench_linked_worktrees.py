"""Fault injection for a second worktree and for reviews of running sessions (issue 22,
cases 4 and 12). Seeded; prints one tally per scenario, the rows of docs/reliability.md.

Linked worktree: ``main`` checked out in a worktree made by ``git worktree add``, the
main worktree on another branch. Each try runs ``gitmem write`` (a new section) from one
of the two, chosen at random, and kills it with SIGKILL after a random delay (0.3 to 1.2x
a clean write's time), or lets it finish. The next command is chosen at random: the
person's ``git commit`` there (then ``gitmem recover`` and the commit again if it was
refused), ``gitmem status`` from the main worktree, or ``gitmem recover`` there. Checks:
both worktrees' ``git status`` clean, every acknowledged edit on ``main`` and on disk
where main is checked out, nothing a commit there undid, ``git fsck`` clean, no lock
left. A second run kills each writer at a chosen step instead (before or after the
compare-and-swap, before or after git's index follows, before the intent is cleared), in
turn, from either worktree.

Running sessions: ``gitmem mcp`` (review policy) driven by the official MCP client writes
an edit; ``gitmem review ID --accept`` is run while the connection is open (it must be
refused, main unchanged); the session writes again, then ends by closing the connection
or by SIGKILL of the server, at random; the acceptance must then land both edits.

    .venv/bin/python benchmarks/bench_linked_worktrees.py [--tries 50] [--steps 5] [--sessions 10]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import GITMEM, bench_env, git

SEED = 20261202


class Tally:
    def __init__(self, name: str) -> None:
        self.name, self.tries, self.interrupted, self.landed = name, 0, 0, 0
        self.failures: list[str] = []
        self.lost = 0

    def fail(self, why: str) -> None:
        self.failures.append(f"try {self.tries}: {why}")

    def report(self, interrupted: str = "") -> None:
        how = interrupted or f"interrupted, {self.landed} of them after the commit landed"
        print(
            f"{self.name}: {self.tries} tries ({self.interrupted} {how}), "
            f"{len(self.failures)} failures, {self.lost} acknowledged edits lost"
        )
        for why in self.failures[:10]:
            print("  ", why)


def gitmem(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([GITMEM, *args], env=env, capture_output=True, text=True, check=False)


# The writer as the console script, with a crash point armed (as tests/test_faults.py does).
PRELUDE = """
import os, sys
import gitmem.ops.worktree as w
point = os.environ.get("CRASH_AT")
def arm(name, after):
    real = getattr(w, name)
    def wrapped(*a, **k):
        if not after:
            os.kill(os.getpid(), 9)
        out = real(*a, **k)
        os.kill(os.getpid(), 9)
    setattr(w, name, wrapped)
if point:
    arm(*{"before-cas": ("cas_fast", False), "after-cas": ("cas_fast", True),
          "files-written": ("_update_index", False), "index-updated": ("_update_index", True),
          "before-clear": ("clear_intent", False)}[point])
from gitmem.cli import main
main(sys.argv[1:])
"""
POINTS = ["before-cas", "after-cas", "files-written", "index-updated", "before-clear"]


def write_cmd(where: Path, section: str, point: str | None = None) -> list[str]:
    head = [sys.executable, "-c", PRELUDE] if point else [GITMEM]
    return [*head, "-C", str(where), "write", "acme", "--old", "", "--new",
            f"## {section}\nfact {section}\n", "--section", section, "--keywords", "k",
            "--summary", f"fact {section}"]  # fmt: skip


def locks_left(*git_dirs: Path) -> list[str]:
    return [str(p) for d in git_dirs for p in d.rglob("*.lock") if "gitmem" not in p.parts]


def linked_worktree(
    tmp: Path, env: dict[str, str], tries: int, rng: random.Random, how: str
) -> None:
    tmp = tmp / how.replace(" ", "-")
    main_wt, linked = tmp / "client", tmp / "linked"
    subprocess.run([GITMEM, "init", str(main_wt)], env=env, capture_output=True, check=True)
    subprocess.run(write_cmd(main_wt, "start"), env=env, capture_output=True, check=True)
    git(main_wt, env, "switch", "-q", "-c", "work")
    git(main_wt, env, "worktree", "add", "-q", str(linked), "main")
    start = time.perf_counter()
    for i in range(3):
        subprocess.run(write_cmd(main_wt, f"warm-{i}"), env=env, capture_output=True, check=True)
    duration = (time.perf_counter() - start) / 3
    acknowledged = ["start", *(f"warm-{i}" for i in range(3))]
    tally = Tally(f"main checked out in a linked worktree, writers killed {how}")
    for i in range(tries):
        tally.tries += 1
        side = rng.choice([main_wt, linked])
        point = POINTS[i % len(POINTS)] if how == "at each step" else None
        proc = subprocess.Popen(write_cmd(side, f"s{i}", point), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env={**env, "CRASH_AT": point or ""})  # fmt: skip
        if how == "at random" and rng.random() < 0.8:
            time.sleep(rng.uniform(0.3, 1.2) * duration)
            proc.kill()
        proc.communicate()
        if proc.returncode == 0:
            acknowledged.append(f"s{i}")
        elif proc.returncode == -9:
            tally.interrupted += 1
            tally.landed += f"## s{i}\n" in git(linked, env, "show", "main:cards/acme.md")
        else:
            tally.fail(f"write exited {proc.returncode}")
        before = git(linked, env, "show", "main:cards/acme.md")
        nxt = rng.choice(["commit", "status", "recover"])
        if nxt == "commit":
            (linked / "notes.txt").write_text(f"note {i}\n")
            git(linked, env, "add", "notes.txt")
            done = subprocess.run(["git", "commit", "-q", "-m", f"note {i}"], cwd=linked,
                                  env=env, capture_output=True, check=False)  # fmt: skip
            if done.returncode:
                gitmem(env, "-C", str(linked), "recover")
                git(linked, env, "commit", "-q", "-m", f"note {i}")
        else:
            gitmem(env, "-C", str(main_wt if nxt == "status" else linked), nxt)
        after = git(linked, env, "show", "main:cards/acme.md")
        card = (linked / "cards/acme.md").read_text()
        for where in (main_wt, linked):
            if git(where, env, "status", "--porcelain"):
                tally.fail(f"{where.name} not clean after {nxt}")
        if after != before:
            tally.fail(f"the card changed on main by {nxt}")
        missing = [s for s in acknowledged if f"## {s}\n" not in after or f"## {s}\n" not in card]
        tally.lost += len(missing)
        acknowledged = [s for s in acknowledged if s not in missing]
    fsck = subprocess.run(["git", "fsck", "--no-progress"], cwd=main_wt, env=env,
                          capture_output=True, check=False)  # fmt: skip
    if fsck.returncode:
        tally.fail(f"git fsck: {fsck.stderr.decode()}")
    left = locks_left(main_wt / ".git")
    if left:
        tally.fail(f"locks left: {left}")
    tally.report()


async def one_session(
    client: Path,
    env: dict[str, str],
    i: int,
    kill: bool,
    tally: Tally,
    seen: dict[str, str],
    written: list[str],
) -> None:
    """One MCP connection writing two edits (``written``: those the server acknowledged),
    an acceptance tried between them. Ends by closing the connection, or by SIGKILL of
    the server."""
    from mcp.client import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=GITMEM, args=["-C", str(client), "mcp"], env=env, cwd=str(client)
    )
    with open(client.parent / "mcp.err", "w") as err:
        async with (
            stdio_client(params, errlog=err) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for n in range(2):
                section = f"r{i}-{n}"
                args = {"project": "acme", "old_text": "", "new_text": f"## {section}\nfact\n",
                        "index_entry": {"section_id": section, "keywords": ["k"],
                                        "summary": f"fact {section}"}}  # fmt: skip
                if not (await session.call_tool("write_memory_card", args)).is_error:
                    written.append(section)
                if n == 0:
                    try_accept(client, env, tally, seen)
            if kill:
                pgrep = ["pgrep", "-f", f"{client} mcp$"]
                out = subprocess.run(pgrep, capture_output=True, text=True, check=False).stdout
                for pid in out.split():
                    os.kill(int(pid), 9)


def try_accept(client: Path, env: dict[str, str], tally: Tally, seen: dict[str, str]) -> None:
    """``gitmem review ID --accept`` of the running session: refused, main unchanged."""
    out = git(client, env, "for-each-ref", "--format=%(refname:short)", "refs/heads/gitmem/")
    (branch,) = out.split()
    seen["sid"] = branch.removeprefix("gitmem/session/")
    main = git(client, env, "rev-parse", "main")
    refused = gitmem(env, "-C", str(client), "review", seen["sid"], "--accept")
    if refused.returncode != 4 or "still running" not in refused.stderr:
        tally.fail(f"accept while running: exit {refused.returncode} {refused.stderr.strip()}")
    if git(client, env, "rev-parse", "main") != main:
        tally.fail("main moved while the session ran")


def running_sessions(tmp: Path, env: dict[str, str], rounds: int, rng: random.Random) -> None:
    import anyio

    client = tmp / "sessions" / "client"
    subprocess.run([GITMEM, "init", str(client)], env=env, capture_output=True, check=True)
    toml = client / "gitmem.toml"
    toml.write_text(toml.read_text().replace('review = "auto"', 'review = "review"'))
    git(client, env, "commit", "-qam", "sessions wait for review")
    tally = Tally("review --accept of a running MCP session, then after it ended")
    for i in range(rounds):
        tally.tries += 1
        kill = rng.random() < 0.5
        tally.interrupted += kill
        seen: dict[str, str] = {}
        written: list[str] = []
        with contextlib.suppress(BaseExceptionGroup, OSError):  # a killed server's broken pipe
            anyio.run(one_session, client, env, i, kill, tally, seen, written)
        accepted = gitmem(env, "-C", str(client), "review", seen["sid"], "--accept")
        if accepted.returncode:
            tally.fail(f"accept after the end: {accepted.stderr.strip()}")
        card = git(client, env, "show", "main:cards/acme.md")
        tally.lost += sum(f"## {s}\n" not in card for s in written)
    if git(client, env, "status", "--porcelain"):
        tally.fail("working tree not clean")
    tally.report("ended by SIGKILL of the server, the rest by closing the connection")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--tries", type=int, default=50)
    ap.add_argument("--steps", type=int, default=5, help="tries per crash point")
    ap.add_argument("--sessions", type=int, default=10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = bench_env(Path(tmp) / "home")
        linked_worktree(Path(tmp), env, args.tries, random.Random(SEED), "at random")
        steps = args.steps * len(POINTS)
        linked_worktree(Path(tmp), env, steps, random.Random(SEED), "at each step")
        running_sessions(Path(tmp), env, args.sessions, random.Random(SEED))


if __name__ == "__main__":
    main()
