"""Budgets beside memgit 0.13: ``gitmem import`` of 1,000 notes into a fresh repo <= 2x
``memgit import claude-code`` of the same notes (gitmem keeps one commit per card, memgit
makes one checkpoint; signed, as ``gitmem init`` sets a clone up, and with signing off),
and ``gitmem search`` at 10k commits <= 0.7x ``memgit search`` on
the same 1,000 notes.

The notes are the 1,000 cards at the tip of a generated 10k-commit client (``--sections
75``: the other shape), each with the frontmatter memgit reads (name, description, type).
memgit runs from a virtualenv of its own, installed from the package index
(``common.memgit_python``). Each round, a fresh gitmem repo (``gitmem init``) and a fresh
memgit store (``memgit init``), untimed, then both imports timed; then ``gitmem search``
on a copy of the 10k client (its search index built by an untimed first search) beside
``memgit search --all-projects`` in a store that imported the notes. Processes, a scratch
``HOME``, the order alternated by round, medians::

    .venv/bin/python benchmarks/bench_memgit.py
    .venv/bin/python benchmarks/bench_memgit.py --sections 75
    .venv/bin/python benchmarks/bench_memgit.py --cards 5000 --sections 2 --search-only
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial
from pathlib import Path

import common

QUERIES = ("budget launch", "invoice hosting", "vendor training")


def write_notes(src: Path, dest: Path) -> int:
    """Each card of ``src`` as a note memgit's Claude Code importer takes; how many."""
    dest.mkdir(parents=True)
    cards = sorted((src / "cards").glob("*.md"))
    for card in cards:
        text = card.read_text()
        title = text.split("\n", 1)[0].removeprefix("# ")
        front = f"---\nname: {card.stem}\ndescription: {title}\ntype: project\n---\n\n"
        (dest / card.name).write_text(front + text)
    return len(cards)


def measure(sections: int, rounds: int, cards: int = 0, search_only: bool = False) -> None:
    memgit = str(common.memgit_python().with_name("memgit"))
    with common.scratch() as tmp:
        work = Path(tmp)
        env = common.bench_env(work / "home")
        src = common.history(10_000, sections, cards)
        notes = work / "projects" / "bench" / "memory"
        n = write_notes(src, notes)
        counter = [0]

        def gitmem_import(signed: bool) -> float:
            counter[0] += 1
            repo = work / f"g{counter[0]}"
            genv = env if signed else env | {"GITMEM_SIGNING": "off"}
            common.run([common.GITMEM, "init", str(repo)], work, genv)
            return common.run(
                [common.GITMEM, "import", str(notes), "--from", "markdown"], repo, genv
            )

        def memgit_import() -> float:
            counter[0] += 1
            store = work / f"m{counter[0]}"
            menv = env | {"MEMGIT_STORE": str(store)}
            common.run([memgit, "init", str(store)], work, menv)
            return common.run([memgit, "import", "claude-code", str(notes)], work, menv)

        imports = (
            {}
            if search_only
            else common.interleaved(
                {
                    "gitmem": lambda: gitmem_import(True),
                    "unsigned": lambda: gitmem_import(False),
                    "memgit": memgit_import,
                },
                rounds,
            )
        )
        store = work / "memgit-store"
        menv = env | {"MEMGIT_STORE": str(store)}
        common.run([memgit, "init", str(store)], work, menv)
        common.run([memgit, "import", "claude-code", str(notes)], work, menv)
        copy = common.copy_of(src, work / "client")
        cases: dict[str, Callable[[], float]] = {}
        for q in QUERIES:
            argv = [common.GITMEM, "search", q]
            common.run(argv, copy, env)  # the search index built, untimed
            cases[f"gitmem {q}"] = partial(common.run, argv, copy, env)
            cases[f"memgit {q}"] = partial(
                common.run, [memgit, "search", "--all-projects", q], work, menv
            )
        searches = common.interleaved(cases, rounds)
    print(f"{n:,} notes, the tip of a 10k-commit client ({common.shape(cards, sections, 10_000)}):")
    if imports:
        _imports(imports)
    for q in QUERIES:
        ours, theirs = searches[f"gitmem {q}"], searches[f"memgit {q}"]
        common.row(f"  search {q!r}: gitmem at 10k commits", common.ms(ours), "")
        common.row(f"  search {q!r}: memgit", common.ms(theirs), "")
        common.row(
            f"  search {q!r}: gitmem / memgit",
            f"{ours / theirs:.2f}x",
            "<= 0.7x",
            ours <= 0.7 * theirs,
        )


def _imports(imports: dict[str, float]) -> None:
    ours, unsigned, theirs = imports["gitmem"], imports["unsigned"], imports["memgit"]
    common.row("  gitmem import (one signed commit per card)", common.ms(ours), "")
    common.row("  the same, signing off (one git fast-import)", common.ms(unsigned), "")
    common.row("  memgit import claude-code (one checkpoint)", common.ms(theirs), "")
    common.row("  import: gitmem / memgit", f"{ours / theirs:.2f}x", "<= 2x", ours <= 2 * theirs)
    common.row("  import, signing off: gitmem / memgit", f"{unsigned / theirs:.2f}x", "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common.add_shape(ap)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--search-only", action="store_true", help="no import budget")
    args = ap.parse_args()
    common.machine()
    measure(args.sections, args.rounds, args.cards, args.search_only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
