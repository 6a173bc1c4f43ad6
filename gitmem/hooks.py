"""Installing gitmem's git hooks politely, and what they run.

``python -m gitmem.hooks commit FILE`` makes every check of a person's commit (an
unfinished update, secrets staged, the message's trailers); ``python -m gitmem.hooks
refresh`` keeps the index cache fresh after checkout, merge and rewrite. ``commit-msg``,
``pre-commit`` and ``scan-staged`` are each one of those checks (hooks installed by an
older gitmem call the first two).
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from gitmem.git.runner import Git
from gitmem.memory import trailers as T
from gitmem.memory.cards import card_path, section_ids

from .errors import GitmemError, InvalidInput
from .paths import shipped

MARKER = "gitmem-hook v1"
HOOKS = ("commit-msg", "post-checkout", "post-merge", "post-rewrite")
# Hooks an older gitmem installed and this one does not: their checks moved into commit-msg
# (one shell per commit instead of two). Installing removes gitmem's, and puts back the
# person's own hook it had kept as ``.legacy``.
RETIRED = ("pre-commit",)
FINDER = "find-gitmem.sh"  # spliced into each hook at install: finds gitmem when it runs


@dataclass(frozen=True)
class HookAction:
    """One hook and what installing did to it (installed, updated, already up to date, or a
    foreign hook kept as ``.legacy``)."""

    hook: str
    action: str  # "installed", "updated", "up-to-date", "kept-legacy", "removed", "restored-legacy"

    @property
    def in_place(self) -> bool:
        """Whether this is one of gitmem's hooks, now installed (not one removed)."""
        return self.hook in HOOKS


def hooks_dir(root: Path) -> Path:
    rel = Git(root).out("rev-parse", "--git-path", "hooks")
    return (root / rel).resolve()


def check(root: Path) -> None:
    """Raise what ``install`` would refuse, before anything is written: ``gitmem init``
    adopting a repo checks first, so a refusal leaves the repo as it was."""
    target = hooks_dir(root)
    for name in HOOKS:
        dest, legacy = target / name, target / f"{name}.legacy"
        if dest.exists() and MARKER not in dest.read_text(errors="replace") and legacy.exists():
            raise InvalidInput(
                f"{dest} is not gitmem's and {legacy.name} exists too; refusing to overwrite",
                hint=f"merge them by hand, then remove {dest} and run `gitmem install-hooks`",
            )


def render_hook(source: Path, name: str) -> str:
    """A hook's text as installed: the gitmem finder spliced in, this Python recorded first."""
    finder = (source / FINDER).read_text().rstrip("\n")
    text = (source / name).read_text().replace("@FIND_GITMEM@", finder)
    package = str(Path(__file__).resolve().parent)
    return text.replace("@PYTHON@", sys.executable).replace("@PACKAGE@", package)


def install_hooks(root: str | os.PathLike[str]) -> list[HookAction]:
    """Install every hook; an existing foreign hook becomes ``<hook>.legacy`` and still runs."""
    target = hooks_dir(Path(root).expanduser())
    target.mkdir(parents=True, exist_ok=True)
    source = shipped("hooks")
    actions: list[HookAction] = []
    planned: list[tuple[Path, str, str]] = []
    for name in HOOKS:
        text = render_hook(source, name)
        dest = target / name
        if dest.exists() and MARKER not in dest.read_text(errors="replace"):
            legacy = target / f"{name}.legacy"
            if legacy.exists():
                raise InvalidInput(
                    f"{dest} is not gitmem's and {legacy.name} exists too; refusing to overwrite",
                    hint=f"merge them by hand, then remove {dest} and run `gitmem install-hooks`",
                )
            planned.append((dest, text, "kept-legacy"))
        elif not dest.exists():
            planned.append((dest, text, "installed"))
        elif dest.read_text(errors="replace") == text and os.access(dest, os.X_OK):
            planned.append((dest, text, "up-to-date"))
        else:
            planned.append((dest, text, "updated"))
    for dest, text, action in planned:  # only after every hook was checked: all or nothing
        if action == "up-to-date":
            actions.append(HookAction(dest.name, action))
            continue
        if action == "kept-legacy":
            dest.rename(dest.with_name(f"{dest.name}.legacy"))
        dest.write_text(text)
        dest.chmod(dest.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        actions.append(HookAction(dest.name, action))
    return actions + _retire(target)


def _retire(target: Path) -> list[HookAction]:
    """Remove the hooks an older gitmem installed that this one does not; a person's hook
    kept as ``<hook>.legacy`` is put back in its place (git runs it as before)."""
    actions = []
    for name in RETIRED:
        dest, legacy = target / name, target / f"{name}.legacy"
        if not dest.exists() or MARKER not in dest.read_text(errors="replace"):
            continue  # not there, or not gitmem's: left alone
        if legacy.exists():
            legacy.replace(dest)
            actions.append(HookAction(name, "restored-legacy"))
        else:
            dest.unlink()
            actions.append(HookAction(name, "removed"))
    return actions


def _strip_comments(message: str) -> str:
    return "\n".join(ln for ln in message.split("\n") if not ln.startswith("#"))


def check_commit_message(root: Path, message: str) -> None:
    """Raise InvalidInput when the message's gitmem trailers are wrong for the staged tree."""
    git = Git(root)
    # The block as git log finds it for the index: past a "---" line, default separators.
    parsed = git.run(
        *T.DEFAULT_BLOCKS,
        "interpret-trailers",
        "--parse",
        "--no-divider",
        input=_strip_comments(message).encode(),
    )
    pairs = []
    for line in parsed.stdout.decode("utf-8", "replace").splitlines():
        key, sep, value = line.partition(":")
        if sep:
            pairs.append((key.strip(), value.strip()))
    found = T.validate(pairs)
    # gitmem writes its own commits with plumbing (no hook runs): a commit that comes
    # through here is a person's, and cannot speak for the agent or a session.
    if T.SESSION in found:
        raise InvalidInput(
            f"{T.SESSION} is written by gitmem only: a person's commit cannot claim a session"
        )
    actor = found.get(T.ACTOR)
    if actor is not None and actor.lower() in T.AGENT_ACTORS:
        raise InvalidInput(
            f"{T.ACTOR}: {actor} is gitmem's own; a person's commit names the person, or no actor"
        )
    _check_entry_secrets(root, found)
    card = found.get(T.CARD)
    if not card or T.REVERTS in found:
        return
    env = {}
    index_file = os.environ.get("GIT_INDEX_FILE")
    if index_file:  # `git commit -a` and `git commit PATH` stage into a temporary index
        env["GIT_INDEX_FILE"] = str((root / index_file).resolve())
    proc = git.run("cat-file", "blob", f":{card_path(card)}", check=False, env=env)
    if proc.returncode != 0:
        raise InvalidInput(f"{T.CARD} names {card!r} but {card_path(card)} is not in this commit")
    wanted = [found[T.SECTION]] if found.get(T.SECTION) else []
    wanted += [ln.partition("\t")[0] for ln in found.get(T.MORE_SECTIONS, "").split("\n") if ln]
    ids = section_ids(proc.stdout.decode("utf-8", "replace")) if wanted else []
    for section in wanted:
        if section not in ids:
            raise InvalidInput(
                f"{T.SECTION} {section!r} is not a section of {card_path(card)} "
                f"(sections: {', '.join(ids) or 'none'})"
            )


def _check_entry_secrets(root: Path, found: dict[str, str]) -> None:
    """The index entry a person's commit carries is scanned as an agent's is."""
    from gitmem.memory import secrets
    from gitmem.memory.trust import in_force

    texts = [(key, found[key]) for key in (T.SUMMARY, T.KEYWORDS) if key in found]
    if texts:
        secrets.check(texts, in_force(root).secrets_allow)


def refuse_half_followed(root: Path) -> int:
    """A person's commit must not record a working tree gitmem had not finished
    updating (it would quietly undo the agent's edit)."""
    from gitmem.memory.repo import MemoryRepo
    from gitmem.ops.worktree import pending_paths

    try:
        with MemoryRepo.discover(root) as repo:
            paths = pending_paths(repo)
    except GitmemError:
        return 0
    if not paths:
        return 0
    print(
        f"gitmem: commit refused: gitmem's update of {', '.join(paths)} was interrupted and the "
        "working tree is behind the branch; run `gitmem recover`, then commit again",
        file=sys.stderr,
    )
    return 1


def scan_staged(root: Path, message_path: str | None = None) -> int:
    """Every file a person stages is scanned for secrets as an agent's edit is (the lines
    the commit adds: sync pushes every file); a finding, or conflict markers in cards,
    persona or synthesis, refuses the commit. The
    refusal comes after the editor: it says how to commit again with the message written
    (``message_path``, the file commit-msg was given)."""
    from gitmem.memory import secrets
    from gitmem.memory.trust import in_force

    git = Git(root)
    env = {}
    index_file = os.environ.get("GIT_INDEX_FILE")
    if index_file:  # `git commit -a` and `git commit PATH` stage into a temporary index
        env["GIT_INDEX_FILE"] = str((root / index_file).resolve())
    try:
        allow = in_force(root).secrets_allow
        diff = git.run(
            "diff",
            "--cached",
            "-U0",
            "--no-color",
            "--no-renames",
            "--no-ext-diff",
            env=env,
        ).stdout.decode("utf-8", "surrogateescape")
    except GitmemError as err:
        print(f"gitmem: commit refused: {err}", file=sys.stderr)
        return 1
    from gitmem.features.scan import added_lines
    from gitmem.ops.merge import has_markers

    for path, added in added_lines(diff).items():
        memory = path.startswith("cards/") or path in ("persona.md", "synthesis.md")
        if memory and has_markers(
            "\n".join(t for _, t in added).encode("utf-8", "surrogateescape")
        ):
            print(
                f"gitmem: commit refused: {path} has conflict markers (<<<<<<< ... >>>>>>>); "
                "keep what you want of both versions, stage again and commit"
                f"{_again(message_path)}",
                file=sys.stderr,
            )
            return 1
        for f in secrets.scan_texts([(path, "\n".join(t for _, t in added))], allow):
            line = added[f.line - 1][0]
            print(
                f"gitmem: commit refused: a secret ({f.kind} in {path} line {line}) must not be "
                "committed; remove it (or mark the line gitmem:allow-secret), "
                f"stage again and commit{_again(message_path)}",
                file=sys.stderr,
            )
            return 1
    return 0


def refuse_message(root: Path, path: str) -> int:
    """A person's commit message whose gitmem trailers are wrong refuses the commit."""
    try:
        message = Path(path).read_text("utf-8")
        check_commit_message(root, message)
    except UnicodeDecodeError:
        print("gitmem: commit refused: the message is not valid UTF-8", file=sys.stderr)
        return 1
    except GitmemError as err:
        print(f"gitmem: commit refused: {err}", file=sys.stderr)
        return 1
    return 0


def _again(message_path: str | None) -> str:
    if message_path is None or Path(message_path).name != "COMMIT_EDITMSG":
        return ""  # a merge's message waits in MERGE_MSG, for `git commit` to use it
    return f" (your message is kept: `git commit -e -F {message_path}`)"


def refuse_stopped_sync(root: Path) -> int:
    """While a sync is stopped at a conflict main waits for it: a person's commit there
    (``git commit -a`` would take the conflict markers) is refused, naming the way out."""
    from gitmem.memory.repo import MAIN, MemoryRepo

    try:
        with MemoryRepo.discover(root) as repo:
            if repo.head_branch() != MAIN:
                return 0  # main does not move: the sync takes up from where it stopped
    except GitmemError:
        return 0
    print(
        "gitmem: commit refused: a sync is stopped at a conflict and main waits for it; "
        "settle the conflicted cards and run `gitmem sync --continue`, or "
        "`gitmem sync --abort`, then commit",
        file=sys.stderr,
    )
    return 1


def _marked(root: Path, name: str) -> bool:
    """Whether gitmem left ``name`` under its folder (an unfinished update, a stopped sync),
    found as the hook's shell finds it: MemoryRepo is not imported for a marker that is not
    there."""
    git_dir = os.environ.get("GIT_DIR")
    if git_dir is None and (root / ".git").is_dir():
        git_dir = ".git"
    if git_dir is None:
        proc = Git(root).run("rev-parse", "--git-dir", check=False)
        if proc.returncode != 0:
            return True  # refuse_half_followed says what is wrong, or lets it through
        git_dir = proc.stdout.decode("utf-8", "surrogateescape").strip()
    return (root / git_dir / "gitmem" / name).exists()


def check_commit(root: Path, message_path: str) -> int:
    """Every check of a person's commit: an unfinished update, a stopped sync, the staged
    lines' secrets and conflict markers, then the message's trailers."""
    if _marked(root, "follow") and refuse_half_followed(root):
        return 1
    if _marked(root, "sync-state.json") and refuse_stopped_sync(root):  # sync/state.py's file
        return 1
    return scan_staged(root, message_path) or refuse_message(root, message_path)


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m gitmem.hooks commit FILE | refresh [HOOK ARGS]", file=sys.stderr)
        return 2
    root = Path.cwd()
    if argv[0] == "commit":
        return check_commit(root, argv[1])
    if argv[0] == "commit-msg":
        return refuse_message(root, argv[1])
    if argv[0] == "pre-commit":
        return refuse_half_followed(root)
    if argv[0] == "scan-staged":
        return scan_staged(root, argv[1] if len(argv) > 1 else None)
    if argv[0] == "refresh":
        from gitmem.index import build as index
        from gitmem.memory.repo import MAIN, MemoryRepo
        from gitmem.ops.worktree import recover

        try:
            with MemoryRepo.discover(root) as repo:
                recover(repo)
                index.refresh(repo, MAIN)
                head = repo.head_branch()
                if head and head != MAIN:
                    index.refresh(repo, head)
        except Exception as err:  # a hook must never break the git command it follows
            print(f"gitmem: index refresh skipped: {err}", file=sys.stderr)
        return 0
    print(f"gitmem.hooks: unknown hook {argv[0]!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
