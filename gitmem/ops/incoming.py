"""What a remote's history may not bring, checked before anything here changes (by
``gitmem sync`` against main, by ``gitmem clone`` against what ``gitmem init`` makes): a
symlink or submodule where memory lives, in any commit, or .gitattributes that change how
a memory file is stored or merged (an encoding, line endings, a filter, ``$Id$``, a diff
or merge driver), or a gitmem.toml or persona.md at its tip that every command here
would then fail on."""

from __future__ import annotations

import os
from collections.abc import Iterator

from gitmem.errors import ConfigError, UnsafePath
from gitmem.memory import config, path_rule
from gitmem.memory.cards import card_of, unwritable
from gitmem.memory.repo import MEMORY_PATHS, MemoryRepo, where_memory_lives
from gitmem.paths import shipped

_UNSAFE_MODES = {"120000": "a symlink", "160000": "a submodule"}
ATTRIBUTES = ".gitattributes"
# What git's attributes can do to a memory file: re-encode it, change its line endings, run
# a filter or expand $Id$ on it (so the file differs from what gitmem committed), or merge or
# diff it their own way.
_CHECKED = ("filter", "working-tree-encoding", "eol", "text", "crlf", "ident", "diff", "merge")
# Paths a later write may make, besides those the remote's tree holds (and files beside
# each .gitattributes it changes).
_PROBES = ("cards/x.md", "cards/x/x.md", "sessions/x.jsonl", "logs/x.jsonl", *MEMORY_PATHS)


def refuse(
    repo: MemoryRepo, remote: str, ours: str | None, theirs: str, name: str | None = None
) -> None:
    """Refuse (``UnsafePath``) a history ``theirs`` that puts a symlink or submodule where
    memory lives, in any commit not in ``ours``, or whose .gitattributes give a memory path
    an attribute other than ``ours`` gives it (None: a repo as ``gitmem init`` makes it).
    ``name``: what the refusals say brings it (``REMOTE/main`` unless given)."""
    name = name or f"{remote}/main"
    entries = raw_log(repo, theirs, *([f"^{ours}"] if ours else []))
    _refuse_names(repo, remote, name, theirs, entries)
    found = next(((p, _UNSAFE_MODES[m], c) for c, m, _, p in entries if _unsafe(m, p)), None)
    if found is not None:
        path, what, commit = found
        raise UnsafePath(
            f"{name} brings {path} as {what} (commit {commit[:7]}); gitmem never "
            "follows one where it keeps memory; nothing was changed here",
            hint=f"fix it on {remote} with a commit that makes it a real file or folder",
        )
    changed = {p for *_, p in entries if p.rpartition("/")[2] == ATTRIBUTES}
    if ours is None:  # against gitmem's own, whose top .gitattributes a remote may lack
        changed.add(ATTRIBUTES)
    if changed:
        _refuse_attributes(repo, remote, name, ours, theirs, sorted(changed))
    _refuse_unusable(repo, remote, name, theirs)
    _refuse_cards(repo, remote, name, theirs, sorted({p for *_, p in entries if card_of(p)}))


def _refuse_names(
    repo: MemoryRepo,
    remote: str,
    name: str,
    theirs: str,
    entries: list[tuple[str, str, str, str]],
) -> None:
    """Refuse (``UnsafePath``) a history that makes a path the path rule refuses, or
    whose tip holds two names Windows or macOS take for one."""
    made = [(commit, path) for commit, _, status, path in entries if status == "A"]
    for commit, path in made:
        problem = path_rule.path_problem(path)
        if problem is not None:
            raise UnsafePath(
                f"{name} brings {path} (commit {commit[:7]}), a name gitmem never "
                f"makes: {problem}; nothing was changed here",
                hint=f"rename or remove it on {remote} with a commit, then sync again",
            )
    if made:  # only a new name can clash: the tree is listed once, when there is one
        listing = repo.git.out("ls-tree", "-r", "-z", "--name-only", theirs)
        for one, other in path_rule.tree_clashes(filter(None, listing.split("\0"))):
            raise UnsafePath(
                f"{name} holds both {one} and {other}, one name on Windows and "
                "macOS; nothing was changed here",
                hint=f"rename one of them on {remote} with a commit, then sync again",
            )


def _refuse_cards(repo: MemoryRepo, remote: str, name: str, theirs: str, paths: list[str]) -> None:
    """Refuse (``UnsafePath``) a card at the tip that ``gitmem write`` would refuse to
    write: every later edit of it would fail here."""
    limit = repo.config.max_card_bytes
    for path in paths:
        data = repo.store.read_blob(f"{theirs}:{path}")
        if data is None:
            continue
        problem = unwritable(data, limit)
        if problem is not None:
            raise UnsafePath(
                f"{name} brings {path} with {problem}, which gitmem never writes; "
                "nothing was changed here",
                hint=f"fix it on {remote} with a commit, then sync again",
            )


def _refuse_unusable(repo: MemoryRepo, remote: str, name: str, theirs: str) -> None:
    """Refuse a tip whose settings or persona this gitmem cannot read (ConfigError)."""
    for file in (config.FILENAME, "persona.md"):
        data = repo.store.read_blob(f"{theirs}:{file}")
        try:
            if data is not None and file == config.FILENAME:
                config.parse(data.decode("utf-8"))
            elif data is not None:
                data.decode("utf-8")
            continue
        except UnicodeDecodeError:
            problem = f"a {file} that is not valid UTF-8"
        except ConfigError as exc:
            problem = f"a {file} this gitmem cannot use ({exc})"
        raise ConfigError(
            f"{name} brings {problem}; nothing was changed here",
            hint=f"fix it on {remote} with a commit, then sync again",
        )


def raw_log(repo: MemoryRepo, *revs: str) -> list[tuple[str, str, str, str]]:
    """(commit, new mode, status letter, path) for each file each commit of ``revs``
    (``git log`` arguments) changes; a merge is compared with each parent (``-m``)."""
    # No pathspec: git would compare each commit twice (to simplify history, then to diff).
    out = repo.git.out(
        "log", "-m", "--raw", "-z", "--no-renames", "--no-abbrev", "--format=%x00%H", *revs
    )
    return list(raw_entries(out))


def raw_entries(out: str) -> Iterator[tuple[str, str, str, str]]:
    """(commit, new mode, status letter, path) for each entry of
    ``git log -m --raw -z --no-renames --format=%x00%H``'s ``out``."""
    items, commit, i = out.split("\0"), "", 0
    while i < len(items):
        item = items[i].strip("\n")
        if item.startswith(":") and i + 1 < len(items):
            fields = item[1:].split(" ")  # old mode, new mode, old id, new id, status
            yield commit, fields[1], fields[4], items[i + 1]  # --no-renames: one path each
            i += 2
            continue
        commit = item or commit  # what is neither an entry nor its path is a commit
        i += 1


def _unsafe(mode: str, path: str) -> bool:
    return mode in _UNSAFE_MODES and where_memory_lives(path)


def _refuse_attributes(
    repo: MemoryRepo, remote: str, name: str, ours: str | None, theirs: str, changed: list[str]
) -> None:
    """Refuse (``UnsafePath``) a remote history whose .gitattributes give a memory path an
    attribute other than ``ours`` gives it (a commit; None: a repo as ``gitmem init``
    makes it). ``changed``: the .gitattributes files the remote history touches."""
    paths = repo.git.out("ls-tree", "-r", "-z", "--name-only", theirs, "--", *MEMORY_PATHS)
    near = [f"{f[: -len(ATTRIBUTES)]}{p}" for f in changed for p in ("x.md", "x.jsonl")]
    probe = sorted({*_PROBES, *filter(where_memory_lives, near), *filter(None, paths.split("\0"))})
    base = ours if ours is not None else _template_tree(repo)
    before, after = _attributes_at(repo, base, probe), _attributes_at(repo, theirs, probe)
    for (path, attr), value in after.items():
        old = before.get((path, attr), "unspecified")
        if old == value:
            continue
        folders = (f for f in changed if path.startswith(f[: -len(ATTRIBUTES)]))
        where = max(folders, key=len, default=changed[-1])
        what = f"drops {_shown(attr, old)} from" if value == "unspecified" else "sets"
        shown = "" if value == "unspecified" else f" {_shown(attr, value)} on"
        raise UnsafePath(
            f"{name} brings {where} that {what}{shown} {path}; "
            "gitmem never lets git's attributes change how memory is stored or merged; "
            "nothing was changed here",
            hint=f"remove that line on {remote} with a new commit",
        )


def _template_tree(repo: MemoryRepo) -> str:
    """A tree holding only the .gitattributes ``gitmem init`` writes."""
    blob = repo.store.write("blob", (shipped("template-repo") / ATTRIBUTES).read_bytes())
    tree = repo.store.update_path(None, ATTRIBUTES, blob)
    assert tree is not None  # a tree with one file is never empty
    return tree


def _attributes_at(repo: MemoryRepo, tree: str, paths: list[str]) -> dict[tuple[str, str], str]:
    """(path, attribute) -> git's value for each of ``_CHECKED``, as ``tree``'s
    .gitattributes say (read from a temporary index of that commit or tree)."""
    index = repo.private_dir() / f"attributes-index.{os.getpid()}"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        repo.git.run("read-tree", tree, env=env)
        out = repo.git.run(
            "check-attr",
            "--cached",
            "-z",
            "--stdin",
            *_CHECKED,
            input=b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths),
            env=env,
        ).stdout.decode("utf-8", "surrogateescape")
    finally:
        index.unlink(missing_ok=True)
    items = out.split("\0")
    return {(items[i], items[i + 1]): items[i + 2] for i in range(0, len(items) - 2, 3)}


def _shown(name: str, value: str) -> str:
    """An attribute as a .gitattributes line writes it: ``text``, ``-text``, ``eol=crlf``."""
    return {"set": name, "unset": f"-{name}", "unspecified": f"!{name}"}.get(
        value, f"{name}={value}"
    )
