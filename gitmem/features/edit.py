"""One surgical edit of a card, recorded as one commit carrying its index entry.

The commit is built from objects (no index, no working tree) on top of the
target branch's tip and published with a compare-and-swap ``update-ref``; when
another writer got there first the edit is re-applied on the new tip, so two
writers never lose each other's edits.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass

from gitmem.errors import Conflict, EditError, NotFound
from gitmem.git.runner import Sha
from gitmem.memory import names, secrets
from gitmem.memory.cards import Section, base_id, card_path, digests, sections
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.memory.trailers import IndexEntry, edit_message
from gitmem.ops.publish import Blobs, PlannedCommit, publish


@dataclass(frozen=True)
class EditResult:
    """One edit's commit: on which branch, card and section; whether it created the card
    and whether the checked-out working tree followed (``behind`` says why not)."""

    commit: Sha
    branch: str
    card: str
    section: str
    created: bool
    worktree_updated: bool
    behind: str | None = None  # why the working tree has not followed yet

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def _line_numbers(text: str, needle: str) -> list[int]:
    lines, pos = [], text.find(needle)
    while pos != -1:
        lines.append(text.count("\n", 0, pos) + 1)
        pos = text.find(needle, pos + 1)
    return lines


def apply_edit(text: str | None, old: str, new: str, project: str) -> str:
    """The card's text after replacing the unique ``old`` by ``new`` (pure; raises EditError)."""
    path = card_path(project)
    if old == "":
        if not new.strip():
            raise EditError("new_text is empty: nothing to create or append")
        if text is None:
            body = new.lstrip("\n")
            if not body.startswith("# "):
                body = f"# {project}\n\n{body}"
            return body if body.endswith("\n") else body + "\n"
        sep = "" if text.endswith("\n") or new.startswith("\n") else "\n"
        out = text + sep + new
        return out if out.endswith("\n") else out + "\n"
    if text is None:
        raise NotFound(f"no card {project!r} ({path}); create it with an empty old_text")
    found = _line_numbers(text, old)
    if not found:
        raise EditError(f"old_text not found in {path}")
    if len(found) > 1:
        where = ", ".join(str(n) for n in sorted(set(found))[:20])
        raise EditError(
            f"old_text occurs {len(found)} times in {path} (lines {where}); add context to make it unique"
        )
    return text.replace(old, new, 1)


def edit_texts(project: str, new_text: str, entry: IndexEntry) -> list[tuple[str, str]]:
    """What an edit brings into memory, each named as a secret finding names it."""
    return [
        ("card name", project),  # it becomes a path in every clone's history
        ("section id", entry.section_id),  # a slug can be a token its heading is not
        ("new_text", new_text),
        ("summary", entry.summary),
        ("keywords", ", ".join(entry.keywords)),
    ]


def check_edit(repo: MemoryRepo, project: str, old: str, new: str) -> None:
    names.project(project)
    names.check_utf8(old, "old_text")
    names.check_utf8(new, "new_text")
    if "\0" in old or "\0" in new:
        raise EditError("texts must not contain NUL bytes")
    size = len(old.encode()) + len(new.encode())
    limit = repo.config.max_edit_bytes
    if size > limit:
        raise EditError(
            f"edit is {size} bytes, over the limit of {limit} (limits.max_edit_bytes in gitmem.toml)"
        )


def write_card(
    repo: MemoryRepo,
    project: str,
    old_text: str,
    new_text: str,
    entry: IndexEntry,
    *,
    session: str | None = None,
    actor: str = "cli",
    branch: str = MAIN,
    subject: str | None = None,
    more: tuple[IndexEntry, ...] = (),
) -> EditResult:
    """Apply one edit to ``cards/<project>.md`` on ``branch`` as one commit.

    The unique ``old_text`` is replaced by ``new_text`` (an empty ``old_text`` creates
    the card or appends to it); ``entry`` (``IndexEntry.make``) is the index entry the
    commit carries in its trailers, with ``session`` and ``actor``. The branch moves by
    compare-and-swap, re-applied when another writer got there first; a checked-out
    working tree follows. Returns an ``EditResult``. Raises ``EditError`` (old text
    missing or not unique, a section left without heading), ``NotFound`` (no such card
    or branch), ``InvalidInput`` (a bad name or entry), ``DirtyCard`` (the card has
    uncommitted edits), ``SecretFound`` (an ``InvalidInput``: the text holds a secret).

    ``more``: entries (without summary) for further sections the edit writes, carried
    by the same commit (``gitmem import`` creates a card with every section described).
    """
    check_edit(repo, project, old_text, new_text)
    secrets.check(edit_texts(project, new_text, entry), repo.config.secrets_allow)
    if session is not None:
        names.session(session)
    names.actor(actor)
    path = card_path(project)
    created = False

    def plan(parent: Sha, root: Sha) -> PlannedCommit:
        nonlocal created
        got = repo.store.read(f"{parent}:{path}")
        raw = got.data if got and got.kind == "blob" else None
        text = None
        if raw is not None:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise EditError(f"{path} is not valid UTF-8; fix it by hand") from None
        content = apply_edit(text, old_text, new_text, project)
        # new_text alone may be harmless and still complete a secret with what is there
        secrets.check_change(text, content, path, repo.config.secrets_allow)
        # The same text for old and new: a commit that only re-describes the section (a
        # stale entry refreshed); it still needs a line that is in the card once.
        _check_result(
            repo, path, text, content, entry, redescribe=bool(old_text) and old_text == new_text
        )
        if more:
            ids = {s.id for s in sections(content)}
            missing = [e.section_id for e in more if e.section_id not in ids]
            if missing:
                raise EditError(f"section {missing[0]!r} is not in {path} after the edit")
        created = text is None
        data = content.encode()
        digest = digests(content, [entry.section_id]).get(entry.section_id)
        message = edit_message(
            project, entry, session=session, actor=actor, subject=subject, more=more, digest=digest
        )

        def make() -> tuple[Sha, Blobs]:
            blob = repo.store.write("blob", data)
            tree = repo.store.update_path(root, path, blob)
            assert tree is not None
            return repo.write_commit(tree, [parent], message), {path: (blob, data)}

        head_blob = got.sha if raw is not None and got else None
        return PlannedCommit([path], make, {path: (head_blob, raw)})

    done = publish(repo, branch, plan)
    assert done is not None  # an edit always changes the card
    return EditResult(
        done.commit, branch, project, entry.section_id, created, done.worktree, done.behind
    )


def _check_result(
    repo: MemoryRepo,
    path: str,
    before: str | None,
    after: str,
    entry: IndexEntry,
    *,
    redescribe: bool = False,
) -> None:
    if after == before and not redescribe:
        raise EditError("the edit changes nothing")
    if len(after.encode()) > repo.config.max_card_bytes:
        raise EditError(
            f"{path} would be {len(after.encode())} bytes, over limits.max_card_bytes "
            f"({repo.config.max_card_bytes})"
        )
    found = sections(after)
    _check_duplicates(path, before or "", found)
    ids = [s.id for s in found]
    if entry.section_id not in ids:
        known = ", ".join(ids) or "none"
        raise EditError(
            f"section {entry.section_id!r} is not in {path} after the edit (sections: {known})"
        )


def _check_duplicates(path: str, before: str, after: list[Section]) -> None:
    """Refuse an edit that adds a heading whose id a section of the card has already.

    Its section would be listed as ``budget-2``, an id no index entry names. Duplicates
    a person left in the card stay editable: only a new one is refused.
    """
    now = Counter(base_id(s.heading) for s in after)
    if all(n == 1 for n in now.values()):
        return
    was = sections(before)
    had = Counter(base_id(s.heading) for s in was)
    for key, n in now.items():
        if n > 1 and n > had[key]:
            old = next((s for s in was if base_id(s.heading) == key), None)
            if old is None:
                raise Conflict(
                    f"the edit gives {path} {n} sections with the id {key!r}; "
                    "give each heading its own name"
                )
            raise Conflict(
                f"{path} has a section {old.id!r} already (## {old.heading}, line "
                f"{old.start + 1}); edit that section or give the new heading another name"
            )
