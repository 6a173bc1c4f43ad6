"""Budget: the secret scan costs an ordinary edit <= 20 ms (issue 24).

Each ordinary edit (a few lines of a note from the labelled corpus's negatives, with the
words that sound like keys: "paper", "key", "author", "passed", and its index entry) is
scanned in a fresh process, as ``gitmem write`` scans it: importing ``secrets``,
``secrets.check`` and ``secrets.check_change`` (the lines the edit leaves in a 200-line
card) are timed in-process, the detect-secrets import they may start included.
Then each edit is written with ``gitmem write`` (the CLI, wall time; budget 300 ms, issue
21) into a small repo. ``--src`` measures another checkout's ``gitmem`` package too (e.g.
main), in the same run. Medians::

    .venv/bin/python benchmarks/bench_secret_scan.py [--edits 40] [--src OTHER_CHECKOUT]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

import common
import secrets_corpus as corpus

PROSE = [
    "- the paper's author passed the draft to Dana on Friday",
    "- key point from the call: the launch moves to March",
    "- API key rotation is monthly; ops own it",
    "- Sam passed the design review; the author list is final",
]
SCAN = """
import json, sys, time
import dataclasses, functools, re, typing, gitmem.errors  # every gitmem command loads them
texts, before = json.loads(sys.stdin.read())
start = time.perf_counter()
from gitmem.memory import secrets
imported = time.perf_counter()
secrets.check([tuple(t) for t in texts])
if hasattr(secrets, "check_change"):  # the card's changed lines (issue 22), where there
    secrets.check_change(before, before + dict(texts)["new_text"], "cards/acme.md")
end = time.perf_counter()
print(json.dumps([end - imported, imported - start, "detect_secrets" in sys.modules]))
"""


def edits(n: int) -> list[list[tuple[str, str]]]:
    rng = random.Random(24)
    lines = [ln for _, ln in corpus.negatives(n_per_form=5, seed=24) if "password:" not in ln]
    out = []
    for i in range(n):
        note = [*rng.sample(lines, 3), f"{rng.choice(PROSE)} (note {i})"]
        entry = [("summary", f"note {i}: {note[-1][2:40]}"), ("keywords", "client, notes")]
        out.append([("new_text", "\n".join(note)), *entry])
    return out


def card(lines: int) -> str:
    """A card of ``lines`` ordinary note lines, as the edit finds it."""
    rng = random.Random(22)
    notes = [ln for _, ln in corpus.negatives(n_per_form=5, seed=22) if "password:" not in ln]
    return "# acme\n\n## Notes\n\n" + "".join(f"{rng.choice(notes)}\n" for _ in range(lines))


def scan(src: Path, texts: list[tuple[str, str]]) -> tuple[float, float, bool]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as users run
    env["PYTHONPATH"] = str(src)
    proc = subprocess.run(
        [sys.executable, "-c", SCAN],
        input=json.dumps([texts, card(200)]),
        cwd=src,  # `python -c` imports from its working directory first
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    check, load, loaded = json.loads(proc.stdout)
    return float(check), float(load), bool(loaded)


def write(src: Path, root: Path, env: dict[str, str], texts: list[tuple[str, str]]) -> float:
    """``gitmem write`` of ``texts`` appended to the card: wall seconds."""
    new = dict(texts)
    last = (root / "cards" / "acme.md").read_text().rstrip("\n").rsplit("\n", 1)[-1]
    args = ["--old", last, "--new", f"{last}\n{new['new_text']}", "--section", "notes"]
    args += ["--keywords", new["keywords"], "--summary", new["summary"]]
    return common.run([common.GITMEM, "write", "acme", *args], root, env | {"PYTHONPATH": str(src)})


def cli(srcs: dict[str, Path], all_texts: list[list[tuple[str, str]]]) -> dict[str, float]:
    with common.scratch() as tmp:
        work = Path(tmp)
        env = common.bench_env(work / "home")
        roots = {name: work / f"repo{i}" for i, name in enumerate(srcs)}
        first = ["--old", "", "--new", "## Notes\n\n- first\n", "--section", "notes"]
        first += ["--keywords", "notes", "--summary", "first"]
        for root in roots.values():
            common.run([common.GITMEM, "init", str(root)], work, env)
            common.run([common.GITMEM, "write", "acme", *first], root, env)
        took: dict[str, list[float]] = {name: [] for name in srcs}
        for texts in all_texts:
            for name, src in srcs.items():
                took[name].append(write(src, roots[name], env, texts))
    return {name: statistics.median(t) for name, t in took.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edits", type=int, default=40)
    ap.add_argument("--src", type=Path, help="another checkout to measure beside this one")
    args = ap.parse_args()
    common.machine()
    here = Path(__file__).resolve().parents[1]
    srcs = {"this checkout": here} | ({str(args.src): args.src.resolve()} if args.src else {})
    got: dict[str, list[tuple[float, float, bool]]] = {name: [] for name in srcs}
    all_texts = edits(args.edits)
    for texts in all_texts:  # interleaved: the machine's load falls on both alike
        for name, src in srcs.items():
            got[name].append(scan(src, texts))
    for name, runs in got.items():
        check = statistics.median(c for c, _, _ in runs)
        both = statistics.median(c + m for c, m, _ in runs)
        loaded = sum(1 for _, _, imported in runs if imported)
        common.row(
            f"scan of an ordinary edit ({name})",
            f"{check * 1000:.1f} ms",
            "<= 20 ms",
            check <= 0.02,
        )
        common.row(
            "  with importing gitmem.memory.secrets",
            f"{both * 1000:.1f} ms",
            "<= 20 ms",
            both <= 0.02,
        )
        common.row("  edits that imported detect-secrets", f"{loaded} of {len(runs)}", "")
    for name, wall in cli(srcs, all_texts).items():
        common.row(
            f"gitmem write of the same edits ({name})", common.ms(wall), "<= 300 ms", wall <= 0.3
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
