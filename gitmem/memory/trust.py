"""Settings that protect this machine change only when this machine says so.

``GUARDS`` are the settings of ``gitmem.toml`` that weaken a check when changed one way:
``memory.review`` (``auto`` lands an agent's session unseen), ``[secrets] allow`` (a
pattern there is a secret let through), ``limits.max_edit_bytes`` and
``limits.max_card_bytes`` (how much one edit may bring in). The others (model, prices,
budgets, intervals) change what the agent costs or how it reads memory, not what it may
commit; ``gitmem sync`` names every change to ``gitmem.toml``.

When ``gitmem sync`` brings a ``gitmem.toml`` that weakens a guarded setting, the value
this machine had is held in ``held-settings.json`` under the common git dir's
``gitmem/`` (local, never synced) and applies, with whatever part of the remote's change
is stricter, until ``gitmem trust`` accepts the file. A person's own edit of
``gitmem.toml`` applies as it always did; strengthening always applies at once.

The signers are held the same way (``SIGNERS``, ``gitmem trust signers``): git verifies
signatures against ``allowed_signers`` beside that record, a copy of the tracked file;
a key that a sync's ``allowed_signers`` no longer lists leaves the copy at once, a key
it adds waits in the record until this machine trusts it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from gitmem.errors import ConfigError, InvalidInput
from gitmem.memory.config import Config


class _Rooted(Protocol):  # a MemoryRepo; the repo module reads its settings from here
    @property
    def root(self) -> Path: ...

    def signers_sealed(self) -> bool: ...

    def seal_signers(self) -> None: ...


FILE = "held-settings.json"
SIGNERS = "signers"  # the hold of keys a remote's allowed_signers added
TRUSTED = "allowed_signers"  # beside FILE: the keys git verifies signatures against
RECORDED = ("keep", "proposed", "remote", "commit")  # a hold's fields in the file


def _review(a: Any, b: Any) -> Any:
    return "review" if "review" in (a, b) else "auto"


def _allow(a: Any, b: Any) -> Any:
    return tuple(p for p in a if p in b)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


@dataclass(frozen=True)
class Guard:
    key: str  # as gitmem.toml spells it
    field: str  # the Config attribute
    stricter: Callable[[Any, Any], Any]  # the stricter of two values (both, when mixed)
    valid: Callable[[Any], bool]


GUARDS = (
    Guard("memory.review", "review", _review, lambda v: v in ("auto", "review")),
    Guard(
        "secrets.allow",
        "secrets_allow",
        _allow,
        lambda v: isinstance(v, tuple) and all(isinstance(p, str) for p in v),
    ),
    Guard("limits.max_edit_bytes", "max_edit_bytes", min, _is_int),
    Guard("limits.max_card_bytes", "max_card_bytes", min, _is_int),
)


@dataclass(frozen=True)
class HeldSetting:
    """A guarded setting kept at this machine's value: ``keep`` applies, ``proposed`` is
    what ``remote``'s ``gitmem.toml`` (at ``commit``) asked for."""

    key: str
    keep: Any
    proposed: Any
    remote: str
    commit: str

    def to_json(self) -> dict[str, object]:
        """Its fields and ``applies``: what applies while gitmem.toml says ``proposed``."""
        data = {**asdict(self), "applies": kept(self)}
        return {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}


def shown(value: Any) -> str:
    """A value as gitmem.toml would spell it."""
    return json.dumps(list(value) if isinstance(value, tuple) else value)


@dataclass(frozen=True)
class Setting:
    """A guarded setting as it applies here: ``source`` is "gitmem.toml", "default" or
    "held" (this machine's value, while ``held.remote``'s file says ``held.proposed``)."""

    key: str
    value: Any
    source: str
    held: HeldSetting | None = None

    def to_json(self) -> dict[str, object]:
        value = list(self.value) if isinstance(self.value, tuple) else self.value
        return {**asdict(self), "value": value, "held": self.held and self.held.to_json()}


def in_force(root: Path) -> Config:
    """The settings in force here: ``gitmem.toml``, with the protective settings a remote
    weakened still held at this machine's values until ``gitmem trust``."""
    from gitmem.memory.config import load_file

    return apply(load_file(root), held(root))


def settings(root: Path) -> list[Setting]:
    """Each guarded setting's value here and where it comes from."""
    import tomllib

    from gitmem.memory.config import FILENAME, load_file

    file, holds = load_file(root), held(root)
    applies = apply(file, holds)
    path = root / FILENAME
    data = tomllib.loads(path.read_text("utf-8")) if path.exists() else {}
    out = []
    for g in GUARDS:
        table, _, name = g.key.partition(".")
        value = getattr(applies, g.field)
        if value != getattr(file, g.field):
            out.append(Setting(g.key, value, "held", holds[g.key]))
        else:
            out.append(
                Setting(g.key, value, FILENAME if name in data.get(table, {}) else "default")
            )
    return out


def record_path(root: Path) -> Path:
    """``<common git dir>/gitmem/held-settings.json``: shared by every worktree of the repo."""
    dot = root / ".git"
    if dot.is_file():  # a linked worktree: "gitdir: <path>"
        dot = (root / dot.read_text().partition(":")[2].strip()).resolve()
    common = dot / "commondir"
    if common.exists():
        dot = (dot / common.read_text().strip()).resolve()
    return dot / "gitmem" / FILE


def held(root: Path) -> dict[str, HeldSetting]:
    """The settings held on this machine ({} when none); a damaged record is refused
    rather than read as "nothing held"."""
    path = record_path(root)
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise _damaged(path, exc) from None
    guards = {g.key: g for g in GUARDS}
    out: dict[str, HeldSetting] = {}
    try:
        for key, item in data.items():
            keep, proposed = (
                tuple(v) if isinstance(v, list) else v for v in (item["keep"], item["proposed"])
            )
            ok = _lines(keep) and _lines(proposed) if key == SIGNERS else None
            if not ok and (key not in guards or not guards[key].valid(keep)):
                raise ValueError(f"{key} = {keep!r}")
            out[key] = HeldSetting(key, keep, proposed, str(item["remote"]), str(item["commit"]))
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise _damaged(path, exc) from None
    return out


def _damaged(path: Path, exc: Exception) -> ConfigError:
    return ConfigError(
        f"{path} is damaged ({exc}); `gitmem trust` accepts gitmem.toml's settings as they are"
    )


def apply(cfg: Config, holds: dict[str, HeldSetting]) -> Config:
    """``cfg`` with each held setting at the stricter of its value and the one kept."""
    changes = {
        g.field: g.stricter(getattr(cfg, g.field), holds[g.key].keep)
        for g in GUARDS
        if g.key in holds
    }
    return replace(cfg, **changes) if changes else cfg


def hold(root: Path, before: Config, after: Config, remote: str, commit: str) -> list[HeldSetting]:
    """Record the guarded settings that ``after`` (gitmem.toml as a sync leaves it) weakens
    against what applied with ``before``; returns those held that this step changed."""
    old = held(root)
    was = apply(before, old)
    now: dict[str, HeldSetting] = {k: h for k, h in old.items() if k == SIGNERS}
    for g in GUARDS:
        mine, theirs = getattr(was, g.field), getattr(after, g.field)
        if g.stricter(theirs, mine) == theirs:
            continue  # as strict as what applied: it applies
        prior = old.get(g.key)
        keep = prior if prior is not None and prior.proposed == theirs else None
        now[g.key] = keep or HeldSetting(g.key, mine, theirs, remote, commit)
    _write(root, now)
    return [
        h
        for h in now.values()
        if h.key != SIGNERS and getattr(after, _field(h.key)) != getattr(before, _field(h.key))
    ]


def _field(key: str) -> str:
    return next(g.field for g in GUARDS if g.key == key)


def kept(h: HeldSetting) -> Any:
    """What applies while ``h`` is held and gitmem.toml says ``h.proposed``."""
    if h.key == SIGNERS:
        return h.keep
    return next(g.stricter(h.proposed, h.keep) for g in GUARDS if g.key == h.key)


def accept_settings(repo: _Rooted, settings: Iterable[str] = ()) -> list[HeldSetting]:
    """Let gitmem.toml's values apply here for ``settings`` (e.g. "memory.review"; every
    held one when none): ``gitmem trust``. Returns the holds let go (``Held``); raises
    ``InvalidInput`` for a name that is not a protective setting. A damaged record is
    replaced."""
    root, wanted = repo.root, list(settings)
    unknown = [k for k in wanted if k not in {g.key for g in GUARDS} | {SIGNERS}]
    if unknown:
        names = ", ".join([*(g.key for g in GUARDS), SIGNERS])
        raise InvalidInput(f"no protective setting {unknown[0]!r} (they are: {names})")
    try:
        old = held(root)
    except ConfigError:
        old = {}
        if wanted:
            raise
        record_path(root).unlink()
    gone = [h for k, h in old.items() if not wanted or k in wanted]
    # `gitmem trust signers` seals the signers as they are then, changed by hand or not
    # (verify named them); else a file changed by hand stays unsealed.
    reseal = SIGNERS in wanted or repo.signers_sealed()
    for h in gone:
        if h.key == SIGNERS:  # the keys shown as held, no others
            have = signers(trusted_path(root).read_bytes()) if trusted_path(root).exists() else []
            _write_signers(root, have + [k for k in h.proposed if k not in have])
    _write(root, {k: h for k, h in old.items() if h not in gone})
    if reseal:
        repo.seal_signers()
    return gone


def _write(root: Path, holds: dict[str, HeldSetting]) -> None:
    path = record_path(root)
    if not holds:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    data = {k: {f: h.to_json()[f] for f in RECORDED} for k, h in holds.items()}
    tmp.write_text(json.dumps(data, indent=1) + "\n", "utf-8")
    os.replace(tmp, path)


# -- signers ---------------------------------------------------------------------------
def _lines(value: Any) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, str) for v in value)


def trusted_path(root: Path) -> Path:
    """``<common git dir>/gitmem/allowed_signers``: the keys git verifies against here."""
    return record_path(root).with_name(TRUSTED)


def signers(data: bytes) -> list[str]:
    """The entries of an ``allowed_signers`` file (git's format): its lines, blank
    lines and comments left out."""
    lines = (ln.strip() for ln in data.decode("utf-8", "replace").splitlines())
    return [ln for ln in lines if ln and not ln.startswith("#")]


def hold_signers(root: Path, tracked: bytes, remote: str, commit: str) -> HeldSetting | None:
    """The tracked ``allowed_signers`` as a sync left main (at ``commit``): a key it no
    longer lists is no longer trusted here, at once; keys it adds are held until
    ``gitmem trust signers``. Returns that hold (None: nothing is held)."""
    path = trusted_path(root)
    have = signers(path.read_bytes()) if path.exists() else []
    want = signers(tracked)
    kept = [ln for ln in have if ln in want]
    if kept != have:
        _write_signers(root, kept)
    new = tuple(ln for ln in want if ln not in have)
    holds = {k: h for k, h in held(root).items() if k != SIGNERS}
    prior = held(root).get(SIGNERS)
    hold = None
    if new:
        hold = HeldSetting(SIGNERS, tuple(kept), new, remote, commit)
        if prior is not None and prior.proposed == new:
            hold = prior  # held since an earlier sync: it keeps that sync's remote and commit
        holds[SIGNERS] = hold
    _write(root, holds)
    return hold


def _write_signers(root: Path, lines: list[str]) -> None:
    path = trusted_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text("".join(f"{ln}\n" for ln in lines), "utf-8")
    os.replace(tmp, path)
