"""``GitMemoryTool``: the SDK's memory tool (``memory_20250818``) backed by a client repo.

The model sees exactly what ``BetaLocalFilesystemMemoryTool`` would show it -- the
same results and error messages for the same commands -- but ``/memories`` is the
``cards/`` tree of a branch, and every command that changes something is one
commit made with plumbing and compare-and-swap (``publish.commit_files``).

Mapping: ``/memories/<path>`` is ``cards/<path>``, any file name at any depth, as
the SDK allows. Only top-level ``<slug>.md`` files are cards; commits touching one
carry ``Gitmem-Card``. A directory the SDK would keep empty keeps a hidden
``.gitkeep`` (git stores no empty directories). It is invisible: every command
answers as the SDK's tool on a folder without that file, and making a file or
directory of that name is refused (it would read as a placeholder). A command
that fails changes and commits nothing.

Index: a change to a card carries the touched section's index entry derived from its
heading (``Gitmem-Section`` and ``Gitmem-Keywords`` from the heading's words) and no
``Gitmem-Summary``: the memory tool has no summary to give, so the index lists the
section as unindexed, with those keywords, until a write with a summary describes it.
Reverting the commit brings back the entry the section had before.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from anthropic.tools import BetaAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818Command,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from gitmem.bridges import memory_tool_text as tx
from gitmem.bridges.memory_tool_paths import Node, Parts, Snapshot, os_error
from gitmem.errors import GitmemError, NotFound
from gitmem.git.runner import Sha
from gitmem.index import provenance
from gitmem.memory import names, secrets
from gitmem.memory.cards import sections
from gitmem.memory.refs import SESSION_PREFIX
from gitmem.memory.repo import MemoryRepo
from gitmem.ops import publish
from gitmem.review import session_branches as sessions

ACTOR = "memory-tool"
Files = dict[str, bytes | None]


@dataclass(frozen=True)
class _Change:
    result: str  # what the model sees
    after: Mapping[Parts, Node | bytes]  # everything under cards/ after the command
    removed: Parts | None  # the subtree a delete or rename took away
    subject: str
    card: str | None
    section: tuple[str, str] | None = None  # (id, heading) of the card section touched


def _existing(snap: Snapshot, path: str) -> tuple[Parts, str]:
    """``path`` resolved, with its kind; the SDK's error when nothing is there."""
    parts = snap.resolve(path)
    kind = snap.kind(parts)
    if kind is None:
        raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
    return parts, kind


def _text_file(snap: Snapshot, path: str) -> tuple[Parts, str]:
    parts, kind = _existing(snap, path)
    if kind != "file":
        raise ToolError(f"The path {path} is not a file.")
    return parts, snap.text(parts, path)


class GitMemoryTool(BetaAbstractMemoryTool):
    """The Anthropic memory tool over a gitmem client repo (see the module docstring).

    ``branch=None`` starts a new session branch ``gitmem/session/<id>``; ``finish()``
    (or leaving a ``with`` block) ends it under the repo's review policy.
    ``branch="main"`` writes to main directly.
    """

    def __init__(
        self,
        repo: MemoryRepo | str | os.PathLike[str],
        branch: str | None = None,
        *,
        session: str | None = None,
        actor: str = ACTOR,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self._owns_repo = not isinstance(repo, MemoryRepo)
        self.repo = repo if isinstance(repo, MemoryRepo) else MemoryRepo.discover(Path(repo))
        self.actor = names.actor(actor)
        self.session: sessions.Session | None = None
        if branch is None:
            self.session = sessions.start_session(self.repo, session)
            branch, session = self.session.branch, self.session.id
        elif session is None and branch.startswith(SESSION_PREFIX):
            session = branch[len(SESSION_PREFIX) :]
        self.branch = branch
        self.session_id = names.session(session) if session else None
        if self.repo.tip(branch) is None:
            raise NotFound(f"no branch {branch!r} in {self.repo.root}")
        self.commits: list[Sha] = []
        self._lock = threading.Lock()  # one cat-file process: one command at a time

    def finish(self) -> sessions.FinishResult | None:
        """End the session this tool started: land it (auto) or leave it for review."""
        if self.session is None:
            return None
        done, self.session = sessions.finish_session(self.repo, self.session), None
        return done

    def close(self) -> None:
        if self._owns_repo:
            self.repo.close()

    def __enter__(self) -> GitMemoryTool:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.finish()
        finally:
            self.close()

    # -- dispatch ----------------------------------------------------------------
    def call(self, input: object) -> str:
        tx.check_command(input)
        return str(super().call(input))

    def execute(self, command: BetaMemoryTool20250818Command) -> str:
        texts = [
            (name, value)
            for name in ("path", "new_path", "file_text", "new_str", "insert_text")
            if isinstance(value := getattr(command, name, None), str)
        ]
        try:
            secrets.check(texts, self.repo.config.secrets_allow)
        except secrets.SecretFound as err:
            raise ToolError(str(err)) from None
        with self._lock:
            return str(super().execute(command))

    def _snapshot(self) -> tuple[Sha, Snapshot]:
        tip = self.repo.tip(self.branch)
        if tip is None:
            raise ToolError(f"The memory branch {self.branch} no longer exists")
        return tip, Snapshot(self.repo.store, tip)

    # -- commands ----------------------------------------------------------------
    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        path = command.path
        _, snap = self._snapshot()
        parts, kind = _existing(snap, path)
        if kind == "dir":
            return snap.listing(parts, path)
        if kind != "file":
            raise ToolError(f"Unsupported file type for {path}")
        text = snap.text(parts, path)
        return tx.view_file(text, path, command.view_range) + self._unverified(parts, text)

    def _unverified(self, parts: Parts, text: str) -> str:
        """A line for each section of a card whose text gitmem cannot vouch for (after the
        numbered lines: the numbers stay the file's)."""
        card = parts[0][:-3] if len(parts) == 1 and parts[0].endswith(".md") else ""
        found = provenance.unverified(self.repo, self.branch) if card else {}
        shape = provenance.reshaped(self.repo, self.branch).get(card) if card else None
        lines = [shape.line()] if shape else []
        lines += [
            f"line {s.start + 1} (§ {s.id}): {found[(card, s.id)].line()}"
            for s in sections(text)
            if (card, s.id) in found
        ]
        return "".join(f"\n{line}" for line in lines)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        path, text = command.path, command.file_text

        def plan(snap: Snapshot) -> _Change:
            parts = snap.resolve(path)
            snap.check_writable(parts, path)
            if snap.blocked(parts):
                raise os_error(errno.ENOTDIR)
            if snap.kind(parts) is not None:
                raise ToolError(f"File {path} already exists")
            first = next((s.start for s in sections(text)), None)
            result = f"File created successfully at: {path}"
            return self._written(snap, parts, text, "create", path, first, result)

        return self._commit(plan)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        path = command.path

        def plan(snap: Snapshot) -> _Change:
            parts, content = _text_file(snap, path)
            text, line, result = tx.replace_once(content, command.old_str, command.new_str, path)
            return self._written(snap, parts, text, "str_replace", path, line, result, content)

        return self._commit(plan)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        path, at = command.path, command.insert_line

        def plan(snap: Snapshot) -> _Change:
            parts, content = _text_file(snap, path)
            text = tx.insert_at(content, at, command.insert_text)
            result = f"The file {path} has been edited."
            return self._written(snap, parts, text, "insert", path, at, result, content)

        return self._commit(plan)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        path = command.path

        def plan(snap: Snapshot) -> _Change:
            parts = snap.resolve(path)
            if parts == ():
                raise ToolError("Cannot delete the /memories directory itself")
            if snap.kind(parts) not in ("file", "dir"):
                raise ToolError(f"The path {path} does not exist")
            gone = self._movable(snap, parts, path, "delete")
            after = {p: n for p, n in snap.files.items() if p not in gone}
            card = tx.trailer_card(parts)
            head = tx.subject("delete", path, card)
            return _Change(f"Successfully deleted {path}", after, parts, head, card)

        return self._commit(plan)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old, new = command.old_path, command.new_path

        def plan(snap: Snapshot) -> _Change:
            src, dst = snap.resolve(old), snap.resolve(new)
            if src == ():
                raise ToolError("Cannot rename the /memories directory itself")
            snap.check_writable(dst, new)
            if snap.kind(dst) is not None:
                raise ToolError(f"The destination {new} already exists")
            snap.check_rename(src, dst, old)
            moved = self._movable(snap, src, old, "move")
            after = {p: n for p, n in snap.files.items() if p not in moved}
            after.update({(*dst, *p[len(src) :]): snap.files[p] for p in moved})
            card = tx.trailer_card(dst) or tx.trailer_card(src)
            head = tx.subject("rename", f"{old} -> {new}", card)
            return _Change(f"Successfully renamed {old} to {new}", after, src, head, card)

        return self._commit(plan)

    def clear_all_memory(self) -> str:
        """Remove everything under /memories in one commit, as the SDK's local tool does."""

        def plan(snap: Snapshot) -> _Change:
            self._movable(snap, (), "/memories", "clear")
            return _Change("All memory cleared", {}, (), "memory: clear all", None)

        with self._lock:
            return self._commit(plan)

    # -- committing --------------------------------------------------------------
    def _written(
        self,
        snap: Snapshot,
        parts: Parts,
        text: str,
        verb: str,
        path: str,
        line: int | None,
        result: str,
        before: str | None = None,
    ) -> _Change:
        """The change that leaves ``text`` at ``parts``; ``line`` locates the section touched."""
        self._check_size(text, path)
        secrets.check_change(before, text, path, self.repo.config.secrets_allow)
        card, section = tx.trailer_card(parts), tx.section_at(text, line)
        head = tx.subject(verb, path, card, section, edit=True)
        after: dict[Parts, Node | bytes] = {**snap.files, parts: text.encode()}
        return _Change(result, after, None, head, card, section)

    def _check_size(self, text: str, shown: str) -> None:
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError:
            raise ToolError(f"The text for {shown} is not valid UTF-8 (a lone surrogate)") from None
        limit = self.repo.config.max_card_bytes
        if size > limit:
            raise ToolError(
                f"File {shown} would be {size} bytes, over the limit of {limit} bytes "
                "(limits.max_card_bytes in gitmem.toml); nothing was changed"
            )

    @staticmethod
    def _movable(snap: Snapshot, parts: Parts, shown: str, verb: str) -> set[Parts]:
        files = snap.under(parts)
        special = [p for p in files if snap.files[p].kind != "file"]
        if special:
            raise ToolError(
                f"Cannot {verb} {shown}: it holds a symlink or submodule "
                f"({'/'.join(special[0])}); change that with git"
            )
        return set(files)

    def _commit(self, plan: Callable[[Snapshot], _Change]) -> str:
        """Plan on the tip and commit with compare-and-swap; when another writer moved the
        branch first, ``publish.commit_changes`` has the command planned again."""
        if self.repo.tip(self.branch) is None:
            raise ToolError(f"The memory branch {self.branch} no longer exists")
        planned: list[_Change] = []

        def build(tip: Sha) -> tuple[Files, str]:
            snap = Snapshot(self.repo.store, tip)
            change = plan(snap)
            planned[:] = [change]
            text = tx.message(
                change.subject, change.card, self.session_id, self.actor, change.section
            )
            return snap.changes(change.after, change.removed), text

        try:
            sha = publish.commit_changes(self.repo, self.branch, build, "gitmem memory-tool")
        except GitmemError as err:
            raise ToolError(str(err)) from None
        if sha is not None:  # None: the command changed nothing (e.g. x -> x)
            self.commits.append(sha)
        return planned[0].result
