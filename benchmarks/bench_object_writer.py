"""Does an edit need gitmem's own loose-object writer? The edit budget (issue 21), with
objects written three ways in the same run: through long-running ``git hash-object -w
--stdin-paths`` processes (what gitmem does), through one ``git hash-object -w --stdin``
per object, and by an in-process loose-object writer (what it did), against plain git::

    .venv/bin/python benchmarks/bench_object_writer.py                  # 10k and 100k commits
    .venv/bin/python benchmarks/bench_object_writer.py --commits 500 --edits 5 --runs 3

Budgets: an in-process edit (``write_card`` on the checked-out main) <= 1x ``git add`` +
``git commit`` of the same change; ``gitmem write`` (the CLI) <= 300 ms. Medians.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
import zlib
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem.git.runner import Sha

if TYPE_CHECKING:
    from gitmem.git.objects import ObjectStore

# The CLI as the console script runs it; with GITMEM_LOOSE=1 the in-process writer below.
CLI = """
import os, sys
if os.environ.get("GITMEM_LOOSE"):
    sys.path.insert(0, {here!r})
    import bench_object_writer, gitmem.git.objects as o
    o.ObjectStore.write = bench_object_writer.loose_write
from gitmem.cli import main
main(sys.argv[1:])
"""


def loose_write(store: ObjectStore, kind: str, data: bytes) -> Sha:
    """The bytes ``git hash-object -w`` stores, written as a loose object in-process."""
    raw = f"{kind} {len(data)}\0".encode() + data
    algo = hashlib.sha256 if store.sha_bytes == 32 else hashlib.sha1
    digest = algo(raw).hexdigest()
    folder = store.common_dir / "objects" / digest[:2]
    path = folder / digest[2:]
    if not path.exists():
        folder.mkdir(exist_ok=True)
        tmp = folder / f"tmp_obj_{os.getpid()}"
        tmp.write_bytes(zlib.compress(raw, 1))
        os.replace(tmp, path)
    return Sha(digest)


def per_object_write(store: ObjectStore, kind: str, data: bytes) -> Sha:
    """The object written by a ``git hash-object -w --stdin`` of its own."""
    out = store.git.run("hash-object", "-w", "-t", kind, "--stdin", input=data).stdout
    return Sha(out.decode().strip())


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def bench_size(commits: int, cards: int, edits: int, runs: int, work: Path) -> None:
    # (imported here: the CLI's prelude imports this module for ``loose_write`` only)
    import common
    from bench_edit import change
    from generate import Params, cache_root, cached_repo

    import gitmem

    src = cached_repo(Params(cards, commits), cache_root())
    env = common.bench_env(work / f"home-{commits}")
    writers = {
        "git hash-object, long-running": None,
        "git hash-object per object": per_object_write,
        "in-process writer": loose_write,
    }
    git_root = common.copy_of(src, work / f"git-{commits}")
    roots = {name: common.copy_of(src, work / f"{n}-{commits}") for n, name in enumerate(writers)}
    repos = {name: gitmem.open_repo(root) for name, root in roots.items()}
    projects = sorted(p.stem for p in (src / "cards").glob("*.md"))
    counts = dict.fromkeys([*writers, "add+commit"], 0)

    def gitmem_case(name: str) -> float:
        counts[name] += 1
        project = projects[counts[name] % len(projects)]
        old, new, section = change(roots[name], project, counts[name])
        entry = gitmem.IndexEntry.make(section, ["bench"], f"bench note {counts[name]}")
        start = time.perf_counter()
        gitmem.write_card(repos[name], project, old, new, entry)
        return time.perf_counter() - start

    def git_case() -> float:
        counts["add+commit"] += 1
        project = projects[counts["add+commit"] % len(projects)]
        old, new, _ = change(git_root, project, counts["add+commit"])
        card = git_root / "cards" / f"{project}.md"
        start = time.perf_counter()
        card.write_text(card.read_text().replace(old, new))
        common.git(git_root, env, *common.PLAIN, "add", str(card))
        common.git(git_root, env, *common.PLAIN, "commit", "-q", "-m", f"{project}: note")
        return time.perf_counter() - start

    for name, write in writers.items():
        if write is not None:
            repos[name].store.write = types.MethodType(write, repos[name].store)  # type: ignore[method-assign]
    cases = {name: partial(gitmem_case, name) for name in writers}
    got = common.interleaved({**cases, "add+commit": git_case}, edits, warmup=3)
    trees = {r.store.resolve("HEAD^{tree}") for r in repos.values()}
    for repo in repos.values():
        repo.close()
    head = subprocess.check_output(["git", "rev-parse", "HEAD^{tree}"], cwd=git_root, text=True)
    assert trees == {head.strip()}, f"the ways ended on different trees: {trees}"
    cli = bench_cli(roots["git hash-object, long-running"], projects[0], runs, env)
    base = got["add+commit"] * 1000
    print(f"\n{commits} commits, {cards} cards, {edits} edits (median)")
    print(f"  git add + git commit {'':22} {base:6.1f} ms")
    for name in writers:
        value = got[name] * 1000
        print(f"  write_card, {name:31} {value:6.1f} ms  {value / base:.2f}x (budget <= 1x)")
    for name, samples in cli.items():
        print(f"  gitmem write CLI, {name:25} {median_ms(samples):6.0f} ms  (budget <= 300 ms)")


def bench_cli(root: Path, project: str, runs: int, env: dict[str, str]) -> dict[str, list[float]]:
    """``gitmem write`` wall time, both writers, interleaved."""
    import common

    cmd = [sys.executable, "-c", CLI.format(here=str(Path(__file__).parent))]
    times: dict[str, list[float]] = {"git hash-object": [], "in-process": []}
    for i in range(runs + 1):  # the first round only warms caches
        for name in list(times)[i % 2 :] + list(times)[: i % 2]:
            loose = {"GITMEM_LOOSE": "1" if name == "in-process" else ""}
            tag = f"{i}{name[0]}"
            args = ["write", project, "--old", "", "--new", f"## Bench {tag}\nfact\n"]
            args += ["--section", f"bench-{tag}", "--keywords", "k", "--summary", "s"]
            took = common.run([*cmd, *args], root, env | loose)
            if i:
                times[name].append(took)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--commits", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--cards", type=int, default=1000)
    ap.add_argument("--edits", type=int, default=30)
    ap.add_argument("--runs", type=int, default=10, help="gitmem write CLI runs")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gitmem-writer-") as tmp:
        for commits in args.commits:
            bench_size(commits, args.cards, args.edits, args.runs, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
