"""Files that are not what gitmem expects where it reads them: each is a one-line error
naming the file, never a crash (exit 70), and the repo is left as it was."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from test_progress import _on_pty

from helpers import git, gm

GITMEM = str(Path(sys.executable).with_name("gitmem"))


def _ask(client: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    return subprocess.run(
        [GITMEM, "-C", str(client), "ask", "--simulated", "hello"],
        capture_output=True, text=True, check=False, timeout=120, env=env,
    )  # fmt: skip


def _write(client: Path, card: str) -> tuple[int, str]:
    new = "# New\n\n## Notes\nfirst note\n"
    got = gm("-C", str(client), "write", card, "--old", "", "--new", new, "--section", "notes",
             "--keywords", "notes", "--summary", "first note")  # fmt: skip
    return got.code, got.err


def test_a_persona_that_is_not_utf8_is_named_not_a_crash(client: Path) -> None:
    (client / "persona.md").write_bytes(b"\xff\xfe persona\n")
    proc = _ask(client)
    assert proc.returncode == 6, proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        f"gitmem: error: {client / 'persona.md'} is not valid UTF-8; save it as UTF-8 text"
    )
    assert git(client, "branch", "--list", "gitmem/session/*") == ""  # no session left open


def test_a_persona_that_is_a_symlink_is_never_read_into_the_prompt(
    client: Path, tmp_path: Path
) -> None:
    private = tmp_path / "private.txt"
    private.write_text("the neighbour's wifi password\n")
    (client / "persona.md").unlink()
    (client / "persona.md").symlink_to(private)
    proc = _ask(client)
    assert proc.returncode == 4, proc.stderr
    assert "persona.md is a symlink" in proc.stderr.splitlines()[-1]
    assert not list((client / "sessions").glob("*.jsonl"))  # no session began with it
    assert git(client, "branch", "--list", "gitmem/session/*") == ""


def test_a_folder_where_a_new_card_goes_is_refused(client: Path) -> None:
    (client / "cards" / "newc.md").mkdir()
    before = git(client, "rev-parse", "HEAD")
    code, err = _write(client, "newc")
    assert code == 4 and err.count("\n") == 1, err
    assert "cards/newc.md is not a regular file" in err
    assert git(client, "rev-parse", "HEAD") == before


def test_an_editor_that_removes_its_file_changes_nothing(client: Path, tmp_path: Path) -> None:
    editor = tmp_path / "remove.sh"
    editor.write_text('#!/bin/sh\nrm "$1"\n')
    editor.chmod(0o755)
    before = git(client, "rev-parse", "HEAD")
    env = dict(os.environ, EDITOR=str(editor))
    proc = subprocess.run(
        [GITMEM, "-C", str(client), "edit", "card", "--keywords", "k", "--summary", "s"],
        capture_output=True, text=True, check=False, timeout=60, env=env,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("gitmem: error: the editor removed ")
    assert proc.stderr.rstrip().endswith("; nothing changed")
    assert git(client, "rev-parse", "HEAD") == before


def test_old_and_new_text_cannot_both_come_from_stdin(client: Path) -> None:
    before = git(client, "rev-parse", "HEAD")
    got = gm("-C", str(client), "write", "card", "--old-file", "-", "--new-file", "-",
             "--section", "a", "--keywords", "k", "--summary", "s", stdin="start")  # fmt: skip
    assert got.code == 2
    assert got.err == (
        "gitmem: error: --old-file and --new-file cannot both read stdin (-); give one a file\n"
    )
    assert git(client, "rev-parse", "HEAD") == before


def test_escape_sequences_in_a_card_never_reach_the_terminal(client: Path) -> None:
    title = "T\x1b]0;pwned\x07itle"
    new = f"# {title}\n\n## A\nred \x1b[31mtext\x1b[0m\n"
    got = gm("-C", str(client), "write", "c14", "--old", "", "--new", new, "--section", "a",
             "--keywords", "k", "--summary", "s")  # fmt: skip
    assert got.code == 0, got.err
    for args in (["cards"], ["show", "c14"]):
        code, screen = _on_pty(["-C", str(client), *args], client)
        assert code == 0, screen
        assert "\x1b" not in screen and "\x07" not in screen, repr(screen)
        assert "\\x1b" in screen  # shown, so a person sees it is there


def test_a_byte_order_mark_before_a_card_title_is_not_part_of_it(client: Path) -> None:
    (client / "cards" / "bom.md").write_bytes("\ufeff# Bom Card\n\n## Notes\nkiln\n".encode())
    git(client, "add", "cards/bom.md")
    git(client, "commit", "-qm", "a card saved by an editor that writes a BOM")
    listed = gm("-C", str(client), "cards")
    assert "bom (Bom Card): 1 section" in listed.out, listed.out
