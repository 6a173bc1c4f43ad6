"""Budget: a signed edit <= 1x a signed ``git add`` + ``git commit`` of the same change,
``gitmem write`` (the CLI, signed) <= 300 ms, and ``gitmem verify`` of 10k signed commits
<= 10 s.

Edits: copies of a generated client, one signing with a fresh SSH key (``gitmem`` sets it
up as ``gitmem init`` does), one unsigned; the same bullet appended each round by
``gitmem.write_card`` on an open repo, by ``git add`` + ``git commit`` (``-S KEY`` or not,
hooks off), and by ``gitmem write`` as a process. Verify: the generated history's commits
signed again one by one (as gitmem writes them: ``Gitmem-Client`` trailer, this clone's
key), then ``gitmem verify`` beside git's own check of the same range
(``git log --format=%G?``: one ssh-keygen per signed commit) and an unsigned log: every
commit (its record of the last clean verify removed), and after one new edit. Medians,
interleaved::

    .venv/bin/python benchmarks/bench_signing.py               # 10k commits
    .venv/bin/python benchmarks/bench_signing.py --quick       # 1k
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

import common
from bench_edit import change

import gitmem
from gitmem.features.verify import VERIFIED
from gitmem.git.runner import Sha
from gitmem.memory.refs import SEEN
from gitmem.memory.repo import MAIN, OWN_COMMITS
from gitmem.setup import signing


def set_up_signing(root: Path, home: Path) -> Path:
    """This clone signs with a new key, trusted here, as ``gitmem init`` leaves it."""
    os.environ["XDG_CONFIG_HOME"] = str(home / ".config")
    os.environ.pop("GITMEM_SIGNING", None)
    with gitmem.open_repo(root) as repo:
        key = signing.configure(repo)
        assert key is not None, "signing is off here (ssh-keygen?)"
        signing.record_signer(repo, key)
    return key


def edits(size: int, rounds: int) -> None:
    with common.scratch() as tmp:
        work = Path(tmp)
        env = common.bench_env(work / "home")
        env["XDG_CONFIG_HOME"] = str(work / "home" / ".config")
        copies = {
            name: common.copy_of(common.history(size), work / name)
            for name in ("signed", "unsigned", "git-signed", "git")
        }
        key = set_up_signing(copies["signed"], work / "home")
        common.git(copies["git-signed"], env, "config", "gpg.format", "ssh")
        projects = sorted(p.stem for p in (copies["signed"] / "cards").glob("*.md"))
        n = dict.fromkeys(copies, 0) | {"cli": 0, "cli-unsigned": 0}
        cases: dict[str, Case] = {}
        for name in ("signed", "unsigned"):
            cases[f"write_card {name}"] = _in_process(copies[name], projects, n, name)
        for name, sign in (("git-signed", [f"-S{key}"]), ("git", [])):
            cases[f"git {name}"] = _plain(copies[name], projects, n, name, env, sign)
        got = common.interleaved(cases, rounds, warmup=3)
        cli = {
            "cli": _cli(copies["signed"], projects, n, "cli", env),
            "cli-unsigned": _cli(copies["unsigned"], projects, n, "cli-unsigned", env),
        }
        wall = common.interleaved(cli, rounds)
    print(f"an edit at {size:,} commits:")
    for name, took in got.items():
        common.row(f"  {name}", common.ms(took), "")
    ratio = got["write_card signed"] / got["git git-signed"]
    common.row("  signed write_card / signed git commit", f"{ratio:.2f}x", "<= 1x", ratio <= 1)
    common.row("  gitmem write, unsigned (CLI wall)", common.ms(wall["cli-unsigned"]), "")
    signed = wall["cli"]
    common.row("  gitmem write, signed (CLI wall)", common.ms(signed), "<= 300 ms", signed <= 0.3)


Case = Callable[[], float]


def _in_process(root: Path, projects: list[str], n: dict[str, int], name: str) -> Case:
    repo = gitmem.open_repo(root)

    def edit() -> float:
        n[name] += 1
        project = projects[n[name] % len(projects)]
        old, new, section = change(root, project, n[name])
        entry = gitmem.IndexEntry.make(section, ["bench"], f"bench note {n[name]}")
        start = time.perf_counter()
        gitmem.write_card(repo, project, old, new, entry)
        return time.perf_counter() - start

    return edit


def _plain(
    root: Path,
    projects: list[str],
    n: dict[str, int],
    name: str,
    env: dict[str, str],
    sign: list[str],
) -> Case:
    def plain() -> float:
        n[name] += 1
        project = projects[n[name] % len(projects)]
        old, new, _ = change(root, project, n[name])
        card = root / "cards" / f"{project}.md"
        start = time.perf_counter()
        card.write_text(card.read_text().replace(old, new))
        common.git(root, env, *common.PLAIN, "add", str(card))
        common.git(root, env, *common.PLAIN, "commit", "-q", *sign, "-m", f"{project}: note")
        return time.perf_counter() - start

    return plain


def _cli(
    root: Path, projects: list[str], n: dict[str, int], name: str, env: dict[str, str]
) -> Case:
    def cli() -> float:
        n[name] += 1
        project = projects[-1 - n[name] % len(projects)]
        old, new, section = change(root, project, 1000 + n[name])
        args = ["--old", old, "--new", new, "--section", section]
        args += ["--keywords", "bench", "--summary", f"bench note {n[name]}"]
        return common.run([common.GITMEM, "write", project, *args], root, env)

    return cli


def signed_history(root: Path) -> int:
    """Every commit of main signed again by this clone, oldest first; how many."""
    with gitmem.open_repo(root) as repo:
        again: dict[str, Sha] = {}
        listed = repo.git.out("rev-list", "--reverse", "--topo-order", MAIN).split()
        for sha in listed:
            raw = repo.store.read_commit(sha)
            parents = [again[p] for p in raw.parents]
            again[sha] = repo.write_commit(
                raw.tree, parents, raw.message, raw.author, raw.committer
            )
        tip = again[listed[-1]]
        repo.git.run("update-ref", f"refs/heads/{MAIN}", tip)
        repo.git.run("update-ref", SEEN, tip)
        repo.git.run("reset", "-q", "--hard", tip)
    return len(listed)


def verify(size: int, rounds: int) -> None:
    with common.scratch() as tmp:
        work = Path(tmp)
        env = common.bench_env(work / "home")
        env["XDG_CONFIG_HOME"] = str(work / "home" / ".config")
        root = common.copy_of(common.history(size), work / "signed")
        set_up_signing(root, work / "home")
        began = time.perf_counter()
        n = signed_history(root)
        made = time.perf_counter() - began
        record = root / ".git" / "gitmem" / VERIFIED
        edit = _cli(root, sorted(p.stem for p in (root / "cards").glob("*.md")), {"v": 0}, "v", env)

        def cold() -> float:
            record.unlink(missing_ok=True)
            return common.run([common.GITMEM, "verify"], root, env)

        own = root / ".git" / "gitmem" / OWN_COMMITS

        def elsewhere() -> float:  # as a clone that wrote none of them: git checks each
            record.unlink(missing_ok=True)
            own.rename(own.with_suffix(".aside"))
            try:
                return common.run([common.GITMEM, "verify"], root, env)
            finally:
                own.with_suffix(".aside").rename(own)

        def warm() -> float:
            edit()  # one signed edit since the last verify
            return common.run([common.GITMEM, "verify"], root, env)

        cases = {
            "verify": cold,
            "elsewhere": elsewhere,
            "warm": warm,
            "%G?": lambda: common.run(["git", "log", "--format=%G?", MAIN], root, env),
            "log": lambda: common.run(["git", "log", "--format=%H", MAIN], root, env),
        }
        got = common.interleaved(cases, rounds, warmup=0)
    print(f"gitmem verify of {n:,} signed commits (signing them took {made:.0f} s):")
    common.row("  git log --format=%H (no signatures)", common.ms(got["log"]), "")
    common.row("  git log --format=%G? (git's own check)", common.ms(got["%G?"]), "")
    took = got["verify"]
    common.row(
        "  gitmem verify, every commit, written here (CLI wall)",
        common.ms(took),
        "<= 10 s",
        took <= 10,
    )
    other = got["elsewhere"]
    common.row(
        "  gitmem verify, every commit, written elsewhere", common.ms(other), "<= 10 s", other <= 10
    )
    after_one = got["warm"]
    common.row(
        "  gitmem verify, one commit since the last",
        common.ms(after_one),
        "<= 10 s",
        after_one <= 10,
    )
    per = (got["%G?"] - got["log"]) / max(n, 1) * 1000
    common.row("  of which per signed commit (ssh-keygen -Y verify)", f"{per:.1f} ms", "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common.add_sizes(ap, "10000", "1000")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--verify-rounds", type=int, default=3)
    args = ap.parse_args()
    common.machine()
    for size in common.sizes(args):
        edits(size, 7 if args.quick else args.rounds)
        verify(size, 1 if args.quick else args.verify_rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
