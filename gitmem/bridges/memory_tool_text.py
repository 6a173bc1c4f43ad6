"""The texts the memory tool computes: file views and edits as the SDK words them, the
check of its input, and the commit messages that record them.

The view and edit functions repeat ``BetaLocalFilesystemMemoryTool`` line for line
(its numbering width, snippets, error wording); ``tests/test_memory_tool.py`` runs
both tools side by side so a change in the SDK shows up as a failing test.
"""

from __future__ import annotations

import re

from anthropic.tools import ToolError

from gitmem.errors import GitmemError
from gitmem.memory import names
from gitmem.memory import trailers as T
from gitmem.memory.cards import card_of, heading_keywords, sections

MAX_LINES = 999999
WIDTH = len(str(MAX_LINES))
_UNSAFE = re.compile(r"[\x00-\x1f\x7f\u2028\u2029\x85]")


def view_file(content: str, shown: str, view_range: list[int] | None) -> str:
    lines = content.split("\n")
    if len(lines) > MAX_LINES:
        raise ToolError(f"File {shown} exceeds maximum line limit of 999,999 lines.")
    picked, start = lines, 1
    if view_range and len(view_range) == 2:
        if view_range[1] != -1 and view_range[1] < view_range[0]:
            # The SDK shows nothing here; the model is told why instead.
            raise ToolError(
                f"view_range {view_range} is not allowed: it ends before it starts; give "
                "[start, end] with end >= start, or end -1 for the rest of the file"
            )
        first = max(1, view_range[0]) - 1
        last = len(lines) if view_range[1] == -1 else view_range[1]
        picked, start = lines[first:last], first + 1
    numbered = [f"{str(i + start).rjust(WIDTH)}\t{line}" for i, line in enumerate(picked)]
    return f"Here's the content of {shown} with line numbers:\n" + "\n".join(numbered)


def replace_once(content: str, old: str, new: str, shown: str) -> tuple[str, int, str]:
    """(new content, index of the changed line, the result the model sees)."""
    count = content.count(old)
    if count == 0:
        raise ToolError(
            f"No replacement was performed, old_str `{old}` did not appear verbatim in {shown}."
        )
    if count > 1:
        found, start = [], 0
        while (pos := content.find(old, start)) != -1:
            found.append(content[:pos].count("\n") + 1)
            start = pos + 1
        raise ToolError(
            f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: "
            f"{', '.join(map(str, found))}. Please ensure it is unique"
        )
    changed = content[: content.find(old)].count("\n")
    text = content.replace(old, new)
    lines = text.split("\n")
    first, last = max(0, changed - 2), min(len(lines), changed + 3)
    snippet = [f"{str(n).rjust(WIDTH)}\t{lines[n - 1]}" for n in range(first + 1, last + 1)]
    result = (
        "The memory file has been edited. Here is the snippet showing the change "
        "(with line numbers):\n" + "\n".join(snippet)
    )
    return text, changed, result


def insert_at(content: str, at: int, text: str) -> str:
    lines = content.split("\n")  # LF only: a CR stays with its line
    if lines[-1] == "":
        lines.pop()
    if at < 0 or at > len(lines):
        raise ToolError(
            f"Invalid `insert_line` parameter: {at}. It should be within the range [0, {len(lines)}]."
        )
    lines.insert(at, text.rstrip("\n"))
    out = "\n".join(lines)
    return out if out.endswith("\n") else out + "\n"


# -- input ---------------------------------------------------------------------
_COMMANDS: dict[str, dict[str, type]] = {
    "view": {"path": str},
    "create": {"path": str, "file_text": str},
    "str_replace": {"path": str, "old_str": str, "new_str": str},
    "insert": {"path": str, "insert_line": int, "insert_text": str},
    "delete": {"path": str},
    "rename": {"old_path": str, "new_path": str},
}


def check_command(value: object) -> None:
    """Refuse a malformed tool input with a clear message before anything runs.

    The SDK's own tool would fail later with an ``AttributeError`` (sometimes after
    creating an empty file); fields it does not know are ignored, as it does.
    """
    if not isinstance(value, dict):
        raise ToolError("The memory tool input must be an object with a `command` field")
    command = value.get("command")
    if command not in _COMMANDS:
        raise ToolError(f"Unknown memory command {command!r}; use one of {', '.join(_COMMANDS)}")
    for key, kind in _COMMANDS[command].items():
        got = value.get(key)
        if kind is int and (not isinstance(got, int) or isinstance(got, bool)):
            raise ToolError(f"`{key}` is required for {command} and must be an integer")
        if kind is str and not isinstance(got, str):
            raise ToolError(f"`{key}` is required for {command} and must be a string")
    lines = value.get("view_range")
    if (
        command == "view"
        and lines is not None
        and (
            not isinstance(lines, list)
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in lines)
        )
    ):
        raise ToolError("`view_range` must be a list of two line numbers, e.g. [1, 20]")


# -- commit messages -------------------------------------------------------------
def trailer_card(parts: tuple[str, ...]) -> str | None:
    """The card a path below /memories is, for its commit's ``Gitmem-Card`` trailer: a
    top-level ``<name>.md`` (``/memories`` is the ``cards/`` tree) whose name is a project name."""
    card = card_of("/".join(("cards", *parts)))
    if card is None:
        return None
    try:
        return names.project(card)
    except GitmemError:
        return None


def section_at(text: str | None, line: int | None) -> tuple[str, str] | None:
    """(id, heading) of the card section holding ``line`` (0-based), if any."""
    if text is None or line is None:
        return None
    found = [s for s in sections(text) if s.start <= line < s.end]
    return (found[0].id, found[0].heading) if found else None


def subject(
    verb: str,
    shown: str,
    card: str | None,
    section: tuple[str, str] | None = None,
    *,
    edit: bool = False,
) -> str:
    """``card: memory str_replace § budget``: an edit of a card names the section touched.

    Delete and rename name their paths instead.
    """
    if card is None:
        head = f"memory: {verb} {shown}"
    elif edit:
        head = f"{card}: memory {verb}" + (f" § {section[0]}" if section else "")
    else:
        head = f"{card}: memory {verb} {shown}"
    return _UNSAFE.sub("?", head)[:72]


def message(
    head: str,
    card: str | None,
    session: str | None,
    actor: str,
    section: tuple[str, str] | None = None,
) -> str:
    """The commit message: the section's index entry derived from its heading, no summary.

    With no summary the index lists the section as unindexed (with these keywords)
    until a write with a summary describes it; reverting this commit brings back
    whatever entry the section had before.
    """
    lines = [f"{T.CARD}: {card}"] if card else []
    keywords = heading_keywords(section[1]) if card and section else []
    if section and keywords:
        lines += [f"{T.SECTION}: {section[0]}", f"{T.KEYWORDS}: {', '.join(keywords)}"]
    if session:
        lines.append(f"{T.SESSION}: {session}")
    lines.append(f"{T.ACTOR}: {actor}")
    body = (
        "Made with the memory tool, which gives no summary: the section is listed as\n"
        "unindexed until an edit with a summary describes it."
        if card
        else "Made with the memory tool. Not a card (cards/<slug>.md): not in the index."
    )
    return f"{head}\n\n{body}\n\n" + "\n".join(lines) + "\n"
