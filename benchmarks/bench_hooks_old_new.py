"""A person's plain ``git commit`` with the hooks an older gitmem installed (a
``pre-commit`` and a ``commit-msg``: tests/old-hooks) against this gitmem's (``commit-msg``
only), each against the same commit without hooks, at 1k/10k/100k commits.

Two copies of each generated client (benchmarks/generate.py), one per hook set; each round
commits a hand edit to a card (``git add``, then ``git commit -q -m``) in both copies, with
and without hooks (``core.hooksPath=/dev/null``), the four interleaved, the order reversed
every other round. Medians are printed with the load; it reports and never judges::

    .venv/bin/python benchmarks/bench_hooks_old_new.py --sizes 1000,10000,100000 --runs 61
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import bench_core as core
from generate import Params, cache_root, cached_repo, meta_of

from gitmem import hooks
from gitmem.memory.cards import card_path

OLD_HOOKS = Path(__file__).resolve().parent.parent / "tests" / "old-hooks"
OLD_SET = ("commit-msg", "pre-commit", "post-checkout", "post-merge", "post-rewrite")
KINDS = ("old", "old, no hooks", "new", "new, no hooks")


def _install_old(root: Path) -> None:
    target = hooks.hooks_dir(root)
    for name in OLD_SET:
        (target / name).write_text(hooks.render_hook(OLD_HOOKS, name))
        (target / name).chmod(0o755)


def run_size(n_commits: int, runs: int, work: Path) -> dict[str, float]:
    src = cached_repo(Params(1000 if n_commits >= 10_000 else 100, n_commits, 1), cache_root(None))
    projects: list[str] = meta_of(src)["projects"]
    roots = {
        "old": core.copy_repo(src, work / f"{n_commits}-old"),
        "new": core.copy_repo(src, work / f"{n_commits}-new"),
    }
    _install_old(roots["old"])
    hooks.install(roots["new"])
    env = core.CLI_ENV | {k: v for k, v in core.clean_env().items() if k.startswith("GIT_")}
    times: dict[str, list[float]] = {k: [] for k in KINDS}
    for i in range(runs):
        for j, kind in enumerate(KINDS if i % 2 == 0 else KINDS[::-1]):
            root = roots[kind.split(",")[0]]
            project = projects[(4 * i + j) % len(projects)]
            path = root / card_path(project)
            path.write_text(path.read_text("utf-8") + f"\nA note from a meeting, round {i}.\n")
            subprocess.run(["git", "add", card_path(project)], cwd=root, env=env, check=True)
            cmd = [
                "git",
                *(["-c", "core.hooksPath=/dev/null"] if "no hooks" in kind else []),
                "commit",
                "-q",
                "-m",
                f"meeting notes {i}",
            ]
            times[kind].append(
                core.timed(lambda c=cmd, r=root: subprocess.run(c, cwd=r, env=env, check=True))
            )
    for root in roots.values():
        shutil.rmtree(root)
    return {k: core.median_ms(v) for k, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--runs", type=int, default=41)
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="gitmem-bench-hooks-old-new."))
    now = datetime.now(UTC).strftime("%H:%M UTC")
    print(f"# {now}, load {os.getloadavg()[0]:.2f}, {args.runs} rounds, medians")
    try:
        for size in (int(s) for s in args.sizes.split(",") if s):
            m = run_size(size, args.runs, work)
            old, new = m["old"] / m["old, no hooks"], m["new"] / m["new, no hooks"]
            print(
                f"{size // 1000}k: old hooks {m['old']:.1f} vs {m['old, no hooks']:.1f} ms "
                f"= {old:.2f}x; new {m['new']:.1f} vs {m['new, no hooks']:.1f} ms = {new:.2f}x "
                f"(load {os.getloadavg()[0]:.2f})",
                flush=True,
            )
        print(f"# load after {os.getloadavg()[0]:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
