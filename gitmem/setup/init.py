"""``gitmem init``: a new client memory repository from ``template-repo/``."""

from __future__ import annotations

import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gitmem import hooks
from gitmem.errors import GitmemError, InvalidInput
from gitmem.git.runner import Git, restrict_umask
from gitmem.index import build as index
from gitmem.memory import names, trailers
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.paths import shipped
from gitmem.setup import adopt, signing
from gitmem.setup.adopt import AdoptPlan
from gitmem.setup.new_folder import undone_on_failure

_SUBSTITUTED = ("gitmem.toml", "persona.md")


@dataclass(frozen=True)
class InitResult:
    """A created (or adopted) repo: its path, client name, first commit, hooks installed;
    for an adopted folder, gitmem's files ``created`` and the ones ``kept`` as they were."""

    path: str
    client: str
    commit: str
    hooks: list[str]
    adopted: bool = False  # the folder had files (or a git repo) already: see adopt.py
    created: list[str] = field(default_factory=list)  # gitmem's files added when adopting
    kept: list[str] = field(default_factory=list)  # gitmem's paths that existed: not touched
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def describe(self) -> str:
        if not self.adopted:
            return f"Initialised memory for client {self.client} in {self.path}"
        lines = [
            f"Adopted {self.path} as memory for client {self.client}: "
            f"{_files(len(self.created))} of gitmem's added in one commit ({self.commit[:7]})"
        ]
        if self.kept:
            lines.append(f"kept as they were (yours, not overwritten): {', '.join(self.kept)}")
        lines += self.notes
        return "\n".join(lines)


def _check_target(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise InvalidInput(f"{path} exists and is not a directory")


def init_repo(
    path: str | os.PathLike[str],
    client: str | None = None,
    signing_key: str | os.PathLike[str] | None = None,
) -> InitResult:
    """Create a client memory repo at ``path`` (``client``: its name, default the folder's
    name) from gitmem's template, with a first commit on ``main`` and gitmem's hooks.

    A folder with files in it, or a git repo, is adopted instead (``adopt.py``): its
    history is kept and gitmem's files are added in one commit. Returns an
    ``InitResult``. Raises ``InvalidInput`` (not a directory, a bad name), ``Conflict``
    (uncommitted changes in a repo to adopt), ``GitError``; on any failure, what was
    created is removed. Its commits are signed with ``signing_key`` (default: this
    machine's key, made when missing) unless signing is off (``setup/signing.py``).
    """
    restrict_umask()  # the folders and template files are made before git runs
    path = Path(path).expanduser().absolute()
    key = Path(signing_key).expanduser() if signing_key is not None else None
    name = names.client(client or names.slugify(path.name) or "client")
    _check_target(path)
    if path.is_dir() and any(path.iterdir()):
        return _adopt(path, name, key)
    with undone_on_failure(path):
        return _init(path, name, key)


def _init(path: Path, name: str, signing_key: Path | None) -> InitResult:
    template = shipped("template-repo")
    shutil.copytree(template, path, dirs_exist_ok=True)
    for rel in _SUBSTITUTED:
        f = path / rel
        if f.exists():
            f.write_text(f.read_text("utf-8").replace("{client}", name), "utf-8")
    git = Git(path)
    git.run("init", "-q", "-b", MAIN)
    git.run("add", "-A")
    with MemoryRepo(path) as repo:
        key = signing.configure(repo, signing_key)  # the first commit is signed too
        first, sign = f"gitmem: new memory for client {name}\n", []
        if key is not None:
            first, sign = trailers.with_client(first, name), [f"-S{key}"]
        git.run("commit", "-q", "--no-verify", *sign, "-m", first, env=_commit_env(repo))
        if key is not None:
            signing.record_signer(repo, key)
        installed = hooks.install_hooks(path)
        index.refresh(repo, MAIN)
        commit = repo.tip(MAIN)
    if commit is None:  # pragma: no cover - git commit succeeded
        raise GitmemError("the first commit was not created")
    return InitResult(str(path), name, commit, [a.hook for a in installed if a.in_place])


def _commit_env(repo: MemoryRepo) -> dict[str, str]:
    env: dict[str, str] = {}
    for role in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{role}_NAME"], env[f"GIT_{role}_EMAIL"] = repo.identity(role)
    return env


def _adopt(path: Path, name: str, signing_key: Path | None) -> InitResult:
    """Adopt a folder with files, or a git repo: history kept, gitmem's files in one commit."""
    plan = adopt.plan(path, name)
    untracked = _untracked(path, plan)
    message = f"gitmem: adopt {path.name} as memory for client {name}\n"
    if plan.kept:
        message += f"\nKept as they were: {', '.join(plan.kept)}\n"
    with MemoryRepo(path) as probe:  # git config answers outside a repo too
        env = _commit_env(probe)
    created = adopt.apply(plan, env, message)
    installed = hooks.install_hooks(path)
    with MemoryRepo(path) as repo:
        if (key := signing.configure(repo, signing_key)) is not None:
            signing.record_signer(repo, key)
        index.refresh(repo, MAIN)
        commit = repo.tip(MAIN)
    if commit is None:  # pragma: no cover - git commit succeeded
        raise GitmemError("the adopting commit was not created")
    notes = list(plan.notes)
    if untracked:
        notes.append(
            f"{_files(untracked)} of yours {'is' if untracked == 1 else 'are'} not committed, "
            "as before: commit them with "
            f"git, or make your notes cards with `gitmem -C {path} import {path}`"
        )
    return InitResult(
        str(path),
        name,
        commit,
        [a.hook for a in installed if a.in_place],
        True,
        created,
        plan.kept,
        notes,
    )


def _untracked(path: Path, plan: AdoptPlan) -> int:
    """The person's files that no commit holds (left so, as ``git init`` leaves them)."""
    if plan.repo:
        out = Git(path).run("ls-files", "--others", "--exclude-standard", "-z").stdout
        return len([p for p in out.split(b"\0") if p])
    return sum(
        1 for p in path.rglob("*") if p.is_file() and ".git" not in p.relative_to(path).parts
    )


def _files(n: int) -> str:
    return f"{n} file{'' if n == 1 else 's'}"
