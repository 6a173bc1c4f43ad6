"""Ctrl-C at a random moment of a command: how each try ended (docs/reliability.md).

Each try starts ``gitmem index`` (or the command given) on a small repo and sends it a
real SIGINT after a seeded random delay in [0, --max] seconds. An ending is counted as
held when it is one line and exit 130, the command's own end (exit 0), or a kill by
SIGINT before the interpreter had set up its handler (no output). A traceback is a
failure, and counted apart when no frame of it is gitmem's: the interpreter's own start-up
(``site``, an editable install's ``.pth`` finder) and the console script's first import,
before gitmem's first line runs, which no code of gitmem can reach::

    .venv/bin/python benchmarks/fault_interrupt.py [--tries 100] [--seed 14] [--max 0.3]
"""

from __future__ import annotations

import argparse
import collections
import random
import signal
import subprocess
import time
from pathlib import Path

import common


def _ending(proc: subprocess.Popen[bytes], err: bytes) -> str:
    if proc.returncode == 130 and err == b"gitmem: interrupted\n":
        return "one line, exit 130"
    if proc.returncode == 0 and not err:
        return "finished first (exit 0)"
    if proc.returncode == -signal.SIGINT and not err:
        return "killed before Python's handler (no output)"
    if b"Traceback" in err or b"KeyboardInterrupt" in err:
        ours = b"/gitmem/" in err  # a frame in the package's own files
        return "traceback in gitmem" if ours else "traceback before gitmem's first line"
    return f"other: exit {proc.returncode}: {err[-200:]!r}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tries", type=int, default=100)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--max", type=float, default=0.3, help="latest moment, in seconds")
    ap.add_argument("command", nargs="*", default=["index"])
    args = ap.parse_args()
    common.machine()
    rng = random.Random(args.seed)
    seen: collections.Counter[str] = collections.Counter()
    with common.scratch() as tmp:
        work = Path(tmp)
        env = common.bench_env(work / "home")
        root = work / "small"
        common.run([common.GITMEM, "init", str(root)], work, env)
        for _ in range(args.tries):
            proc = subprocess.Popen(
                [common.GITMEM, *args.command],
                cwd=root,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            time.sleep(rng.uniform(0, args.max))
            proc.send_signal(signal.SIGINT)
            _out, err = proc.communicate(timeout=60)
            ending = _ending(proc, err)
            if not seen[ending] and ending.startswith("traceback"):
                print(f"first {ending}:\n" + err.decode("utf-8", "replace")[-400:])
            seen[ending] += 1
    for what, n in seen.most_common():
        print(f"{n:4d}  {what}")
    failed = sum(n for what, n in seen.items() if what.startswith(("traceback in gitmem", "other")))
    print(f"tries {args.tries}, failures in gitmem {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
