"""Every name and single-line value refuses a line break, a tab or NUL anywhere in it.

``$`` in a pattern matches before a final newline, so ``evil\\n`` used to pass as a
card name and ``s1\\n`` as a session id. Checked for each name kind, in the
validators and through each way in: the CLI, the chat tools, MCP, the memory tool.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from anthropic.tools import ToolError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client import ClientSession
from test_mcp_server import connect, text_of

from gitmem.agent.tools import MemoryTools
from gitmem.bridges.memory_tool import GitMemoryTool
from gitmem.errors import InvalidInput
from gitmem.memory import names
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import validate

from helpers import git, gm, snapshot

FORBIDDEN = ["\n", "\r", "\t", "\0", "\u2028", "\u2029"]
LINE_BREAKS = ["\n", "\r", "\0", "\u2028", "\u2029"]  # what no file name may hold

# name kind -> (validator, a valid value)
KINDS: dict[str, tuple[Callable[[str], object], str]] = {
    "project": (names.project, "acme-website"),
    "section": (names.section_id, "next-steps"),
    "client": (names.client, "acme"),
    "session": (names.session, "20261130-101200-ab12"),
    "actor": (names.actor, "agent"),
    "summary": (names.summary, "Budget raised to 40k"),
    "keyword": (lambda v: names.keywords([v]), "budget"),
    "keywords": (names.split_keywords, "budget, q3"),
    "branch": (names.branch, "gitmem/session/s1"),
    "remote": (names.remote, "origin"),
}


def spliced(valid: str, char: str, at: int) -> str:
    at = at % (len(valid) + 1)
    return valid[:at] + char + valid[at:]


@settings(max_examples=400)
@given(
    kind=st.sampled_from(sorted(KINDS)),
    char=st.sampled_from(FORBIDDEN),
    at=st.integers(min_value=0, max_value=80),
    repeat=st.integers(min_value=1, max_value=3),
)
def test_every_validator_refuses_a_forbidden_char_anywhere(
    kind: str, char: str, at: int, repeat: int
) -> None:
    check, valid = KINDS[kind]
    check(valid)  # the value itself is fine
    bad = spliced(valid, char * repeat, at)
    with pytest.raises(InvalidInput) as err:
        check(bad)
    assert "\n" not in str(err.value)


@given(kind=st.sampled_from(sorted(KINDS)), char=st.sampled_from(FORBIDDEN))
def test_a_trailing_forbidden_char_is_refused(kind: str, char: str) -> None:
    check, valid = KINDS[kind]
    with pytest.raises(InvalidInput):
        check(valid + char)


@given(char=st.sampled_from(FORBIDDEN), at=st.integers(0, 40))
def test_a_hand_made_commits_trailers_refuse_them_too(char: str, at: int) -> None:
    pairs = [
        ("Gitmem-Card", "acme"),
        ("Gitmem-Section", "budget"),
        ("Gitmem-Keywords", "k"),
        ("Gitmem-Digest", "0123456789abcdef"),
        ("Gitmem-Session", "s1"),
        ("Gitmem-Actor", "cli"),
    ]
    validate(pairs)
    for i, (key, value) in enumerate(pairs):
        bad = [*pairs[:i], (key, spliced(value, char, at)), *pairs[i + 1 :]]
        with pytest.raises(InvalidInput):
            validate(bad)


INVISIBLE = ["\u202e", "\u200b", "\u200d", "\ufeff", "\u2066", "\x85", "\ue000"]


@given(
    kind=st.sampled_from(["summary", "keyword", "keywords"]),
    char=st.sampled_from(INVISIBLE),
    at=st.integers(0, 40),
)
def test_summaries_and_keywords_refuse_what_a_reader_cannot_see(
    kind: str, char: str, at: int
) -> None:
    check, valid = KINDS[kind]
    with pytest.raises(InvalidInput, match="one line of visible text"):
        check(spliced(valid, char, at))


def test_a_reversed_summary_is_refused_at_the_cli(client: Path) -> None:
    before = snapshot(client)
    res = gm("-C", str(client), *write_args(**{"--summary": "Budget \u202e04 si"}))
    assert res.code == 2 and "'\\u202e'" in res.err and res.err.count("\n") == 1, res.err
    assert snapshot(client) == before


# -- the CLI ---------------------------------------------------------------------
CARD = "## Budget\n30k\n"


def write_args(**over: str) -> list[str]:
    opts = {
        "project": "acme",
        "--section": "budget",
        "--keywords": "budget, q3",
        "--summary": "Budget is 30k",
        "--session": "s1",
        "--actor": "cli",
        "--branch": "main",
    }
    opts.update(over)
    args = ["write", opts.pop("project"), "--old", "", "--new", CARD]
    for key, value in opts.items():
        args += [key, value]
    return args


CLI_CASES: dict[str, Callable[[str], list[str]]] = {
    "project": lambda bad: write_args(project=bad),
    "section": lambda bad: write_args(**{"--section": bad}),
    "keywords": lambda bad: write_args(**{"--keywords": bad}),
    "summary": lambda bad: write_args(**{"--summary": bad}),
    "session": lambda bad: write_args(**{"--session": bad}),
    "actor": lambda bad: write_args(**{"--actor": bad}),
    "branch": lambda bad: write_args(**{"--branch": bad}),
    "show-project": lambda bad: ["show", bad],
    "show-section": lambda bad: ["show", "acme", bad],
    "show-branch": lambda bad: ["show", "acme", "--branch", bad],
    "log-branch": lambda bad: ["log", "--branch", bad],
    "index-branch": lambda bad: ["index", "--branch", bad],
    "revert-session": lambda bad: ["revert", bad],
    "sync-remote": lambda bad: ["sync", bad],
    "chat-session": lambda bad: ["chat", "--session", bad],
}
VALID = {
    "project": "acme",
    "section": "budget",
    "keywords": "budget",
    "summary": "ok",
    "session": "s1",
    "actor": "cli",
    "branch": "main",
    "show-project": "acme",
    "show-section": "budget",
    "show-branch": "main",
    "log-branch": "main",
    "index-branch": "main",
    "revert-session": "s1",
    "sync-remote": "origin",
    "chat-session": "s1",
}


@pytest.mark.parametrize("case", sorted(CLI_CASES))
def test_cli_refuses_each_forbidden_char_and_changes_nothing(
    client: Path, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # chat needs a key before it starts; nothing listens there, and nothing is asked
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    assert gm("-C", str(client), *write_args(project="acme", **{"--session": "s0"})).code == 0
    before = snapshot(client)
    valid = VALID[case]
    for char in FORBIDDEN:
        for bad in (valid + char, char + valid, valid[:1] + char + valid[1:]):
            res = gm("-C", str(client), *CLI_CASES[case](bad))
            assert res.code == 2, (case, bad, res.code, res.err)
            assert res.err.count("\n") == 1 and res.err.startswith("gitmem: error: "), res.err
    assert snapshot(client) == before
    assert not list((client / "cards").glob("*\n*"))


def test_the_reported_repro_no_card_with_a_newline_no_split_trailer_block(client: Path) -> None:
    res = gm("-C", str(client), *write_args(project="evil\n"))
    assert res.code == 2 and "invalid project name 'evil\\n'" in res.err
    res = gm("-C", str(client), *write_args(**{"--session": "s1\n"}))
    assert res.code == 2 and "invalid session id 's1\\n'" in res.err
    assert sorted(p.name for p in (client / "cards").iterdir()) == [".gitkeep"]
    assert "Gitmem-Card" not in git(client, "log", "--format=%B")


def test_workspace_client_names_refuse_them(client: Path) -> None:
    for char in FORBIDDEN:
        res = gm("--client", f"acme{char}", "index")
        assert res.code == 2 and res.err.count("\n") == 1, res.err
        res = gm("init", "--client", f"acme{char}")
        assert res.code == 2 and res.err.count("\n") == 1, res.err


# -- the chat tools ------------------------------------------------------------------
ENTRY = {"section_id": "budget", "keywords": ["budget", "q3"], "summary": "Q3 budget is 30k"}
WRITE: dict[str, Any] = {"project": "acme", "old_text": "", "new_text": CARD, "index_entry": ENTRY}


def bad_tool_calls(char: str, at: int) -> list[tuple[str, dict[str, Any]]]:
    def entry(**over: Any) -> dict[str, Any]:
        return {**WRITE, "index_entry": {**ENTRY, **over}}

    return [
        ("write_memory_card", {**WRITE, "project": spliced("acme", char, at)}),
        ("write_memory_card", entry(section_id=spliced("budget", char, at))),
        ("write_memory_card", entry(keywords=["q3", spliced("budget", char, at)])),
        ("write_memory_card", entry(summary=spliced("Q3 budget is 30k", char, at))),
        ("read_memory_card", {"project": spliced("acme", char, at)}),
        ("read_memory_card", {"project": "acme", "section_id": spliced("budget", char, at)}),
    ]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(char=st.sampled_from(FORBIDDEN), at=st.integers(0, 20))
def test_chat_tool_calls_refuse_them_as_tool_errors(repo: MemoryRepo, char: str, at: int) -> None:
    tools = MemoryTools(repo, session="s1")
    tip = repo.tip("main")
    for name, args in bad_tool_calls(char, at):
        got = tools.call(name, args)
        assert got.is_error and got.text.startswith("Error: invalid "), (name, args, got)
        assert "\n" not in got.text
    assert repo.tip("main") == tip and tools.commits == []


def test_a_tool_session_id_with_a_newline_is_refused(repo: MemoryRepo) -> None:
    for char in FORBIDDEN:
        got = MemoryTools(repo, session=f"s1{char}").call("write_memory_card", WRITE)
        assert got.is_error and "invalid session id" in got.text
    assert not (repo.root / "cards/acme.md").exists()


# -- MCP ---------------------------------------------------------------------------
def test_mcp_tools_refuse_them(client: Path, tmp_path: Path) -> None:
    results: list[tuple[str, bool, str]] = []

    async def main() -> None:
        async with connect(client, tmp_path / "mcp.err") as session:
            await scenario(session)

    async def scenario(session: ClientSession) -> None:
        for char in FORBIDDEN:
            for at in (0, 2, 99):
                for name, args in bad_tool_calls(char, at):
                    got = await session.call_tool(name, args)
                    results.append((repr(args), bool(got.is_error), text_of(got)))

    anyio.run(main)
    assert len(results) == len(FORBIDDEN) * 3 * 6
    for args, is_error, text in results:
        assert is_error and "invalid " in text and "\n" not in text, (args, text)
    assert "Gitmem-Card" not in git(client, "log", "--all", "--format=%B")


# -- the memory tool -----------------------------------------------------------------
@pytest.mark.parametrize("char", LINE_BREAKS)
def test_memory_tool_never_makes_a_file_name_with_a_line_break(repo: MemoryRepo, char: str) -> None:
    tool = GitMemoryTool(repo, "main")
    tool.call({"command": "create", "path": "/memories/ok.md", "file_text": "x\n"})
    before = repo.tip("main")
    for path in (f"/memories/evil{char}.md", f"/memories/{char}", f"/memories/d{char}/x.md"):
        for cmd in (
            {"command": "create", "path": path, "file_text": "x\n"},
            {"command": "rename", "old_path": "/memories/ok.md", "new_path": path},
            {"command": "str_replace", "path": path, "old_str": "x", "new_str": "y"},
            {"command": "insert", "path": path, "insert_line": 0, "insert_text": "y\n"},
        ):
            with pytest.raises(ToolError):
                tool.call(cmd)
    assert repo.tip("main") == before
    listed = repo.git.run("ls-tree", "-r", "-z", "--name-only", "main").stdout.split(b"\0")
    assert not [n for n in listed if any(c.encode() in n for c in LINE_BREAKS)]
    assert not [p for p in (repo.root / "cards").iterdir() if any(c in p.name for c in LINE_BREAKS)]


def test_memory_tool_session_and_branch_names_refuse_them(repo: MemoryRepo) -> None:
    for char in FORBIDDEN:
        with pytest.raises(InvalidInput):
            GitMemoryTool(repo, session=f"s1{char}")
        with pytest.raises(InvalidInput):
            GitMemoryTool(repo, f"main{char}")
        with pytest.raises(InvalidInput):
            GitMemoryTool(repo, "main", actor=f"agent{char}")
    assert git(repo.root, "for-each-ref", "refs/heads/gitmem/") == ""


@settings(max_examples=150, deadline=None)
@given(st.text(st.sampled_from("ab-./_@{}~^: \t\n\0\u2028é"), min_size=1, max_size=12))
def test_a_branch_name_passes_only_when_git_takes_it(name: str) -> None:
    try:
        names.branch(name)
    except InvalidInput as err:
        assert "\n" not in str(err)
        return
    assert not any(c in name for c in FORBIDDEN)
    proc = subprocess.run(
        ["git", "check-ref-format", "--branch", name], capture_output=True, check=False
    )
    assert proc.returncode == 0, name
