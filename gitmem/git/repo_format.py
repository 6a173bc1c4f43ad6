"""Which hash a repository names its objects with: ``extensions.objectFormat``.

git reads its repository extensions from the repository's own ``config`` file only
(the common one, for a linked worktree): not the system or global files, and not
files that ``include.path`` or ``includeIf`` pull in. So this reads that one file, in
git's config syntax, without a process: every command opens an object store, and
``gitmem index`` must start fast. The last ``objectformat`` in ``[extensions]`` wins,
as in git. A value git would refuse is reported as it is; git itself then refuses the
repository, and says why.
"""

from __future__ import annotations

from pathlib import Path

SHA1 = "sha1"
SHA256 = "sha256"

_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", '"': '"', "\\": "\\"}


def object_format(config: Path) -> str:
    """``sha1`` or ``sha256`` (or what else the file names) for the config file at ``config``."""
    try:
        text = config.read_text("utf-8", "replace")
    except (FileNotFoundError, NotADirectoryError):
        return SHA1
    found = SHA1
    for section, key, value in _entries(text):
        if section == "extensions" and key == "objectformat" and value is not None:
            found = value
    return found


def _entries(text: str) -> list[tuple[str, str, str | None]]:
    """(section, key, value) of each variable, lower-cased names, in file order.

    A subsection makes the section ``name "sub"`` (never equal to a plain name); a key
    without ``=`` has the value None (git's "true"). Malformed lines end the parse:
    git refuses such a file, so what follows them means nothing.
    """
    out: list[tuple[str, str, str | None]] = []
    section = ""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
        elif c in "#;":
            i = _line_end(text, i)
        elif c == "[":
            end = text.find("]", i)
            if end < 0:
                break
            section = _section(text[i + 1 : end])
            i = end + 1
        elif c.isalpha():
            j = i
            while j < n and (text[j].isalnum() or text[j] == "-"):
                j += 1
            key = text[i:j].lower()
            while j < n and text[j] in " \t":
                j += 1
            if j < n and text[j] == "=":
                value, i = _value(text, j + 1)
                out.append((section, key, value))
            else:
                out.append((section, key, None))
                i = j
        else:
            break
    return out


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end + 1


def _section(header: str) -> str:
    name, space, sub = header.partition(" ")
    if space:
        return f'{name.lower()} "{sub.strip()}"'
    base, dot, rest = name.partition(".")
    return f'{base.lower()} "{rest.lower()}"' if dot else name.lower()


def _value(text: str, i: int) -> tuple[str, int]:
    """The value starting at ``i`` and where its line ends: quotes, escapes, comments and
    ``\\``-continued lines as git reads them; surrounding blanks dropped."""
    chars: list[str] = []
    quoted = False
    pending = ""  # blanks seen outside quotes: kept only if more of the value follows
    n = len(text)
    while i < n:
        c = text[i]
        i += 1
        if c == "\n" and not quoted:
            break
        if not quoted and c in "#;":
            i = _line_end(text, i - 1)
            break
        if not quoted and c in " \t\r":
            pending += c
            continue
        if c == "\\" and i < n:
            nxt = text[i]
            i += 1
            if nxt == "\n":
                continue
            c = _ESCAPES.get(nxt, nxt)
        elif c == '"':
            quoted = not quoted
            c = ""
        if chars:
            chars.append(pending)
        pending = ""
        chars.append(c)
    return "".join(chars), i
