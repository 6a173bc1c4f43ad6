"""Fault injection for issue 22, cases 7 and 8: a remote's settings, a sync killed, and
secrets assembled from harmless edits. Seeded; prints one row per scenario.

Settings: another clone pushes a random weakening of gitmem.toml (review "auto", patterns
added to ``[secrets] allow``, larger limits; sometimes with a card edit, sometimes while
this machine has its own edit, so the sync merges); this machine's ``gitmem sync`` is
killed with SIGKILL at a random moment (or left to finish). Right after, and after a
finishing ``gitmem sync``, a failure is any of: a write holding an AWS key lands, review
is not the policy in force, an allow pattern of the remote's applies, this machine's
own card edit is gone (data lost). Then ``gitmem trust`` and a local edit put the strict
settings back for the next try.

Secrets: a detector's secret from the labelled corpus, cut at a random point into a
harmless first edit and a second edit that completes it, through ``gitmem write`` or the
memory tool's ``str_replace``; a failure is a completed secret on main::

    .venv/bin/python benchmarks/fault_local_safety.py [--tries 50] [--secrets 60] [--seed 22]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import common
import secrets_corpus as corpus

STRICT = 'review = "review"'
AWS = "AKIAQWERTYUIOPASDFGHJ"


def gm(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([common.GITMEM, "-C", str(root), *args], env=env, text=True,
                          capture_output=True, check=False)  # fmt: skip


def weaken(rng: random.Random, toml: str) -> str:
    """``toml`` with one to three of its protections weakened."""
    picks = rng.sample(["review", "allow", "limits"], rng.randint(1, 3))
    if "review" in picks:
        toml = toml.replace(STRICT, 'review = "auto"')
    if "allow" in picks:
        pattern = rng.choice([".*", "AKIA", "[A-Z0-9]{16}", "x|.*"])
        toml += f'\n[secrets]\nallow = ["{pattern}"]\n'
    if "limits" in picks:
        toml = toml.replace("max_card_bytes = 1048576", "max_card_bytes = 99999999")
    return toml


def broken(root: Path, env: dict[str, str], mine: str) -> list[str]:
    """What is wrong on this machine now (empty: nothing)."""
    out = []
    res = gm(root, env, "write", "acme", "--old", "", "--new", f"## Key\naws {AWS}\n",
             "--section", "key", "--keywords", "k", "--summary", "k")  # fmt: skip
    if res.returncode == 0:
        out.append("an AWS key was committed")
    status = gm(root, env, "status", "--json")
    if status.returncode:
        return [*out, f"status failed: {status.stderr.strip()}"]
    held = {s["key"]: s["value"] for s in json.loads(status.stdout)["settings"]}
    if held["memory.review"] != "review":
        out.append("review is off")
    if held["secrets.allow"] or held["limits.max_card_bytes"] != 1048576:
        out.append("a remote's setting applies")
    card = root / "cards" / "beta.md"
    if mine not in card.read_text() and mine not in common.git(
        root, env, "show", "main:cards/beta.md"
    ):
        out.append("this machine's edit is gone")
    return out


def settings_tries(work: Path, env: dict[str, str], tries: int, rng: random.Random) -> None:
    bare, here, other = work / "remote.git", work / "here", work / "other"
    common.git(work, env, "init", "-q", "--bare", "-b", "main", str(bare))
    common.run([common.GITMEM, "init", str(here)], work, env)
    toml = (here / "gitmem.toml").read_text().replace('review = "auto"', STRICT)
    (here / "gitmem.toml").write_text(toml)
    common.git(here, env, "commit", "-qam", "review every session")
    for card in ("acme", "beta"):
        common.run([common.GITMEM, "write", card, "--old", "", "--new", "## Notes\n- start\n",
                    "--section", "notes", "--keywords", "n", "--summary", "n"], here, env)  # fmt: skip
    common.git(here, env, "remote", "add", "origin", str(bare))
    common.run([common.GITMEM, "sync"], here, env)
    common.git(work, env, "clone", "-q", str(bare), str(other))
    took = time.perf_counter()
    common.run([common.GITMEM, "sync"], here, env)
    span = (time.perf_counter() - took) * 3  # a sync that receives and merges takes longer
    failures = lost = killed = 0
    for i in range(tries):
        common.git(other, env, "pull", "-q", "--ff-only", "origin", "main")
        (other / "gitmem.toml").write_text(weaken(rng, (other / "gitmem.toml").read_text()))
        if rng.random() < 0.5:
            with (other / "cards" / "acme.md").open("a") as fh:
                fh.write(f"- from the other clone {i}\n")
        common.git(other, env, "commit", "-qam", f"weaken {i}", "--no-verify")
        common.git(other, env, "push", "-q", "origin", "main")
        mine = f"- this machine's own note {i}"
        common.run([common.GITMEM, "write", "beta", "--old", "", "--new", mine,
                    "--section", "notes", "--keywords", "n", "--summary", "n"], here, env)  # fmt: skip
        proc = subprocess.Popen([common.GITMEM, "-C", str(here), "sync"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            proc.wait(rng.uniform(0, span))
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            killed += 1
        gm(here, env, "recover")
        wrong = broken(here, env, mine)
        done = gm(here, env, "sync")
        if done.returncode:
            wrong.append(f"the finishing sync failed: {done.stderr.strip()}")
        wrong += broken(here, env, mine)
        failures += bool(wrong)
        lost += any("gone" in w for w in wrong)
        if wrong:
            print(f"  try {i}: {'; '.join(sorted(set(wrong)))}", file=sys.stderr)
        gm(here, env, "trust")  # back to the strict settings for the next try
        (here / "gitmem.toml").write_text(toml)
        common.git(here, env, "commit", "-qam", "strict again", "--allow-empty")
        gm(here, env, "sync")
        common.git(other, env, "fetch", "-q", "origin")
        common.git(other, env, "reset", "-q", "--hard", "origin/main")
    common.row(f"weakened gitmem.toml, sync SIGKILLed ({killed} of {tries} killed)",
               f"{failures} failed, {lost} lost", "")  # fmt: skip


def secret_tries(work: Path, env: dict[str, str], tries: int, rng: random.Random) -> None:
    root = work / "secrets"
    common.run([common.GITMEM, "init", str(root)], work, env)
    from gitmem.memory import secrets

    # the lines the scanner refuses when written whole: what two edits must not get past
    lines = [ln for _, ln in corpus.positives(n_per_form=10, seed=22)
             if "\n" not in ln and secrets.scan_texts([("line", ln)])]  # fmt: skip
    tool = (
        "import json, sys\nfrom gitmem.bridges.memory_tool import GitMemoryTool\n"
        "t = GitMemoryTool(sys.argv[1], branch='main')\n"
        "out = []\n"
        "for cmd in json.loads(sys.stdin.read()):\n"
        "    try: out.append(t.call(cmd))\n    except Exception as e: out.append(str(e))\n"
        "print(json.dumps(out))\n"
    )
    assembled = first_caught = other = 0
    for i in range(tries):
        line = rng.choice(lines)
        cut = rng.randint(max(1, len(line) // 3), len(line) - 2)
        head, tail = line[:cut], line[cut:]
        card, old = f"c{i}", f"{head[-4:]} end"
        first = f"## Notes\n{head} end\n"
        if rng.random() < 0.5:
            res = gm(root, env, "write", card, "--old", "", "--new", first, "--section", "notes",
                     "--keywords", "n", "--summary", "n")  # fmt: skip
            if res.returncode:
                first_caught += 1
                continue
            res = gm(root, env, "write", card, "--old", old, "--new", f"{head[-4:]}{tail} end",
                     "--section", "notes", "--keywords", "n", "--summary", "n")  # fmt: skip
            second = res.stderr
        else:
            path = f"/memories/{card}.md"
            cmds = [{"command": "create", "path": path, "file_text": f"# {card}\n\n{first}"},
                    {"command": "str_replace", "path": path, "old_str": old,
                     "new_str": f"{head[-4:]}{tail} end"}]  # fmt: skip
            out = subprocess.run([sys.executable, "-c", tool, str(root)], input=json.dumps(cmds),
                                 env=env, text=True, capture_output=True, check=True).stdout  # fmt: skip
            results = json.loads(out)
            if results[0].startswith("refused"):
                first_caught += 1
                continue
            second = results[1]
        shown = subprocess.run(["git", "-C", str(root), "show", f"main:cards/{card}.md"],
                               env=env, text=True, capture_output=True).stdout  # fmt: skip
        assembled += line in shown
        other += line not in shown and "refused: a secret" not in second
    common.row(f"secret cut in two edits ({tries} tries, {first_caught} refused at the first, "
               f"{other} failed otherwise)", f"{assembled} committed", "")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tries", type=int, default=50)
    ap.add_argument("--secrets", type=int, default=60)
    ap.add_argument("--seed", type=int, default=22)
    args = ap.parse_args()
    common.machine()
    rng = random.Random(args.seed)
    with common.scratch() as tmp:
        env = common.bench_env(Path(tmp) / "home")
        secret_tries(Path(tmp), env, args.secrets, rng)
        settings_tries(Path(tmp), env, args.tries, rng)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
