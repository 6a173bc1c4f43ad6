"""What a sync reports: ``SyncResult`` (its status, what moved; `gitmem sync` shows it)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from gitmem.errors import ConfigError
from gitmem.git.runner import Sha
from gitmem.memory import config, trust
from gitmem.memory.config import Config
from gitmem.memory.repo import ALLOWED_SIGNERS, MemoryRepo
from gitmem.memory.trust import HeldSetting
from gitmem.ops.merge import FileConflict


@dataclass(frozen=True)
class SyncResult:
    """A sync's outcome: ``status`` up-to-date, synced, conflict (both versions kept until
    ``continue_sync`` or ``abort_sync``) or aborted; commits received and sent, sessions
    published and decided."""

    remote: str
    status: str  # up-to-date | synced | conflict | aborted
    main: str | None
    received: int = 0
    sent: int = 0
    merged: bool = False
    conflicts: list[FileConflict] = field(default_factory=list)
    note: str = ""
    # Files that change how the agent behaves (persona, settings) that this sync changed,
    # and the commits before and after, so a person can look: `git diff BEFORE AFTER -- ...`.
    behaviour: list[str] = field(default_factory=list)
    before: str | None = None
    # Protective settings the remote's gitmem.toml weakened, held here (trust.HeldSetting.to_json)
    # until `gitmem trust`.
    held: list[dict[str, object]] = field(default_factory=list)
    # Sessions: published here (their branch created or grown on the remote), decisions this
    # machine sent, sessions archived here because they were decided on another machine.
    published: list[str] = field(default_factory=list)
    decided: list[str] = field(default_factory=list)
    settled: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)  # remote sessions to review here
    rounds: int = 1  # push rounds it took (more than one: another machine pushed first)
    # Commits received that no key this clone trusts signed: {commit, state, author, date,
    # subject} (``incoming_unverified``); `gitmem verify` says what to do with each.
    unverified: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def held_settings(
    repo: MemoryRepo, remote: str, before: str | None, after: str | None, incoming: bool = False
) -> list[HeldSetting]:
    """Hold the protective settings that gitmem.toml at ``after`` weakens against
    ``before`` (main's tips around a sync); the holds that are new. ``incoming``: ``after``
    is the remote's tip, not yet integrated; only what it changed since the merge base
    counts (the merge keeps the rest of ``before``)."""
    old, new = _settings(repo, before), _settings(repo, after)
    if old is None:  # not valid before: compare with the strictest review and no exception
        old = Config(review="review")
    if new is None or after is None or before == after:
        return []  # an invalid file is refused by every command until it is fixed
    guarded = [g.field for g in trust.GUARDS]
    if (
        incoming and before is not None and any(getattr(new, f) != getattr(old, f) for f in guarded)
    ):  # (the merge base can only take back a change: none, no base asked)
        proc = repo.git.run("merge-base", before, after, check=False)
        base = _settings(repo, proc.stdout.decode().strip()) if not proc.returncode else None
        if base is not None:
            changed = {
                g.field: getattr(new, g.field)
                for g in trust.GUARDS
                if getattr(new, g.field) != getattr(base, g.field)
            }
            new = replace(old, **changed)
    return trust.hold(repo.root, old, new, remote, after)


def held_signers(repo: MemoryRepo, remote: str, main: str) -> list[HeldSetting]:
    """Trust here what main's ``allowed_signers`` no longer lists no more, at once; hold
    the keys it adds until ``gitmem trust signers``. The hold, when there is one."""
    tracked = repo.store.read_blob(f"{main}:{ALLOWED_SIGNERS}")
    if tracked is None or repo.signing_off_by():
        return []
    sealed = repo.signers_sealed()  # (a file changed by hand stays unsealed: none trusted)
    hold = trust.hold_signers(repo.root, tracked, remote, main)
    if sealed:
        repo.seal_signers()
    return [hold] if hold else []


def incoming_unverified(repo: MemoryRepo, before: str | None, main: str) -> list[dict[str, str]]:
    """The commits ``before..main`` brought that this clone did not write and no key it
    trusts signed, newest first: nothing for a repo that does not sign."""
    if repo.store.read_blob(f"{main}:{ALLOWED_SIGNERS}") is None or before == main:
        return []
    span = [f"{before}..{main}"] if before else [main]
    own = repo.signed_own()
    # One log names the range's commits and says who made each (the list is what came in).
    fmt = "--format=%H%x1f%an%x1f%as%x1f%s"
    raw = repo.git.run("log", "-z", fmt, *span, "--").stdout.decode("utf-8", "replace")
    facts = [r.strip("\n").split("\x1f", 3) for r in raw.split("\0") if r.strip()]
    listed = [Sha(f[0]) for f in facts if f[0] not in own]
    verdicts = repo.verdicts(listed)
    return [
        dict(commit=sha, state=verdicts[Sha(sha)].state, author=author, date=date, subject=subject)
        for sha, author, date, subject in facts
        if sha not in own and verdicts[Sha(sha)].state != "trusted"
    ]


def _settings(repo: MemoryRepo, commit: str | None) -> Config | None:
    data = repo.store.read_blob(f"{commit}:{config.FILENAME}") if commit else None
    try:
        return config.parse(data.decode("utf-8") if data is not None else "")
    except (ConfigError, UnicodeDecodeError):
        return None


# What the agent follows rather than reads: a sync that changes them says so.
BEHAVIOUR_FILES = ("persona.md", "gitmem.toml")


def behaviour_changes(repo: MemoryRepo, before: str | None, after: str | None) -> list[str]:
    """The behaviour files that differ between ``before`` and ``after`` (main's tips)."""
    if before is None or after is None or before == after:
        return []
    # (their tree entries compared, as git diff --name-only does: read in-process)
    return [p for p in BEHAVIOUR_FILES if repo.store.entry(before, p) != repo.store.entry(after, p)]
