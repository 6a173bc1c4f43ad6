"""Fault injection for ``gitmem redact``: interrupted at random moments with real signals.

One memory repo is made (gitmem's own edits, a session's among them, before and after a
person's commits that carry an AWS key, a GitHub token and a Stripe key in a card, a
card whose name is a Slack token, and an untracked file outside memory), and redacted
once uninterrupted, for the expected result. Each try takes a fresh copy, starts
``gitmem redact`` in its own process group, sends SIGTERM or SIGKILL to the group after
a random delay within that run's time, and checks:

- at once: a HEAD already redacted over a secret still on disk or staged has its
  follow pending (the pre-commit hook refuses a commit, the next command finishes it);
- ``gitmem status``: it names a redact left unfinished, and after it HEAD redacted means
  no secret on disk or staged;
- after ``gitmem recover``: rolled back (every ref, card and file as before) or finished
  (every ref as the uninterrupted redact left it, no secret in the rewritten history,
  the working tree or git's index); the tree clean; ``gitmem log`` naming each edit's
  actor and session as before; ``gitmem reindex`` agreeing; ``git fsck`` clean.

"data lost" counts tries where a card, persona or the untracked file is neither as
before nor as redacted. Seeded::

    .venv/bin/python benchmarks/fault_redact.py --tries 60 --seed 22
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

AWS = "AKIAQWERTYUIOPASDFGH"
GH = "ghp_" + "k3j5h7g9f1d3s5a7p9o1i3u5y7t9r1e3w5q7"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dcQWERTYzxcvbn"
SLACK = "xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx"
SECRETS = (AWS, GH, STRIPE, SLACK)
SID = "20261201-090000-cd34"
REWRITTEN = ("refs/heads/", "refs/gitmem/archive/", "refs/gitmem/partial/", "refs/gitmem/rejected/")
UNTRACKED = "notes.txt"

# The CLI as the console script runs it.
CLI = "import sys\nfrom gitmem.cli import main\nmain(sys.argv[1:])\n"


def git(cwd: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    if check and proc.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.decode()}")
    return proc.stdout.decode("utf-8", "replace")


def gitmem(cwd: Path, *args: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", prelude + CLI, "-C", str(cwd), *args],
        capture_output=True,
        text=True,
        check=False,
    )


def make_world(where: Path) -> Path:
    """The repo every try starts from (in this process, through gitmem's API)."""
    from gitmem.features.edit import write_card
    from gitmem.memory.repo import MemoryRepo
    from gitmem.memory.trailers import IndexEntry
    from gitmem.review import session_branches as sessions
    from gitmem.setup.init import init_repo

    root = where / "world"
    init_repo(root)
    with MemoryRepo(root) as repo:
        write_card(repo, "acme", "", "## Budget\n- 30k\n", IndexEntry.make("budget", ["b"], "30k"))
        card = root / "cards" / "acme.md"
        # the keys apart from the lines the agent edits: an edit beside a secret is refused
        card.write_text(
            card.read_text() + f"\n- staging key {AWS}\n- token {GH}\n- rotate monthly\n"
        )
        git(root, "commit", "-qam", f"person: keys\n\nsee {STRIPE}", "--no-verify")
        named = root / "cards" / f"{SLACK}.md"
        named.write_text("# Bot\n\n## Posts\n- daily\n")
        git(root, "add", ".")
        msg = f"{SLACK}: posts\n\nGitmem-Card: {SLACK}\nGitmem-Section: posts\nGitmem-Keywords: p\n"
        git(root, "commit", "-qm", msg + "Gitmem-Summary: posts daily\n", "--no-verify")
        s = sessions.start_session(repo, SID)
        for old, new, summary in (("30k", "40k", "40k"), ("", "## Team\n- Ann\n", "Ann")):
            entry = IndexEntry.make("budget" if old else "team", ["k"], summary)
            write_card(repo, "acme", old, new, entry, session=SID, actor="agent", branch=s.branch)
        sessions.finish_session(repo, s, "auto")
        write_card(repo, "beta", "", "## Goals\n- ship\n", IndexEntry.make("goals", ["g"], "ship"))
    (root / UNTRACKED).write_text("a person's notes, never committed\n")
    return root


@dataclass(frozen=True)
class State:
    refs: dict[str, str]
    files: dict[str, str]  # memory files at HEAD (and in the working tree, when clean)
    log: list[tuple[str, str]]  # (actor, session) per entry of `gitmem log`


def refs_of(repo: Path) -> dict[str, str]:
    out = git(repo, "for-each-ref", "--format=%(objectname) %(refname)", *REWRITTEN)
    return {ref: sha for sha, _, ref in (ln.partition(" ") for ln in out.splitlines())}


def files_of(repo: Path) -> dict[str, str]:
    out = git(repo, "ls-files", "-z", "--", "cards", "persona.md", "gitmem.toml", ".gitattributes")
    return {p: (repo / p).read_text() for p in out.split("\0") if p and (repo / p).is_file()}


def log_of(repo: Path) -> list[tuple[str, str]]:
    r = gitmem(repo, "log", "-n", "0", "--json")
    return [(e["actor"], e["session"] or "-") for e in json.loads(r.stdout)]


def state(repo: Path) -> State:
    return State(refs_of(repo), files_of(repo), log_of(repo))


def on_disk_or_staged(repo: Path) -> bool:
    """Whether a secret is in a memory file or name in the working tree or git's index."""
    names = git(repo, "ls-files", "-z", "--stage").split("\0")
    text = "\n".join(names)
    for line in names:
        if line:
            text += git(repo, "cat-file", "-p", line.split()[1])
    for f in (repo / "cards").rglob("*"):
        text += f.name + (f.read_text() if f.is_file() else "")
    return any(s in text for s in SECRETS)


def history_holds_secret(repo: Path) -> bool:
    out = git(repo, "log", "-p", "--name-only", "--format=%B", *refs_of(repo))
    return any(s in out for s in SECRETS)


def check(repo: Path, before: State, after: State) -> tuple[list[str], bool, str]:
    """Every invariant after a kill: (problems, data lost, "rolled back"/"finished")."""
    problems: list[str] = []
    head = git(repo, "rev-parse", "HEAD").strip()
    pending = (repo / ".git" / "gitmem" / "follow").exists()
    if head == after.refs["refs/heads/main"] and not pending and on_disk_or_staged(repo):
        problems.append("HEAD redacted over a secret on disk, no follow pending")
    journal = (repo / ".git" / "gitmem" / "redact.json").exists()
    st = gitmem(repo, "status")
    if journal and "redact was interrupted" not in st.stdout:
        problems.append("status does not name the interrupted redact")
    head = git(repo, "rev-parse", "HEAD").strip()
    if head == after.refs["refs/heads/main"] and on_disk_or_staged(repo):
        problems.append("after status: HEAD redacted, a secret on disk or staged")
    rec = gitmem(repo, "recover")
    if rec.returncode:
        problems.append(f"recover exited {rec.returncode}: {rec.stderr.strip()}")
    left = [p for p in ("redact.json", "redact-work") if (repo / ".git" / "gitmem" / p).exists()]
    if left:
        problems.append(f"left behind: {left}")
    now = state(repo)
    outcome = (
        "rolled back" if now.refs == before.refs else "finished" if now.refs == after.refs else ""
    )
    if not outcome:
        problems.append("refs neither as before nor as redacted")
    expect = before if outcome == "rolled back" else after
    lost = now.files != expect.files or not (repo / UNTRACKED).is_file()
    if lost:
        problems.append("a memory file is neither as before nor as redacted")
    if git(repo, "status", "--porcelain", "--untracked-files=all").strip() != f"?? {UNTRACKED}":
        problems.append("working tree not clean against HEAD")
    if outcome == "finished" and (history_holds_secret(repo) or on_disk_or_staged(repo)):
        problems.append("finished, yet a secret is left")
    if now.log != before.log:
        problems.append("gitmem log attribution changed")
    reindex = json.loads(gitmem(repo, "reindex", "--json").stdout or "{}")
    if reindex.get("differences") != []:
        problems.append("reindex disagrees with the index")
    if subprocess.run(["git", "fsck", "--no-progress"], cwd=repo, capture_output=True).returncode:
        problems.append("git fsck failed")
    return problems, lost, outcome


def expected(world: Path, scratch: Path, runs: int = 3) -> tuple[State, State, float]:
    """The state before, after an uninterrupted redact, and the fastest of ``runs`` (s):
    a delay below it falls within a try's run whatever the machine's load."""
    took = []
    for i in range(runs):
        copy = shutil.copytree(world, scratch / f"expected-{i}", symlinks=True)
        start = time.perf_counter()
        r = gitmem(copy, "redact")
        took.append(time.perf_counter() - start)
        if r.returncode:
            raise SystemExit(f"redact failed uninterrupted: {r.stderr}")
    return state(world), state(scratch / "expected-0"), min(took)


def interrupt(repo: Path, sig: signal.Signals, delay: float) -> int:
    """``gitmem redact`` in its own process group, ``sig`` to the group after ``delay``."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, "-C", str(repo), "redact"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    time.sleep(delay)
    with contextlib.suppress(ProcessLookupError):  # it finished first
        os.killpg(proc.pid, sig)
    return proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tries", type=int, default=60)
    ap.add_argument("--seed", type=int, default=22)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="gitmem-fault-redact-") as tmp:
        scratch = Path(tmp)
        home = scratch / "home"
        home.mkdir()
        os.environ.update(
            HOME=str(home),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_AUTHOR_NAME="Fault",
            GIT_AUTHOR_EMAIL="fault@example.com",
            GIT_COMMITTER_NAME="Fault",
            GIT_COMMITTER_EMAIL="fault@example.com",
            GIT_AUTHOR_DATE="1764547200 +0000",
            GIT_COMMITTER_DATE="1764547200 +0000",
        )
        world = make_world(scratch)
        before, after, took = expected(world, scratch)
        tally = {"rolled back": 0, "finished": 0, "": 0}
        failures = lost = interrupted = killed_finished = 0
        for n in range(args.tries):
            repo = shutil.copytree(world, scratch / f"try-{n}", symlinks=True)
            sig = rng.choice([signal.SIGTERM, signal.SIGKILL])
            code = interrupt(repo, sig, rng.uniform(0, took))
            interrupted += code < 0
            problems, lost_here, outcome = check(repo, before, after)
            tally[outcome] += 1
            killed_finished += code < 0 and outcome == "finished"
            failures += bool(problems)
            lost += lost_here
            if problems:
                print(f"try {n} ({sig.name}, exit {code}): {'; '.join(problems)}")
            shutil.rmtree(repo)
        print(
            f"redact interrupted at random (seed {args.seed}): {args.tries} tries, "
            f"{interrupted} killed before they finished ({tally['rolled back']} rolled back, "
            f"{killed_finished} finished by recover); {failures} failures, {lost} data lost"
        )


if __name__ == "__main__":
    main()
