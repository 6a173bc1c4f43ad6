"""``gitmem init``: a new client memory repository from ``template-repo/``."""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from . import hooks, index, names
from .errors import GitmemError, InvalidInput
from .git import Git
from .paths import shipped
from .repo import MAIN, MemoryRepo

_SUBSTITUTED = ("gitmem.toml", "persona.md")


@dataclass(frozen=True)
class InitResult:
    path: str
    client: str
    commit: str
    hooks: list[str]

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def _check_target(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise InvalidInput(f"{path} exists and is not a directory")
    if path.is_dir() and any(path.iterdir()):
        raise InvalidInput(f"{path} is not empty; gitmem init needs a new or empty directory")


def init_repo(path: Path, client: str | None = None) -> InitResult:
    """Create the repo at ``path``; on any failure, remove what was created."""
    path = path.expanduser().absolute()
    name = names.client(client or names.slugify(path.name) or "client")
    _check_target(path)
    existed = path.exists()
    try:
        return _init(path, name)
    except BaseException:
        if existed:
            for child in path.iterdir():
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        else:
            shutil.rmtree(path, ignore_errors=True)
        raise


def _init(path: Path, name: str) -> InitResult:
    template = shipped("template-repo")
    shutil.copytree(template, path, dirs_exist_ok=True)
    for rel in _SUBSTITUTED:
        f = path / rel
        if f.exists():
            f.write_text(f.read_text("utf-8").replace("{client}", name), "utf-8")
    git = Git(path)
    git.run("init", "-q", "-b", MAIN)
    git.run("add", "-A")
    env: dict[str, str] = {}
    with MemoryRepo(path) as repo:
        for role in ("AUTHOR", "COMMITTER"):
            env[f"GIT_{role}_NAME"], env[f"GIT_{role}_EMAIL"] = repo.identity(role)
        git.run(
            "commit", "-q", "--no-verify", "-m", f"gitmem: new memory for client {name}", env=env
        )
        installed = hooks.install(path)
        index.refresh(repo, MAIN)
        commit = repo.tip(MAIN)
    if commit is None:  # pragma: no cover - git commit succeeded
        raise GitmemError("the first commit was not created")
    return InitResult(str(path), name, commit, [a.hook for a in installed])
