"""Paths an older gitmem let in that a checkout on some system cannot hold
(``cards/git~1/config``, ``cards/Acme.md`` beside ``cards/acme.md``): found in main's tree,
named by ``gitmem status``, each removed in a commit of its own by
``gitmem recover --remove PATH`` (its text stays in history; ``gitmem redact`` is the way
to take it from there). Nothing else is held back by one: every command works on the rest.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmem.errors import NotFound
from gitmem.git.runner import Sha
from gitmem.memory import path_rule
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops.publish import PlannedCommit, commit_plan, publish


def refused_paths(repo: MemoryRepo, branch: str = MAIN) -> list[tuple[str, str]]:
    """(path, why) for each path of ``branch``'s tree the path rule refuses."""
    tip = repo.tip(branch)
    if tip is None:
        return []
    paths = list(_paths(repo, repo.store.read_commit(tip).tree, ""))
    out = [(p, why) for p in paths if (why := path_rule.path_problem(p)) is not None]
    for first, second in path_rule.tree_clashes(paths):
        out.append((second, f"it is the same name as {first} on Windows and macOS"))
    return out


def _paths(repo: MemoryRepo, tree: Sha, prefix: str) -> Iterator[str]:
    """Every file path under ``tree``, read through the open ``cat-file --batch``."""
    for e in repo.store.read_tree(tree):
        path = prefix + e.name.decode("utf-8", "surrogateescape")
        if e.is_tree:
            yield from _paths(repo, e.sha, path + "/")
        else:
            yield path


def remove_refused_path(repo: MemoryRepo, path: str) -> Sha:
    """Remove ``path``, one the path rule refuses, from main in a commit of its own."""
    why = dict(refused_paths(repo)).get(path)
    if why is None:
        raise NotFound(
            f"{path} is not a path gitmem refuses on main; `gitmem status` lists those",
            hint="a card is removed by the agent's memory tool, or by `git rm` and a commit",
        )
    message = f"gitmem: remove {path}\n\n{why}; a checkout on some system cannot hold it.\n"

    def plan(tip: Sha, root: Sha) -> PlannedCommit:
        tree = repo.store.update_path(root, path, None)
        assert tree is not None  # main always holds gitmem.toml
        planned = commit_plan(repo, tip, tree, [path], message)
        # Clean when git holds nothing there, as a checkout that left it out leaves it
        # (HEAD has it, so ``git status`` calls that a deletion).
        planned.known[path] = (None, None)
        return planned

    done = publish(repo, MAIN, plan, reason=f"gitmem recover --remove {path}")
    assert done is not None  # the plan always commits
    return done.commit
