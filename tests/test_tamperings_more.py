"""More tamperings (#33): an object damaged on disk or holding another object's bytes, and
what else plain git can do to a signed memory. Each through `gitmem verify` (one line, exit
1, never 70) and through what the agent's session does with it (it refuses to start on it, one
line)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from anthropic.tools import ToolError
from test_tamperings import agent_result
from test_verify import _verify, acme, signing_on

from gitmem import GitMemoryTool, MemoryRepo
from gitmem.errors import CorruptObject

from helpers import git, gm

__all__ = ["acme", "signing_on"]  # the fixtures, used by name


def _object_file(path: Path, rev: str) -> tuple[str, Path]:
    sha = git(path, "rev-parse", rev).strip()
    loose = path / ".git" / "objects" / sha[:2] / sha[2:]
    loose.chmod(0o644)
    return sha, loose


def test_a_card_object_damaged_on_disk_is_named_and_never_read(acme: Path) -> None:
    sha, loose = _object_file(acme, "HEAD:cards/acme.md")
    loose.write_bytes(b"other bytes")
    code, lines = _verify(acme)
    assert code == 1 and lines == [
        f"cards/acme.md: main's card acme is object {sha[:12]}: git cannot read it (missing or "
        f"damaged); the working tree holds it intact: `rm -f .git/objects/{sha[:2]}/{sha[2:]}` "
        "then `git hash-object -w --no-filters -- cards/acme.md` writes it again "
        "(`git fsck --full` checks the rest)"
    ]
    res = gm("-C", str(acme), "show", "acme", "budget")
    assert res.code == 5 and res.err.startswith(f"gitmem: error: git object {sha} (cards/acme.md)")
    with pytest.raises(CorruptObject, match=f"^git object {sha} \\(cards/acme.md\\) is missing"):
        agent_result(acme)  # the session's I block reads the card: it does not start
    for command in ("rm", "git hash-object"):  # the line's advice, word for word
        [run] = [c for c in lines[0].split("`")[1::2] if c.startswith(command)]
        subprocess.run(run, shell=True, cwd=acme, check=True, capture_output=True)
    assert _verify(acme)[0] == 0
    assert "50k" in agent_result(acme)["content"]


def test_a_card_object_holding_another_objects_bytes(acme: Path, tmp_path: Path) -> None:
    sha, loose = _object_file(acme, "HEAD:cards/acme.md")
    _, persona = _object_file(acme, "HEAD:persona.md")
    shutil.copyfile(persona, loose)  # a valid object, of other text
    (acme / "cards" / "acme.md").write_text("# Acme\n\n## Budget\n99k\n")  # no intact copy
    git(acme, "update-index", "--assume-unchanged", "cards/acme.md")  # (plain git sees none)
    code, lines = _verify(acme)
    assert code == 1 and lines[0] == (
        f"cards/acme.md: main's card acme is object {sha[:12]}: its bytes are not the ones its "
        "id names (gitmem refuses them); `git fsck --full` shows the damage; "
        f"`rm -f .git/objects/{sha[:2]}/{sha[2:]}`, then copy it from a clone that has it: "
        f"`git -C CLONE cat-file blob {sha} | git hash-object -w -t blob --stdin`"
    )
    assert "Persona" not in gm("-C", str(acme), "show", "acme").out
    result = agent_result(acme, None)  # the I block came from its cache: the read refuses
    assert result.get("is_error") is True and "Persona" not in str(result["content"])
    assert str(result["content"]).startswith(f"Error: git object {sha} (cards/acme.md)")
    with MemoryRepo(acme) as repo, pytest.raises(ToolError, match=f"^git object {sha} "):
        GitMemoryTool(repo, branch="main").call(
            {"command": "view", "path": "/memories/acme.md"}
        )  # the memory tool's view: the one-line error the tool runner returns


def test_a_damaged_cards_folder(acme: Path) -> None:
    sha, loose = _object_file(acme, "HEAD:cards")
    loose.write_bytes(b"xx")
    res = gm("-C", str(acme), "verify")
    assert res.code == 1, res.err
    assert res.out.startswith(f"cards: main's cards is object {sha[:12]}: git cannot read it")
    assert f"`git -C CLONE cat-file tree {sha} | git hash-object -w -t tree --stdin`" in res.out
    assert gm("-C", str(acme), "show", "acme").code == 5
