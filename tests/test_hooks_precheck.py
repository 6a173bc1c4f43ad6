"""gitmem's hooks on a person's own `git commit`: the shell's pre-checks never skip a
message or a staged line that Python must look at, and a follow left unfinished is found
from a linked worktree too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hooks_find import _install_with, _logging_python

from helpers import git


def test_the_hook_finds_an_unfinished_follow_from_a_linked_worktree(
    client: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where `.git` is a file, the hook still asks git where the follow marker lives."""
    log = tmp_path / "python.log"
    _install_with(client, _logging_python(tmp_path / "python", log), monkeypatch)
    other = tmp_path / "other"
    git(client, "worktree", "add", "-q", "-b", "side", str(other))
    gitdir = Path(git(other, "rev-parse", "--absolute-git-dir").strip())
    (gitdir / "gitmem").mkdir(exist_ok=True)
    (gitdir / "gitmem" / "follow").write_text("")
    (other / "notes.txt").write_text("not memory\n")
    git(other, "add", "notes.txt")
    done = subprocess.run(
        ["git", "commit", "-q", "-m", "notes"],
        cwd=other,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1 and "run `gitmem recover`" in done.stderr, done.stderr


def _hint() -> str:
    hook = Path(__file__).resolve().parent.parent / "hooks" / "commit-msg"
    line = next(ln for ln in hook.read_text().splitlines() if ln.startswith("hint='"))
    return line[len("hint='") : -1]


def _added_lines(client: Path) -> list[bytes]:
    """The staged diff's added lines of memory (without the +)."""
    diff = subprocess.run(
        [
            "git",
            "diff",
            "--cached",
            "-U0",
            "--no-color",
            "--no-renames",
            "--no-ext-diff",
            "--",
            "cards",
            "persona.md",
            "synthesis.md",
        ],
        cwd=client,
        capture_output=True,
        check=True,
    ).stdout
    added: list[bytes] = []
    in_hunk = False
    for line in diff.split(b"\n"):
        if line.startswith(b"diff --git "):
            in_hunk = False
        elif line.startswith(b"@@"):
            in_hunk = True
        elif in_hunk and line[:1] == b"+":
            added.append(line[1:])
    return added


def _grep_hits(lines: list[bytes], tmp: Path) -> bool:
    """Whether the hint (or a byte outside printable ASCII) is in one of ``lines``, by grep."""
    f = tmp / "changed.txt"
    f.write_bytes(b"".join(ln + b"\n" for ln in lines))
    proc = subprocess.run(
        ["grep", "-qaEi", "-e", _hint(), "-e", "[^ -~\t]", str(f)],
        env={"LC_ALL": "C", "PATH": os.environ["PATH"]},
        check=False,
    )
    assert proc.returncode in (0, 1)
    return proc.returncode == 0


WORDS = [
    "token",
    "Gitmem-",
    "+",
    "++ b/cards/x",
    "é",
    "AKIA",
    "ghp_",
    "plain",
    " ",
    "\t",
    "-",
    "key",
    "\u0131",
    "password",
    "x" * 30,
    "M" + "a" * 24 + ".",
    "12345678:",
    "\x7f",
]
line_st = st.lists(
    st.one_of(
        st.sampled_from(WORDS),
        st.text(st.characters(codec="utf-8", exclude_characters="\n\r\x00"), max_size=8),
    ),
    max_size=6,
).map("".join)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    old=st.lists(line_st, max_size=4),
    new=st.lists(line_st, min_size=1, max_size=4),
    name=st.sampled_from(["acme", "keynote", "authors"]),
)
def test_the_hook_starts_the_scanner_for_every_added_line_the_grep_pre_check_matched(
    client: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    old: list[str],
    new: list[str],
    name: str,
) -> None:
    """The scanner starts whenever an added line matches the hint as grep -E reads it (the
    pre-check before git did the matching): no line that may hold a secret goes unread."""
    log = tmp_path / "python.log"
    if not (tmp_path / "python").exists():
        _install_with(client, _logging_python(tmp_path / "python", log), monkeypatch)
    log.write_text("")
    card = client / "cards" / f"{name}.md"
    card.write_text("# acme\n\n## budget\n" + "".join(f"{ln}\n" for ln in old))
    git(client, "add", "-A")
    git(client, "commit", "-q", "--no-verify", "--allow-empty", "-m", "before")
    card.write_text("# acme\n\n## budget\n" + "".join(f"{ln}\n" for ln in new))
    git(client, "add", "-A")
    added = _added_lines(client)
    hook = client / ".git" / "hooks" / "commit-msg"
    msg = tmp_path / "msg"
    msg.write_text("meeting notes\n")
    subprocess.run([str(hook), str(msg)], cwd=client, capture_output=True, check=False)
    started = "scan-staged" in log.read_text()
    if _grep_hits(added, tmp_path):
        assert started


msg_line = st.one_of(
    st.sampled_from(
        [
            "Gitmem-Card: acme",
            "gitmem-x",
            "GITMEM-",
            "G\u0131tmem-Card: a",
            "G\u0130TMEM-Section: b",
            " Gitmem-Card: a",
            "Gitmem: no",
            "#Gitmem-",
            "gitmem-\r",
            "plain words",
            "",
        ]
    ),
    st.text(st.characters(codec="utf-8", exclude_characters="\n\x00"), max_size=10),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(msg_line, min_size=1, max_size=6), end=st.sampled_from(["", "\n"]))
def test_commit_msg_starts_python_whenever_grep_would_have(
    client: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: list[str], end: str
) -> None:
    log = tmp_path / "python.log"
    if not (tmp_path / "python").exists():
        _install_with(client, _logging_python(tmp_path / "python", log), monkeypatch)
    log.write_text("")
    msg = tmp_path / "msg"
    msg.write_bytes(("\n".join(lines) + end).encode("utf-8"))
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    grep = subprocess.run(["grep", "-qi", "^gitmem-", str(msg)], env=env, check=False)
    hook = client / ".git" / "hooks" / "commit-msg"
    subprocess.run([str(hook), str(msg)], cwd=client, env=env, capture_output=True, check=False)
    started = "-m gitmem.hooks commit " in log.read_text()
    if grep.returncode == 0:
        assert started


def test_commit_msg_without_a_message_file_lets_the_commit_through(client: Path) -> None:
    hook = client / ".git" / "hooks" / "commit-msg"
    proc = subprocess.run(
        [str(hook), str(client / "no-such-file")],
        cwd=client,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stderr == ""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
