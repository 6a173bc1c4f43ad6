"""``gitmem init`` on a folder that holds files already, or on an existing git repo.

The folder is adopted: its history is kept and gitmem's files from ``template-repo/``
are added in one commit on ``main``. A file of gitmem's that exists already (a
``persona.md``, a ``gitmem.toml``, a ``cards/`` folder) is the person's: it is kept as
it is, never overwritten, and reported. Nothing else is staged or committed: the
folder's own files stay as they were (untracked in a new repo, as after ``git init``).

Branch: gitmem works on ``main``. A repo on another branch (``master``) gets ``main``
created at its tip and checked out -- the same commit, so no file changes -- and the
other branch is left as it was. A repo with a ``main`` and another branch checked out,
a detached HEAD, uncommitted changes or a merge in progress is refused with a hint:
gitmem never decides for a person which of two histories is the memory, and never
touches an uncommitted edit.

Everything is checked before the first write; a failure before the commit undoes
exactly what this module created (files, the branch switch, a repo it initialised).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from gitmem import hooks
from gitmem.errors import Conflict, InvalidInput, UnsafePath
from gitmem.git.runner import Git
from gitmem.memory import config as config_mod
from gitmem.memory.cards import KEEP
from gitmem.memory.repo import MAIN
from gitmem.paths import shipped

SUBSTITUTED = ("gitmem.toml", "persona.md")
_IN_PROGRESS = ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge", "rebase-apply")


@dataclass
class AdoptPlan:
    path: Path
    client: str
    repo: bool  # a git repo already
    head: str | None  # the branch checked out (None: no repo yet)
    born: bool  # the repo has a commit
    create: list[str] = field(default_factory=list)  # template files to write
    kept: list[str] = field(default_factory=list)  # gitmem paths that exist: left alone
    notes: list[str] = field(default_factory=list)  # what a person should know

    @property
    def switch(self) -> bool:
        return self.repo and self.head != MAIN


def template_files(template: Path) -> list[str]:
    return sorted(p.relative_to(template).as_posix() for p in template.rglob("*") if p.is_file())


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return path.lstat()
    except FileNotFoundError:
        return None


def plan(path: Path, client: str) -> AdoptPlan:
    """What adopting ``path`` would do; raises (changing nothing) when it must not."""
    dot = _lstat(path / ".git")
    is_repo = dot is not None
    git = Git(path)
    head: str | None = None
    born = False
    if is_repo:
        top = git.run("rev-parse", "--show-toplevel", check=False)
        if top.returncode or Path(top.stdout.decode().strip()).resolve() != path.resolve():
            raise InvalidInput(f"{path}/.git is not the git repo of {path}")
        head, born = _check_repo(path, git)
    out = AdoptPlan(path, client, is_repo, head, born)
    if not is_repo:
        outer = git.run("rev-parse", "--show-toplevel", check=False)
        if outer.returncode == 0:
            out.notes.append(
                f"{path} is inside the git repo {outer.stdout.decode().strip()}; it gets a repo "
                "of its own (the outer repo sees it as a nested repository)"
            )
    template = shipped("template-repo")
    for rel in template_files(template):
        _place(out, rel)
    if (path / config_mod.FILENAME).exists() and config_mod.FILENAME in out.kept:
        config_mod.load_file(path)  # a kept gitmem.toml must be a gitmem config: ConfigError
    if is_repo:
        hooks.check(path)
    if not out.create:
        raise InvalidInput(
            f"{path} has every file of gitmem's already; it is a memory repo: "
            "run `gitmem install-hooks` there if its hooks are missing"
        )
    if is_repo and head != MAIN:
        where = f"at {head}'s tip" if born else f"instead of the unborn {head}"
        out.notes.append(
            f"created branch {MAIN} {where} and checked it out (gitmem works on {MAIN}); "
            f"{head} is left as it was"
        )
    return out


def _check_repo(path: Path, git: Git) -> tuple[str, bool]:
    if git.out("rev-parse", "--is-bare-repository") == "true":
        raise InvalidInput(f"{path} is a bare repository; gitmem needs a working tree")
    ref = git.run("symbolic-ref", "-q", "HEAD", check=False).stdout.decode().strip()
    if not ref.startswith("refs/heads/"):
        raise InvalidInput(
            f"{path} has a detached HEAD; check out a branch (git switch {MAIN}) and run "
            "gitmem init again"
        )
    head = ref[len("refs/heads/") :]
    gitdir = Path(git.out("rev-parse", "--absolute-git-dir"))
    busy = [name for name in _IN_PROGRESS if (gitdir / name).exists()]
    if busy:
        raise Conflict(f"{path} has a merge, rebase or cherry-pick in progress; finish it first")
    changed = git.run("status", "--porcelain=v1", "-z", "--untracked-files=no").stdout
    if changed:
        first = changed.split(b"\0")[0][3:].decode("utf-8", "replace")
        raise Conflict(
            f"{path} has uncommitted changes (e.g. {first}); gitmem init "
            "adds its files in one commit and never touches yours: commit or stash them first"
        )
    born = git.run("rev-parse", "-q", "--verify", "HEAD^{commit}", check=False).returncode == 0
    if (
        head != MAIN
        and git.run("rev-parse", "-q", "--verify", f"refs/heads/{MAIN}", check=False).returncode
        == 0
    ):
        raise Conflict(
            f"{path} is on branch {head} and has a branch {MAIN} too; gitmem works on {MAIN}: "
            f"switch to it (git switch {MAIN}) and run gitmem init again"
        )
    return head, born


def _place(out: AdoptPlan, rel: str) -> None:
    """Decide for one template file: write it, or keep what is there."""
    parts = rel.split("/")
    here = out.path
    for i, part in enumerate(parts):
        here = here / part
        st = _lstat(here)
        shown = "/".join(parts[: i + 1])
        if st is None:
            out.create.append(rel)
            return
        if stat.S_ISLNK(st.st_mode):
            raise UnsafePath(
                f"{out.path / shown} is a symlink; gitmem never follows a symlink where memory "
                "lives: replace it with the real file or folder"
            )
        last = i == len(parts) - 1
        if not last and not stat.S_ISDIR(st.st_mode):
            raise InvalidInput(f"{out.path / shown} is a file; gitmem needs a folder there")
        if not last and i == 0 and len(parts) == 2 and parts[1] == KEEP:
            if any(here.iterdir()):  # a folder of the person's: kept, no placeholder needed
                _keep(out, f"{shown}/")
                return
            continue
        if last:
            if not stat.S_ISREG(st.st_mode):
                raise InvalidInput(f"{out.path / shown} is not a file; gitmem needs a file there")
            _keep(out, shown)
            return


def _keep(out: AdoptPlan, shown: str) -> None:
    if shown not in out.kept:
        out.kept.append(shown)


def apply(p: AdoptPlan, commit_env: dict[str, str], message: str) -> list[str]:
    """Write the planned files and commit them (only them) on ``main``; returns what
    was undone-able until the commit. On failure before the commit, undo it all."""
    git = Git(p.path)
    template = shipped("template-repo")
    made_files: list[Path] = []
    made_dirs: list[Path] = []
    old_head = None
    saved = _save(git) if p.repo else {}
    try:
        if not p.repo:
            git.run("init", "-q", "-b", MAIN)
        elif p.switch:
            old_head = p.head
            if p.born:
                git.run("update-ref", f"refs/heads/{MAIN}", "HEAD", "")
            git.run("symbolic-ref", "HEAD", f"refs/heads/{MAIN}")
        for rel in p.create:
            dest = p.path / rel
            for parent in reversed(dest.relative_to(p.path).parents):
                d = p.path / parent
                if parent != Path(".") and not d.exists():
                    d.mkdir()
                    made_dirs.append(d)
            text = (template / rel).read_bytes()
            if rel in SUBSTITUTED:
                text = text.decode("utf-8").replace("{client}", p.client).encode("utf-8")
            with open(dest, "xb") as fh:  # never over a file that appeared meanwhile
                made_files.append(dest)
                fh.write(text)
        git.run("add", "-f", "--", *p.create)
        git.run("commit", "-q", "--no-verify", "-m", message, env=commit_env)
    except BaseException:
        _undo(p, git, made_files, made_dirs, old_head)
        for f, data in saved.items():  # what git itself wrote on the way, byte for byte
            if data is None:
                f.unlink(missing_ok=True)
            else:
                f.write_bytes(data)
        raise
    return p.create


def _save(git: Git) -> dict[Path, bytes | None]:
    gitdir = Path(git.out("rev-parse", "--absolute-git-dir"))
    out: dict[Path, bytes | None] = {}
    for f in (gitdir / "index", gitdir / "logs" / "HEAD", gitdir / "COMMIT_EDITMSG"):
        out[f] = f.read_bytes() if f.exists() else None
    return out


def _undo(
    p: AdoptPlan, git: Git, files: list[Path], dirs: list[Path], old_head: str | None
) -> None:
    if not p.repo:
        shutil.rmtree(p.path / ".git", ignore_errors=True)
    else:
        if files:
            git.run("rm", "-q", "--cached", "--ignore-unmatch", "--", *p.create, check=False)
        if old_head is not None:
            git.run("symbolic-ref", "HEAD", f"refs/heads/{old_head}", check=False)
            if p.born:
                git.run("update-ref", "-d", f"refs/heads/{MAIN}", check=False)
    for f in files:
        f.unlink(missing_ok=True)
    for d in reversed(dirs):
        with contextlib.suppress(OSError):  # a file of someone else's appeared in it
            d.rmdir()
