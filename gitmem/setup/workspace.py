"""Many clients side by side: the workspace folder, client lookup, the shared persona base."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

from gitmem.errors import ConfigError, NotFound
from gitmem.git import safe_files
from gitmem.memory import names
from gitmem.memory.config import FILENAME

PERSONA = "persona.md"


def workspace_home() -> Path:
    """``$GITMEM_HOME``, or ``~/gitmem``."""
    env = os.environ.get("GITMEM_HOME")
    return Path(env).expanduser() if env else Path.home() / "gitmem"


def client_path(name: str) -> Path:
    """Where the workspace client ``name`` lives (``$GITMEM_HOME/<name>``); checks the name."""
    return workspace_home() / names.client(name)


def find_client(name: str) -> Path:
    path = client_path(name)
    if not (path / FILENAME).is_file():
        raise NotFound(
            f"no client {name!r} in {workspace_home()}",
            hint=f"create it with `gitmem init --client {name}`; `gitmem clients` lists them",
        )
    return path


@dataclass(frozen=True)
class ClientInfo:
    """A client of the workspace: its name, path, and the date and subject of its last
    memory edit (``None`` for a repo with none)."""

    name: str
    path: str
    last_activity: str | None  # ISO date of the last memory edit on main
    last_subject: str | None  # its summary

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def list_clients() -> list[ClientInfo]:
    """The clients in the workspace; a client's last activity is its last memory edit
    (a session's transcript or usage commit is not one)."""
    from gitmem.features.audit import audit_log
    from gitmem.memory.repo import MemoryRepo

    root = workspace_home()
    if not root.is_dir():
        return []
    out: list[ClientInfo] = []
    for path in sorted(root.iterdir()):
        if not (path / FILENAME).is_file() or not (path / ".git").exists():
            continue
        with MemoryRepo(path) as repo:
            last = audit_log(repo, limit=1, edits_only=True) if repo.tip("main") else []
        date, subject = (last[0].date, last[0].summary) if last else (None, None)
        out.append(ClientInfo(path.name, str(path), date, subject))
    return out


def persona(repo_root: Path) -> str:
    """Layer A: the workspace's shared base, then the client's own part (a file of the
    repo, so never read through a symlink: a synced one could point anywhere)."""
    parts = []
    base = workspace_home() / PERSONA
    if base.is_file():
        parts.append(_text(base.read_bytes(), str(base)))
    own = safe_files.read(repo_root, PERSONA)
    if own is not None:
        parts.append(_text(own, str(repo_root / PERSONA)))
    return "\n\n".join(p for p in parts if p) + "\n"


def _text(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ConfigError(f"{where} is not valid UTF-8; save it as UTF-8 text") from None
