"""What the commands print matches what happened and what the docs show (issue 24,
point 6), through the installed ``gitmem``: search lines as docs/commands.md shows them,
``edit`` of a new card indexing the section written, counts that count memory edits, a
bare ``--hunks``, ``ask --json``'s reply, and completion of card, client and session
names for bash (a real bash running the script ``gitmem completion bash`` prints), zsh
and fish (the requests their scripts make)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from gitmem.fakeapi import FakeAnthropicServer, QueueModel, Reply
from gitmem.setup.init import init_repo

from helpers import git

GITMEM = str(Path(sys.executable).with_name("gitmem"))
DOCS = Path(__file__).resolve().parent.parent / "docs"
SECTION_HIT = re.compile(
    r"^[a-z0-9-]+ § [a-z0-9-]+  \((\d{4}-\d\d-\d\d, current|\d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d, "
    r"past, ref [a-z0-9-]+/[a-z0-9-]+@[0-9a-f]{12}), commit [0-9a-f]{7}, score \d+\.\d\d\)$"
)
TURN_HIT = re.compile(
    r"^(\d{8}-\d{6}-[0-9a-f]{4}) turn (\d+) (user|assistant)  \(\d{4}-\d\d-\d\d, "
    r"ref \1#\2, score \d+\.\d\d\)$"
)


def run(*args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    return subprocess.run(
        [GITMEM, *args], input=stdin, capture_output=True, text=True, check=False,
        timeout=120, env=base | env,
    )  # fmt: skip


def _simulated(client: Path, *lines: str) -> None:
    proc = run("-C", str(client), "chat", "--simulated", stdin="".join(f"{ln}\n" for ln in lines))
    assert proc.returncode == 0, proc.stderr


def test_search_prints_what_docs_commands_shows(client: Path) -> None:
    _simulated(client, "remember acme Budget: Q3 budget is 30k")
    printed = run("-C", str(client), "search", "budget").stdout.splitlines()
    heads = printed[::2]
    assert any(SECTION_HIT.match(h) for h in heads), printed
    assert any(TURN_HIT.match(h) for h in heads), printed
    assert all(SECTION_HIT.match(h) or TURN_HIT.match(h) for h in heads), printed
    assert all(line.startswith("    ") for line in printed[1::2])
    docs = (DOCS / "commands.md").read_text().split("$ gitmem search budget", 1)[1]
    shown = docs.split("```", 1)[0].strip().splitlines()[1::2]
    assert shown and all(SECTION_HIT.match(h) or TURN_HIT.match(h) for h in shown), shown


def test_edit_of_a_new_card_indexes_the_section_written(client: Path, tmp_path: Path) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nprintf '\\n## Budget\\n\\nQ3 budget: 30k\\n' >> \"$1\"\n")
    editor.chmod(0o755)
    proc = run(
        "-C", str(client), "edit", "globex", "--keywords", "budget", "--summary", "Q3 budget 30k",
        EDITOR=str(editor),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("created globex § budget in ")
    index = run("-C", str(client), "index").stdout
    assert "- budget: Q3 budget 30k [budget]" in index


def test_cards_names_a_title_only_when_it_differs(client: Path) -> None:
    _simulated(client, "remember acme Budget: 30k")
    shown = run("-C", str(client), "cards").stdout
    assert shown.startswith("acme: 1 section, ")
    assert "acme (acme)" not in shown


def _review_policy(client: Path) -> str:
    toml = client / "gitmem.toml"
    toml.write_text(toml.read_text().replace('review = "auto"', 'review = "review"'))
    git(client, "commit", "-qam", "review every session")
    _simulated(client, "remember acme Budget: 40k", "remember acme Risks: late")
    listed = run("-C", str(client), "review").stdout.splitlines()
    return listed[1].split()[0]


def test_accepted_in_part_counts_the_memory_edits_that_landed(client: Path) -> None:
    session = _review_policy(client)
    first = git(client, "log", "--format=%h", "--reverse", f"main..gitmem/session/{session}")
    proc = run("-C", str(client), "review", session, "--accept", "--commit", first.split()[0])
    assert proc.returncode == 0, proc.stderr
    assert f"session {session} accepted in part: 1 memory edit landed on main, " in proc.stdout


def test_a_bare_hunks_asks_about_each_hunk_then_accepts(client: Path) -> None:
    session = _review_policy(client)
    proc = run("-C", str(client), "review", session, "--hunks", stdin="y\nn\n")
    assert proc.returncode == 0, proc.stderr
    assert "Accept hunk 1/2" in proc.stdout and "Accept hunk 2/2" in proc.stdout
    assert "accepted in part: 1 memory edit landed on main" in proc.stdout
    card = git(client, "show", "main:cards/acme.md")
    assert "40k" in card and "late" not in card


def test_ask_json_keeps_the_reply_blocks_apart(client: Path) -> None:
    write = {
        "project": "acme",
        "old_text": "",
        "new_text": "\n## Budget\n40k\n",
        "index_entry": {"section_id": "budget", "keywords": ["budget"], "summary": "40k"},
    }
    model = QueueModel(
        [Reply.tool_use("write_memory_card", write, preamble="Saving that."), "Done."]
    )
    with FakeAnthropicServer(model) as api:
        proc = run(
            "-C", str(client), "ask", "remember the budget", "--json",
            ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=api.base_url,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["reply"] == "Saving that.\n\nDone."


def _world(tmp_path: Path) -> tuple[Path, Path, str]:
    home = tmp_path / "workspace"
    client = home / "acme"
    init_repo(client)
    init_repo(home / "globex")
    _simulated(client, "remember acme-website Budget: 30k", "remember acme-site Risks: late")
    session = run("-C", str(client), "log", "--json").stdout
    sid = next(e["session"] for e in json.loads(session) if e.get("session"))
    return home, client, sid


def test_bash_completes_card_client_and_session_names(tmp_path: Path) -> None:
    home, client, sid = _world(tmp_path)
    script = run("completion", "bash").stdout

    def complete(line: str) -> list[str]:
        words = shlex.split(line) + ([""] if line.endswith(" ") else [])
        program = (
            f"{script}\nCOMP_WORDS=({' '.join(shlex.quote(w) for w in words)})\n"
            f"COMP_CWORD={len(words) - 1}\n_gitmem_completion gitmem\n"
            'printf "%s\\n" "${COMPREPLY[@]}"\n'
        )
        proc = subprocess.run(
            ["bash", "--norc", "-c", program], cwd=client, capture_output=True, text=True,
            check=False, timeout=60,
            env=dict(os.environ, GITMEM_HOME=str(home),
                     PATH=os.pathsep.join([str(Path(GITMEM).parent), os.environ["PATH"]])),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split()

    assert complete("gitmem show acme-") == ["acme-site", "acme-website"]
    assert complete("gitmem log acme-w") == ["acme-website"]
    assert complete("gitmem --client g") == ["globex"]
    assert complete("gitmem status --client a") == ["acme"]
    assert complete(f"gitmem revert {sid[:9]}") == [sid]
    assert complete(f"gitmem -C {client} usage --session {sid[:9]}") == [sid]


def test_zsh_and_fish_complete_the_same_names(tmp_path: Path) -> None:
    home, client, _sid = _world(tmp_path)
    zsh = subprocess.run(
        [GITMEM], cwd=client, capture_output=True, text=True, check=False, timeout=60,
        env=dict(os.environ, _GITMEM_COMPLETE="zsh_complete", COMP_WORDS="gitmem show acme-",
                 COMP_CWORD="2", GITMEM_HOME=str(home)),
    )  # fmt: skip
    assert zsh.stdout.split("\n")[:6] == ["plain", "acme-site", "_", "plain", "acme-website", "_"]
    fish = subprocess.run(
        [GITMEM], cwd=client, capture_output=True, text=True, check=False, timeout=60,
        env=dict(os.environ, _GITMEM_COMPLETE="fish_complete", COMP_WORDS="gitmem --client ",
                 COMP_CWORD="", GITMEM_HOME=str(home)),
    )  # fmt: skip
    assert fish.stdout.split() == ["plain,acme", "plain,globex"]
