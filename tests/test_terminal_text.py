"""What a reviewer reads is what the bytes say: memory's control, format and bidi
characters are shown as escapes (never obeyed, never dropped) by every command that
prints memory, on a real terminal (a pty made by `script`) and in a pipe alike, and
gitmem's own colours stay colours."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.features.edit import write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.review import session_branches as sessions
from gitmem.wording import visible

GITMEM = str(Path(sys.executable).with_name("gitmem"))
SID = "20261130-101200-ab12"
# A hyperlink whose label and target differ (OSC 8), a clipboard write (OSC 52), a
# right-to-left override, a zero-width space, a C1 CSI.
LINK = "\x1b]8;;https://evil.example/\x1b\\https://docs.example/\x1b]8;;\x1b\\"
CLIP = "\x1b]52;c;cm0gLXJmIH4K\x07"
HOSTILE = f"kiln notes {LINK} {CLIP} \u202egnp.exe\u202c zero\u200bwidth \x9b2J"
SHOWN = [
    "\\x1b]8;;https://evil.example/\\x1b\\https://docs.example/",
    "\\x1b]52;c;cm0gLXJmIH4K\\x07",
    "\\u202egnp.exe\\u202c",
    "zero\\u200bwidth",
    "\\x9b2J",
]
RAW = ["\x1b]", "\x07", "\u202e", "\u200b", "\x9b"]
SGR = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def hostile(repo: MemoryRepo) -> MemoryRepo:
    """A card on main and a pending session's edit, both holding HOSTILE."""
    card = f"# Kiln\n\n## Notes\n{HOSTILE}\n"
    write_card(repo, "kiln", "", card, IndexEntry.make("notes", ["kiln"], "kiln notes"))
    s = sessions.start_session(repo, SID)
    write_card(repo, "kiln", HOSTILE, f"{HOSTILE}\nagain {HOSTILE}",
               IndexEntry.make("notes", ["kiln"], "more kiln notes"),
               session=SID, actor="agent", branch=s.branch)  # fmt: skip
    sessions.finish_session(repo, s, "review")
    return repo


def on_terminal(args: list[str]) -> str:
    """What ``gitmem ARGS`` writes to a real terminal (``script`` gives it a pty)."""
    command = shlex.join([GITMEM, *args])
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "200"}
    env.pop("NO_COLOR", None)
    proc = subprocess.run(
        ["script", "-q", "-e", "-c", command, "/dev/null"],
        capture_output=True, stdin=subprocess.DEVNULL, env=env, timeout=120, check=False,
    )  # fmt: skip
    out = proc.stdout.decode("utf-8", "replace")
    assert proc.returncode == 0, out
    return out


def piped(args: list[str]) -> str:
    proc = subprocess.run([GITMEM, *args], capture_output=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode("utf-8", "surrogateescape")


COMMANDS = [
    ["review"],
    ["review", SID],
    ["review", SID, "--markdown"],
    ["show", "kiln"],
    ["search", "kiln"],
    ["cards"],
    ["log"],
    ["index"],
]


def test_review_on_a_terminal_is_coloured_not_garbled(hostile: MemoryRepo) -> None:
    screen = on_terminal(["-C", str(hostile.root), "review", SID])
    assert SGR.search(screen), "gitmem colours its own headings on a terminal"
    text = SGR.sub("", screen)
    assert "\\x1b[" not in text, text  # no colour code printed as text
    assert "\x1b" not in text and "\u202e" not in text, repr(text)  # only gitmem's styling
    assert f"Session {SID} (pending)" in text
    for shown in SHOWN:
        assert shown in text, (shown, text)


@pytest.mark.slow
@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_memory_is_shown_not_obeyed_on_a_terminal_and_in_a_pipe(
    hostile: MemoryRepo, args: list[str]
) -> None:
    where = ["-C", str(hostile.root)]
    for out in (SGR.sub("", on_terminal([*where, *args])), piped([*where, *args])):
        assert not [r for r in RAW if r in out], repr(out)
        assert "\\x1b[" not in out, out
    if args[0] in ("review", "show", "search") and args != ["review"]:
        assert all(s in out for s in SHOWN), out


def test_visible_keeps_every_character_it_shows_and_only_text_as_it_is() -> None:
    text = "tab\there\nnew line é ß 漢字 🙂 \x00\x7f\u2028\u2066\ufeff\U000e0001"
    shown = visible(text)
    assert shown.startswith("tab\there\nnew line é ß 漢字 🙂 ")
    assert shown.endswith("\\x00\\x7f\\u2028\\u2066\\ufeff\\U000e0001")
    assert visible("plain words") == "plain words"
