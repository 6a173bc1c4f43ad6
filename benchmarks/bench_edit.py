"""Budget: an edit in-process <= 1x ``git add`` + ``git commit`` of the same change (at 10k
and 100k commits), and ``gitmem write`` (the CLI) <= 300 ms.

Two copies of a generated client receive the same changes, one bullet appended to a card's
last section each round: ``gitmem.write_card`` on a repo kept open (as a session has it)
in one, the file written then ``git add`` + ``git commit`` (hooks off) in the other; then
``gitmem write`` as a process in the first (``--cards``, ``--sections``: on another
shape). Medians, interleaved::

    .venv/bin/python benchmarks/bench_edit.py                  # 10k and 100k commits
    .venv/bin/python benchmarks/bench_edit.py --quick          # 1k and 10k
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import common

import gitmem


def change(root: Path, project: str, n: int) -> tuple[str, str, str]:
    """(old, new, section) appending a bullet to the card's last section."""
    text = (root / "cards" / f"{project}.md").read_text()
    last = text.rstrip("\n").rsplit("\n", 1)[-1]
    heading = re.findall(r"^## (.+)$", text, re.M)[-1]
    section = re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")
    return last, f"{last}\n- bench note {n}: the client confirmed item {n}", section


def measure(size: int, rounds: int, cards: int = 0, sections: int = 0) -> None:
    with common.scratch() as tmp:
        work = Path(tmp)
        env = common.bench_env(work / "home")
        ours = common.copy_of(common.history(size, sections, cards), work / "gitmem")
        theirs = common.copy_of(ours, work / "git")
        projects = sorted(p.stem for p in (ours / "cards").glob("*.md"))
        n = [0, 0, 0]

        with gitmem.open_repo(ours) as repo:

            def edit() -> float:
                n[0] += 1
                project = projects[n[0] % len(projects)]
                old, new, section = change(ours, project, n[0])
                entry = gitmem.IndexEntry.make(section, ["bench"], f"bench note {n[0]}")
                start = time.perf_counter()
                gitmem.write_card(repo, project, old, new, entry)
                return time.perf_counter() - start

            def plain() -> float:
                n[1] += 1
                project = projects[n[1] % len(projects)]
                old, new, _ = change(theirs, project, n[1])
                card = theirs / "cards" / f"{project}.md"
                start = time.perf_counter()
                card.write_text(card.read_text().replace(old, new))
                common.git(theirs, env, *common.PLAIN, "add", str(card))
                common.git(theirs, env, *common.PLAIN, "commit", "-q", "-m", f"{project}: note")
                return time.perf_counter() - start

            got = common.interleaved({"edit": edit, "plain": plain}, rounds, warmup=3)

        def cli() -> float:
            n[2] += 1
            project = projects[-1 - n[2] % len(projects)]
            old, new, section = change(ours, project, 1000 + n[2])
            args = ["--old", old, "--new", new, "--section", section]
            args += ["--keywords", "bench", "--summary", f"bench note {n[2]}"]
            return common.run([common.GITMEM, "write", project, *args], ours, env)

        wall = common.interleaved({"cli": cli}, rounds)["cli"]
    ratio = got["edit"] / got["plain"]
    print(f"{size:,} commits, {common.shape(cards, sections, size)}:")
    common.row("  gitmem.write_card (in-process)", common.ms(got["edit"]), "")
    common.row("  git add + git commit of the same change", common.ms(got["plain"]), "")
    common.row("  edit / git", f"{ratio:.2f}x", "<= 1x", ratio <= 1)
    common.row("  gitmem write (CLI wall)", common.ms(wall), "<= 300 ms", wall <= 0.3)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common.add_sizes(ap, "10000,100000", "1000,10000")
    ap.add_argument("--rounds", type=int, default=21)
    common.add_shape(ap)
    args = ap.parse_args()
    common.machine()
    for size in common.sizes(args):
        measure(size, 7 if args.quick else args.rounds, args.cards, args.sections)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
