"""Each card's last change on a branch, newest first, from one ``git log --name-only``.

The log is read while git still walks and stopped once every card has been seen: newest
first, the first commit naming a card's path is the last one that touched it, and the
order cards are met in is their recency (the folded I block ranks by it, tiers.py). The
answer is kept per branch (``.git/gitmem/index-<branch>.cards``); when history grew from
the kept commit without a merge, only ``git log KEPT..TIP`` is read, which gives the same
answer in the same order.
"""

from __future__ import annotations

import re

from gitmem.errors import GitError
from gitmem.index import cache_file
from gitmem.memory import branch_files
from gitmem.memory.repo import MAIN, MemoryRepo

VERSION = 1  # of the kept file's layout: another one is not read
Changes = dict[str, tuple[str, str]]  # card path -> (commit, author date), newest first


def last_changes(repo: MemoryRepo, tip: str, paths: set[str], since: str | None = None) -> Changes:
    """path -> (commit, date) of the newest commit on ``tip`` (after ``since``) touching it,
    in the order of ``git log`` (most recently changed first)."""
    found: Changes = {}
    if not paths:
        return found
    rev = f"{since}..{tip}" if since else tip
    args = ("log", "-z", "--format=%x01%H%x1f%aI", "--name-only", rev, "--", "cards/")
    current: tuple[str, str] | None = None
    with repo.git.stream(*args) as stream:
        for piece in stream.pieces():
            for item in piece.decode("utf-8", "surrogateescape").split("\0"):
                item = item.lstrip("\n")
                if item.startswith("\x01"):
                    sha, _, date = item[1:].partition("\x1f")
                    current = (sha, date)
                elif item and current and item in paths and item not in found:
                    found[item] = current
            if len(found) == len(paths):
                break  # every card seen: the rest of history is not needed
    return found


def _linear_from(repo: MemoryRepo, old: str, tip: str) -> bool:
    """Whether ``tip`` is ``old`` with commits on top and no merge among them (then the
    log from ``tip`` is the log of ``old..tip`` followed by the log from ``old``)."""
    try:
        repo.git.run("merge-base", "--is-ancestor", old, tip)
        return not repo.git.out("rev-list", "--merges", "-n1", f"{old}..{tip}")
    except GitError:  # not an ancestor, or the kept commit is gone
        return False


def _kept(repo: MemoryRepo, branch: str) -> tuple[str, Changes] | None:
    got, _ = cache_file.read(branch_files.path(repo, branch, "cards"), 1, 1)
    head = got[0] if got else None
    if not isinstance(head, list) or len(head) != 3 or head[0] != VERSION:
        return None
    old, kept = head[1], head[2]
    if (
        not isinstance(old, str)
        or not isinstance(kept, dict)
        or not re.fullmatch("[0-9a-f]{40,64}", old)
    ):
        return None
    return old, {p: (v[0], v[1]) for p, v in kept.items()}


def card_changes(repo: MemoryRepo, branch: str, tip: str, paths: set[str]) -> Changes:
    """``last_changes(repo, tip, paths)``, from the kept answer and the commits since when
    it can: a card last changed long ago walks all history (``gitmem cards`` <= 250 ms at
    100k commits, issue 21). A session branch without its own answer starts from main's."""
    kept = _kept(repo, branch) or (_kept(repo, MAIN) if branch != MAIN else None)
    if kept is not None and kept[0] == tip and paths <= kept[1].keys():
        return {p: v for p, v in kept[1].items() if p in paths}
    found: Changes = {}
    if kept is not None and _linear_from(repo, kept[0], tip):
        new = last_changes(repo, tip, paths, since=kept[0])
        found = {**new, **{p: v for p, v in kept[1].items() if p not in new}}
    if not paths <= found.keys():
        found = last_changes(repo, tip, paths)
    found = {p: v for p, v in found.items() if p in paths}
    record = [VERSION, tip, {p: list(v) for p, v in found.items()}]
    cache_file.write(branch_files.path(repo, branch, "cards"), [record])
    if branch != MAIN and tip == repo.tip(MAIN):
        # A session at main's tip: the next one reads the commits since, not all history.
        cache_file.write(branch_files.path(repo, MAIN, "cards"), [record])
    return found
