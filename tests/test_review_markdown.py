"""`gitmem review ID --markdown`: the session as a pull-request description."""

from __future__ import annotations

import json
from pathlib import Path

from test_review import SID, agent_session, check_expected, person_writes

from gitmem.memory.repo import MemoryRepo

from helpers import gm


def test_markdown_matches_the_expected_file(repo: MemoryRepo, client: Path) -> None:
    person_writes(repo)
    agent_session(repo)
    res = gm("-C", str(client), "review", SID, "--markdown")
    assert res.code == 0, res.err
    check_expected(client, "review_markdown.md", res.out)


def test_markdown_shows_each_sections_entry_before_and_after(
    repo: MemoryRepo, client: Path
) -> None:
    person_writes(repo)
    agent_session(repo)
    out = gm("-C", str(client), "review", SID, "--markdown").out
    budget = out.split("### acme-website § budget\n", 1)[1].split("###", 1)[0]
    assert "- before: Budget set to 30k — keywords: budget" in budget
    assert "- after: Q3 budget raised to 40k — keywords: budget, q3" in budget
    beta = out.split("### beta § goals\n", 1)[1].split("###", 1)[0]
    assert "- before: _(none)_" in beta
    assert "```diff\n@@ " in out and "+Budget: 40k" in out and "-Budget: 30k" in out


def test_markdown_json_and_refusals(repo: MemoryRepo, client: Path) -> None:
    person_writes(repo)
    agent_session(repo)
    data = json.loads(gm("-C", str(client), "review", SID, "--markdown", "--json").out)
    assert data["session"] == SID and data["markdown"].startswith(f"# Memory session {SID}\n")
    res = gm("-C", str(client), "review", SID, "--markdown", "--accept")
    assert res.code == 2 and res.err.startswith("gitmem: error: --markdown only shows")
    assert gm("-C", str(client), "review", "nope", "--markdown").code == 3
