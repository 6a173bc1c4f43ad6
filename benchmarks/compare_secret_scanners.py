"""Compare secret-scanning libraries on the corpus of ``secrets_corpus.py``.

Run it with the interpreter of an environment where one candidate is installed
(detect-secrets and its fork bc-detect-secrets install the same module, so each
needs its own environment)::

    python benchmarks/compare_secret_scanners.py detect-secrets
    python benchmarks/compare_secret_scanners.py credsweeper

Prints one JSON document: detection per kind, false positives per kind of note,
and the median cost of scanning one edit-sized text (8 lines). ``gitmem`` is a
candidate too: the library as gitmem configures it (``gitmem.memory.secrets``).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from secrets_corpus import negatives, positives

Scanner = Callable[[str], bool]  # text -> flagged?


def detect_secrets_scanner() -> Scanner:
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    ctx = default_settings()
    ctx.__enter__()  # every plugin the library ships, its default filters

    def scan(text: str) -> bool:
        assert ctx  # held: closing the context would restore the settings
        return any(any(True for _ in scan_line(line)) for line in text.split("\n"))

    return scan


def detect_secrets_file_scanner() -> Scanner:
    """The library as ``detect-secrets scan`` runs it: every plugin, default filters, a
    file at a time (``scan_line`` is its eager ad-hoc mode, which flags nearly every word)."""
    import os
    import tempfile

    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import default_settings

    ctx = default_settings()
    ctx.__enter__()
    fd, path = tempfile.mkstemp(suffix=".md")
    os.close(fd)

    def scan(text: str) -> bool:
        assert ctx
        Path(path).write_text(text + "\n")
        return any(True for _ in scan_file(path))

    return scan


def credsweeper_scanner() -> Scanner:
    from credsweeper.app import CredSweeper
    from credsweeper.file_handler.string_content_provider import StringContentProvider

    app = CredSweeper()

    def scan(text: str) -> bool:
        provider = StringContentProvider(text.split("\n"))
        return bool(app.file_scan(provider))

    return scan


def gitmem_scanner() -> Scanner:
    from gitmem.memory.secrets import Scanner as GitmemScanner

    s = GitmemScanner()
    return lambda text: bool(s.scan(text))


CANDIDATES = {
    "detect-secrets": detect_secrets_scanner,
    "detect-secrets-file": detect_secrets_file_scanner,
    "bc-detect-secrets": detect_secrets_scanner,
    "bc-detect-secrets-file": detect_secrets_file_scanner,
    "credsweeper": credsweeper_scanner,
    "gitmem": gitmem_scanner,
}


def measure(name: str) -> dict[str, object]:
    scan = CANDIDATES[name]()
    found: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    missed: list[str] = []
    for kind, line in positives():
        found[kind][1] += 1
        if scan(line):
            found[kind][0] += 1
        else:
            missed.append(f"{kind}: {line[:60]}")
    flagged: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    false_pos: list[str] = []
    for kind, line in negatives():
        flagged[kind][1] += 1
        if scan(line):
            flagged[kind][0] += 1
            false_pos.append(line[:80])
    notes = [line for _, line in negatives()]
    edit = "\n".join(notes[i % len(notes)] for i in range(8))
    times = []
    for _ in range(200):
        t = time.perf_counter()
        scan(edit)
        times.append(time.perf_counter() - t)
    det = sum(v[0] for v in found.values())
    tot = sum(v[1] for v in found.values())
    fp = sum(v[0] for v in flagged.values())
    ntot = sum(v[1] for v in flagged.values())
    return {
        "scanner": name,
        "detected": f"{det}/{tot}",
        "false_positives": f"{fp}/{ntot}",
        "per_kind": {k: f"{v[0]}/{v[1]}" for k, v in found.items()},
        "false_positives_per_kind": {k: f"{v[0]}/{v[1]}" for k, v in flagged.items()},
        "edit_scan_median_ms": round(statistics.median(times) * 1000, 3),
        "missed_examples": missed[:12],
        "false_positive_examples": false_pos[:12],
    }


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1] if len(sys.argv) > 1 else "gitmem"), indent=2))
