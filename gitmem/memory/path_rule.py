"""The path rule: which names a memory repo may hold, checked by every door that makes a
path (the memory tool, the CLI, MCP, import, review, redact: ``ops/publish.py``) and by
what ``sync`` and ``clone`` receive (``ops/incoming.py``).

A name is kept only if git checks it out on every system (``core.protectNTFS`` and
``core.protectHFS`` on), ``git fsck --strict`` takes it, it cannot stand for git's own
files on Windows or macOS, and no other name in its folder is the same name once case is
folded and both are in Unicode NFC (Windows and macOS would show one file for both).
A path already in the tree is never refused by this rule: only a name being made.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

# Characters HFS+ ignores when it compares names, so "\u200c.git" is ".git" to it (as git's
# own fsck judges them); all are format characters, refused in any name anyway.
_IGNORABLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u206a-\u206f\ufeff]")
# Names git keeps for itself, with the NTFS short names (8.3) that reach the same entry:
# git~N and gitmod~N, and gi7eba~N, the hashed short name of .gitmodules.
_GIT_OWN = re.compile(r"\.git|\.gitmodules|git~[0-9]+|gitmod~[0-9]+|gi7eba~[0-9]+")
_DEVICE = re.compile(r"(?i)(?:con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$) *(?:\..*)?")
_WINDOWS = '\\:<>"|?*'  # what Windows refuses in a name (a backslash would split it)
# Unicode categories never kept in a name: control, format (bidi overrides, zero-width
# joiners), line and paragraph separators, surrogates, private use.
_HIDDEN = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co"}


def fold(name: str) -> str:
    """A name as case-insensitive systems compare it: NFC, case folded, NFC again."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def hidden(text: str) -> str | None:
    """The first control, format (bidi, zero-width), separator, surrogate or private-use
    character in ``text``: what a reader cannot see, or sees in another order."""
    return next((c for c in text if unicodedata.category(c) in _HIDDEN), None)


def part_problem(part: str) -> str | None:
    """Why one name in a path cannot be kept, or None when it can (see the module doc)."""
    bare = _IGNORABLE.sub("", part).rstrip(" .").casefold()
    if _GIT_OWN.fullmatch(bare):
        return "it names git's own files on Windows or macOS"
    found = hidden(part)
    if found is not None:
        return f"it contains the invisible or control character {found!r}"
    if part != part.rstrip(" ."):
        return "it ends with a dot or a space, which Windows drops"
    if _DEVICE.fullmatch(part):
        return "it is a Windows device name"
    bad = next((c for c in part if c in _WINDOWS), None)
    if bad is not None:
        return f"it contains {bad!r}, which Windows does not allow in a name"
    if unicodedata.normalize("NFC", part) != part:
        return "it is not in Unicode NFC form, so macOS and Linux would spell it differently"
    return None


def path_problem(path: str) -> str | None:
    """Why a path of the tree (``cards/acme.md``) cannot be made, or None."""
    parts = path.split("/")
    for part in parts:
        problem = part_problem(part)
        if problem is not None:
            return f"{part!r}: {problem}"
    if len(parts) > 2 and parts[0] == "cards" and fold(parts[1]).endswith(".md"):
        return f"cards/{parts[1]} is where a card's file goes; a folder there would hide it"
    return None


def clash(part: str, siblings: Iterable[str]) -> str | None:
    """The name among ``siblings`` (one folder's names) that is ``part`` on Windows or
    macOS but is spelled differently, or None."""
    key = fold(part)
    return next((s for s in siblings if s != part and fold(s) == key), None)


def tree_clashes(paths: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs of entries of one tree (its files' paths; folders are implied) that name the
    same entry on Windows or macOS."""
    seen: dict[str, str] = {}
    out: list[tuple[str, str]] = []
    for path in paths:
        parts = path.split("/")
        for i in range(1, len(parts) + 1):
            entry = "/".join(parts[:i])
            other = seen.setdefault("/".join(map(fold, parts[:i])), entry)
            if other != entry and (other, entry) not in out:
                out.append((other, entry))
    return out
