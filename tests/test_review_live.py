"""`gitmem review SESSION --accept` of a session still running (an MCP connection open,
writing) is refused before anything moves; once the session has ended it is accepted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.client import ClientSession
from test_mcp_server import ENTRY, SERVER, connect, session_branches

from helpers import git

FIRST: dict[str, Any] = {
    "project": "acme", "old_text": "", "new_text": "## Budget\n30k\n", "index_entry": ENTRY,
}  # fmt: skip
SECOND: dict[str, Any] = {**FIRST, "old_text": "30k", "new_text": "40k"}


def review(client: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SERVER, "-C", str(client), "review", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_accepting_a_running_session_is_refused_until_it_ends(client: Path, tmp_path: Path) -> None:
    toml = client / "gitmem.toml"
    toml.write_text(toml.read_text().replace('review = "auto"', 'review = "review"'))
    git(client, "commit", "-qam", "sessions wait for review")
    main = git(client, "rev-parse", "main")
    seen: dict[str, Any] = {}

    async def scenario(session: ClientSession) -> None:
        assert not (await session.call_tool("write_memory_card", FIRST)).is_error
        (branch,) = session_branches(client)
        sid = branch.removeprefix("gitmem/session/")
        tip = git(client, "rev-parse", branch)
        refused = review(client, sid, "--accept")
        seen.update(sid=sid, refused=refused, rejected=review(client, sid, "--reject"))
        assert git(client, "rev-parse", "main") == main  # nothing moved
        assert git(client, "rev-parse", branch) == tip
        # The session goes on writing on its branch.
        assert not (await session.call_tool("write_memory_card", SECOND)).is_error

    async def main_() -> None:
        async with connect(client, tmp_path / "mcp.err") as session:
            await scenario(session)

    anyio.run(main_)
    refused, sid = seen["refused"], seen["sid"]
    assert refused.returncode == 4, refused.stderr
    assert refused.stdout == ""
    (line,) = refused.stderr.strip().splitlines()
    assert sid in line and "still running" in line
    assert "Traceback" not in refused.stderr
    assert seen["rejected"].returncode == 4 and "still running" in seen["rejected"].stderr

    accepted = review(client, sid, "--accept")  # the connection closed: the session ended
    assert accepted.returncode == 0, accepted.stderr
    assert "40k" in git(client, "show", "main:cards/acme.md")
    assert session_branches(client) == []
    assert git(client, "status", "--porcelain") == ""
