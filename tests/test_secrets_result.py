"""A secret is refused by what an edit leaves in the card and by the card's name, not only
by ``new_text``: two harmless edits cannot assemble one (issue 22, case 8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from mcp.client import ClientSession
from test_mcp_server import ENTRY, run, text_of

from gitmem.bridges.memory_tool import GitMemoryTool

from helpers import git, gm, try_write

SLACK_NAME = "xoxb-123456789012-abcdefghijklmn"
# (first new_text, old_text, second new_text): each alone holds no secret
ASSEMBLED = {
    "aws": ("aws AKIAQWERTY end", "QWERTY end", "QWERTYUIOPASDFGHJ end"),
    "github": ("token ghp_abcdefghij end", "ghij end", "ghijklmnopqrstuvwxyz0123456789 end"),
}


def test_a_secret_as_the_card_name_is_refused(client: Path) -> None:
    before = git(client, "rev-parse", "main")
    res = try_write(client, SLACK_NAME, "", "## Notes\nhello\n", "notes", "notes")
    assert res.code == 2 and "slack-token in card name" in res.err
    assert SLACK_NAME not in res.err  # the message never repeats the secret
    assert git(client, "rev-parse", "main") == before
    assert not (client / "cards" / f"{SLACK_NAME}.md").exists()
    # a heading whose slug is the token: the section id in the commit's trailers holds it
    heading = SLACK_NAME.replace("-", " ")
    res = gm("-C", str(client), "write", "acme", "--old", "", "--new", f"## {heading}\nhi\n",
             "--section", SLACK_NAME, "--keywords", "k", "--summary", "s")  # fmt: skip
    assert res.code == 2 and "slack-token in section id" in res.err, res.err
    assert git(client, "rev-parse", "main") == before


@pytest.mark.parametrize("kind", sorted(ASSEMBLED))
def test_a_secret_assembled_from_two_edits_is_refused(client: Path, kind: str) -> None:
    first, old, second = ASSEMBLED[kind]
    assert try_write(client, "acme", "", f"## Notes\n{first}\n", "notes", "notes").code == 0
    before = git(client, "rev-parse", "main")
    res = try_write(client, "acme", old, second, "notes", "notes")
    found = "aws-access-key" if kind == "aws" else "github-token"
    assert res.code == 2 and f"{found} in cards/acme.md line 4" in res.err, res.err
    assert git(client, "rev-parse", "main") == before
    assert first in (client / "cards/acme.md").read_text()
    assert git(client, "status", "--porcelain") == ""


def test_a_line_joined_by_deleting_a_line_break_is_scanned(client: Path) -> None:
    assert (
        try_write(
            client, "acme", "", "## Notes\naws AKIAQWERTY\nUIOPASDFGHJ end\n", "notes", "notes"
        ).code
        == 0
    )
    res = try_write(client, "acme", "QWERTY\nUIOP", "QWERTYUIOP", "notes", "notes")
    assert res.code == 2 and "aws-access-key in cards/acme.md line 4" in res.err, res.err


@pytest.mark.parametrize("kind", sorted(ASSEMBLED))
def test_the_memory_tool_scans_what_str_replace_leaves(client: Path, kind: str) -> None:
    first, old, second = ASSEMBLED[kind]
    path, card = "/memories/acme.md", f"# acme\n\n{first}\n"
    with GitMemoryTool(client, branch="main") as tool:
        tool.call({"command": "create", "path": path, "file_text": card})
        replace = {"command": "str_replace", "path": path, "old_str": old, "new_str": second}
        with pytest.raises(ToolError, match=f"refused: a secret .* in {path} line 3"):
            tool.call(replace)
        rename = {"command": "rename", "old_path": path, "new_path": f"/memories/{SLACK_NAME}.md"}
        with pytest.raises(ToolError, match=r"refused: a secret \(slack-token in new_path"):
            tool.call(rename)
    assert git(client, "show", "main:cards/acme.md") == card


def test_mcp_write_refuses_a_secret_name_and_an_assembled_secret(
    client: Path, tmp_path: Path
) -> None:
    first, old, second = ASSEMBLED["aws"]
    seen: dict[str, Any] = {}

    async def scenario(session: ClientSession) -> None:
        def card(project: str, old_text: str, new_text: str) -> dict[str, Any]:
            entry = {**ENTRY, "section_id": "notes"}
            return {
                "project": project,
                "old_text": old_text,
                "new_text": new_text,
                "index_entry": entry,
            }

        seen["name"] = await session.call_tool(
            "write_memory_card", card(SLACK_NAME, "", "## Notes\nhi\n")
        )
        made = await session.call_tool(
            "write_memory_card", card("acme", "", f"## Notes\n{first}\n")
        )
        assert not made.is_error, text_of(made)
        seen["assembled"] = await session.call_tool("write_memory_card", card("acme", old, second))

    run(client, tmp_path, scenario)
    assert seen["name"].is_error and "slack-token in card name" in text_of(seen["name"])
    assembled = seen["assembled"]
    assert assembled.is_error and "aws-access-key in cards/acme.md" in text_of(assembled)
    shown = git(client, "log", "--all", "-p", "--format=")
    assert "QWERTYUIOP" not in shown and SLACK_NAME not in shown
