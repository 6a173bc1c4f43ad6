"""What `gitmem status` and the I block say at scale: a long list of unindexed sections is
cut to its first ten with the command that lists them all (`--json` keeps every one), and
a block folded but still over its budget says so in its header, as in `gitmem status`."""

from __future__ import annotations

import json
from pathlib import Path

from test_index_tiers import fill, index_out, set_budget

from gitmem.memory.repo import MemoryRepo

from helpers import git, gm


def person_commits_sections(client: Path, n: int) -> list[str]:
    """A card a person committed by hand: no index entry describes its sections."""
    body = "".join(f"## Part {i}\npart {i} text\n\n" for i in range(n))
    (client / "cards/big.md").write_text(f"# Big\n\n{body}")
    git(client, "add", "cards/big.md")
    git(client, "commit", "-qm", "my card", "--no-verify")
    return [f"big § part-{i}" for i in range(n)]


def test_status_lists_ten_unindexed_sections_and_names_the_command_for_the_rest(
    client: Path,
) -> None:
    ten = person_commits_sections(client, 10)  # ten or fewer: listed in full
    shown = gm("-C", str(client), "status").out
    assert all(f"  {s}\n" in shown for s in ten) and "more:" not in shown
    sections = person_commits_sections(client, 25)
    out = gm("-C", str(client), "status").out.splitlines()
    at = out.index("Unindexed sections (25): no index entry says what they hold")
    assert out[at + 1 : at + 12] == [
        *(f"  {s}" for s in sections[:10]),
        "  … and 15 more: `gitmem stale` lists them all",
    ]
    assert not any(s in line for s in sections[10:] for line in out)
    data = json.loads(gm("-C", str(client), "status", "--json").out)
    assert sorted(data["unindexed"]) == sorted(sections)  # --json keeps every one
    listed = gm("-C", str(client), "stale").out.splitlines()  # the command it names
    assert all(f"  {s}" in listed for s in sections)


def test_a_folded_block_still_over_its_budget_says_so(repo: MemoryRepo, client: Path) -> None:
    fill(repo, 40)
    set_budget(client, 600)  # folded, and it fits
    block = index_out(client)
    assert "sections, folded to fit the index budget." in block
    set_budget(client, 100)  # not even the names fit
    block = index_out(client)
    assert -(-len(block.encode()) // 4) > 100
    header = block.splitlines()[1]
    assert "folded to fit" not in header
    assert "folded, and still over the index budget of 100 tokens" in header, header
    assert "\nOver budget: this index is" in block  # and the agent is told, as before
    status = gm("-C", str(client), "status").out
    assert "  folded, and still over: " in status and "folded to fit" not in status
