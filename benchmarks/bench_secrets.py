"""What scanning for secrets adds to an edit, and the scanner's figures on the corpus.

Edits with ``gitmem.memory.edit.write_card`` on one client repo, interleaved: each round one
edit as gitmem makes it (scanning on) and one with ``secrets.check`` replaced by a
no-op (the baseline, same run, same repo). Then the scanner alone on the texts of
those edits, and detection / false positives on ``secrets_corpus.py``. Prints one JSON
document; the exit status is 0 whatever the figures are::

    .venv/bin/python benchmarks/bench_secrets.py            # 300 rounds
    .venv/bin/python benchmarks/bench_secrets.py --rounds 50
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from compare_secret_scanners import measure

from gitmem.memory import edit, secrets
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.setup.init import init_repo

SECTION = """## Budget
- Q3 budget raised to $40,000 after the 2026-11-28 call (invoice 4471)
- owner: Dana; backup: Bob (from 2027-01-15)
- tracked in https://tracker.example.com/acme/budget?view=q3
- last deploy 3f9c2e1, pinned to v2.14.3
"""


def _edit_text(i: int) -> str:
    # "key" and "token" make every line pass the prefilter: the detectors run on each edit
    return (
        f"- round {i}: spend {i * 17} of 40k, ticket 9b2f{i:04x}-1c2d-4e5f-8a9b-{i:012x}\n"
        f"- key contact for the API token budget: Dana, fixed in {i:040x}"
    )


def _first_scan_ms() -> float:
    """A fresh process's first scan of a line worth scanning: imports detect-secrets."""
    code = (
        "import time; from gitmem import secrets; t = time.perf_counter(); "
        "secrets.scan_texts([('t', 'the key account')]); print(time.perf_counter() - t)"
    )
    runs = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(5)
    ]
    return statistics.median(runs) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=300)
    args = ap.parse_args()
    real_check = secrets.check
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "client"
        init_repo(root)
        with MemoryRepo(root) as repo:
            for n in range(2):
                entry = IndexEntry.make("budget", ["budget", "q3"], "Q3 budget is 40k")
                edit.write_card(repo, f"card{n}", "", SECTION, entry)
            on: list[float] = []
            off: list[float] = []
            texts: list[list[tuple[str, str]]] = []
            for i in range(args.rounds):
                pair = [(True, "card0", on), (False, "card1", off)]
                for scanning, card, out in pair if i % 2 else pair[::-1]:  # alternate the order
                    new = f"- owner: Dana; backup: Bob (from 2027-01-15)\n{_edit_text(i)}"
                    old = "- owner: Dana; backup: Bob (from 2027-01-15)"
                    entry = IndexEntry.make("budget", ["budget", "spend"], f"spend at round {i}")
                    secrets.check = real_check if scanning else (lambda *_a, **_k: None)
                    t = time.perf_counter()
                    edit.write_card(repo, card, old, new, entry)
                    out.append(time.perf_counter() - t)
                    secrets.check = real_check
                    if scanning:
                        texts.append(edit.edit_texts(new, entry))
    alone = []
    for what in texts:
        start = time.perf_counter()
        secrets.check(what)
        alone.append(time.perf_counter() - start)
    sha = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent,
        check=False,
    ).stdout.strip()
    med_on, med_off = statistics.median(on) * 1000, statistics.median(off) * 1000
    report = {
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "gitmem": sha,
        "machine": f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}",
        "rounds": args.rounds,
        "edit_median_ms_scanning": round(med_on, 3),
        "edit_median_ms_without_scanning": round(med_off, 3),
        "added_ms": round(med_on - med_off, 3),
        "scan_alone_median_ms": round(statistics.median(alone) * 1000, 4),
        "scan_alone_p95_ms": round(sorted(alone)[int(len(alone) * 0.95)] * 1000, 4),
        "first_scan_in_a_process_ms": round(_first_scan_ms(), 1),
        "goal": "added_ms <= 2",
        "met": med_on - med_off <= 2.0,
        "corpus": measure("gitmem"),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
