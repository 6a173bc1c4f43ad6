"""A remote's gitmem.toml cannot switch off this machine's review or secret scanning: a
weakening that `gitmem sync` brings is held until `gitmem trust` (issue 22, case 7)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from test_sync import make_pair, sync

from gitmem.bridges.memory_tool import GitMemoryTool

from helpers import git, gm

AWS = "aws key AKIAQWERTYUIOPASDFGHJ here"


def set_toml(path: Path, old: str, new: str, message: str) -> None:
    toml = (path / "gitmem.toml").read_text()
    assert old in toml
    (path / "gitmem.toml").write_text(toml.replace(old, new))
    git(path, "commit", "-qam", message)


def push_from_other(tmp_path: Path, bare: Path, edits: dict[str, str]) -> None:
    """Another clone (plain git) pushes a gitmem.toml with ``edits`` made to it."""
    other = tmp_path / "other"
    if not other.exists():
        git(tmp_path, "clone", "-q", str(bare), str(other))
    git(other, "pull", "-q", "--ff-only", "origin", "main")
    toml = (other / "gitmem.toml").read_text()
    for old, new in edits.items():
        assert old in toml, old
        toml = toml.replace(old, new)
    (other / "gitmem.toml").write_text(toml)
    git(other, "commit", "-qam", "settings", "--no-verify")
    git(other, "push", "-q", "origin", "main")


def write_secret(path: Path, section: str) -> tuple[int, str]:
    res = gm(
        "-C", str(path), "write", "acme-website", "--old", "", "--new",
        f"## {section}\n{AWS}\n", "--section", section.lower(), "--keywords", "k",
        "--summary", "a key",
    )  # fmt: skip
    return res.code, res.err


def session_waits(path: Path) -> bool:
    with GitMemoryTool(path) as tool:
        tool.call({"command": "create", "path": f"/memories/n{tool.session_id}.md",
                   "file_text": "# n\n\n## Note\nhello\n"})  # fmt: skip
        done = tool.finish()
    assert done is not None
    return done.pending


def settings(path: Path) -> dict[str, dict[str, object]]:
    res = gm("-C", str(path), "status", "--json")
    assert res.code == 0, res.err
    return {s["key"]: s for s in json.loads(res.out)["settings"]}


REVIEW = ('review = "auto"', 'review = "review"')
WEAKEN = {
    'review = "review"': 'review = "auto"',
    "[limits]": '[secrets]\nallow = [".*"]\n\n[limits]',
}


def test_a_remote_cannot_turn_off_review_or_secret_scanning(tmp_path: Path) -> None:
    bare, laptop, _desktop = make_pair(tmp_path)
    set_toml(laptop, *REVIEW, "review every session")  # a person's own edit applies at once
    assert session_waits(laptop)
    assert sync(laptop)[0] == 0
    set_toml(laptop, REVIEW[1], REVIEW[0], "no review for a while")  # and so does weakening
    assert not session_waits(laptop)  # (its own change, pushed, is not the remote's)
    assert sync(laptop)[0] == 0
    set_toml(laptop, *REVIEW, "review again")
    assert sync(laptop)[0] == 0

    push_from_other(tmp_path, bare, WEAKEN)
    code, out, err = sync(laptop)
    assert code == 0, err
    assert "origin's gitmem.toml weakens what protects this machine" in out
    assert 'memory.review = "review" applies (origin says "auto")' in out
    assert 'secrets.allow = [] applies (origin says [".*"])' in out
    assert "`gitmem trust`" in out
    assert 'review = "auto"' in (laptop / "gitmem.toml").read_text()  # the file is synced

    code, err = write_secret(laptop, "Keys")
    assert code == 2 and "aws-access-key" in err
    assert session_waits(laptop)
    (laptop / "cards/acme-website.md").write_text(f"# Acme\n\n## Keys\n{AWS}\n")
    hook = subprocess.run(  # a person's commit: the pre-commit hook scans it
        ["git", "commit", "-qam", "keys by hand"], cwd=laptop, capture_output=True, text=True
    )
    assert hook.returncode == 1 and "aws-access-key" in hook.stderr, hook.stderr
    git(laptop, "checkout", "--", "cards")

    shown = settings(laptop)
    assert (
        shown["memory.review"]["value"] == "review" and shown["memory.review"]["source"] == "held"
    )
    assert shown["secrets.allow"]["value"] == [] and shown["secrets.allow"]["source"] == "held"
    text = gm("-C", str(laptop), "status").out
    assert (
        'Review policy: "review", held on this machine: origin\'s gitmem.toml' in text
        and 'says "auto"; `gitmem trust` accepts it' in text
    )

    # another sync (nothing new) and one that brings more leave the hold in place
    assert sync(laptop)[0] == 0
    push_from_other(tmp_path, bare, {'allow = [".*"]': 'allow = [".*", "AKIA"]'})
    code, out, _ = sync(laptop)
    assert code == 0 and 'secrets.allow = [] applies (origin says [".*", "AKIA"])' in out
    assert write_secret(laptop, "Keys")[0] == 2

    res = gm("-C", str(laptop), "trust")
    assert res.code == 0, res.err
    assert 'memory.review = "auto" applies now' in res.out and "secrets.allow" in res.out
    assert write_secret(laptop, "Keys")[0] == 0
    assert not session_waits(laptop)
    assert settings(laptop)["memory.review"]["source"] == "gitmem.toml"
    assert "nothing is held" in gm("-C", str(laptop), "trust").out


def test_strengthening_applies_and_one_setting_can_be_accepted(tmp_path: Path) -> None:
    bare, laptop, _desktop = make_pair(tmp_path)
    set_toml(laptop, *REVIEW, "review every session")
    assert sync(laptop)[0] == 0
    push_from_other(tmp_path, bare, {**WEAKEN, "max_edit_bytes = 65536": "max_edit_bytes = 100"})
    code, out, err = sync(laptop)
    assert code == 0, err
    assert "max_edit_bytes" not in out  # stricter: it applies without asking
    long = gm("-C", str(laptop), "write", "beta", "--old", "", "--new", "## Long\n" + "x" * 200,
              "--section", "long", "--keywords", "k", "--summary", "long")  # fmt: skip
    assert long.code == 2 and "over the limit of 100" in long.err

    res = gm("-C", str(laptop), "trust", "memory.review", "--json")
    assert res.code == 0, res.err
    assert [a["key"] for a in json.loads(res.out)["accepted"]] == ["memory.review"]
    assert not session_waits(laptop)
    assert settings(laptop)["secrets.allow"]["source"] == "held"
    bad = gm("-C", str(laptop), "trust", "memory.reveiw")
    assert bad.code == 2 and "no protective setting 'memory.reveiw'" in bad.err


def test_a_remote_that_empties_gitmem_toml_leaves_review_on(tmp_path: Path) -> None:
    bare, laptop, _desktop = make_pair(tmp_path)
    set_toml(laptop, *REVIEW, "review every session")
    assert sync(laptop)[0] == 0
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    (other / "gitmem.toml").write_text("# every key at its default\n")
    git(other, "commit", "-qam", "no settings", "--no-verify")
    git(other, "push", "-q", "origin", "main")
    code, out, err = sync(laptop)
    assert code == 0, err
    assert 'memory.review = "review" applies (origin says "auto")' in out
    assert session_waits(laptop)


def test_a_weakening_settled_in_a_stopped_sync_is_held_too(tmp_path: Path) -> None:
    bare, laptop, _desktop = make_pair(tmp_path)
    set_toml(laptop, *REVIEW, "review every session")
    assert sync(laptop)[0] == 0
    push_from_other(tmp_path, bare, {"[limits]": '[secrets]\nallow = [".*"]\n\n[limits]'})
    set_toml(laptop, "[limits]", '[secrets]\nallow = ["EXAMPLE"]\n\n[limits]', "my exception")
    code, out, _ = sync(laptop)
    assert code != 0 and "gitmem.toml" in out, out
    assert write_secret(laptop, "Keys")[0] != 0  # while it is stopped
    theirs = git(laptop, "show", "refs/gitmem/conflict/remote:gitmem.toml")
    (laptop / "gitmem.toml").write_text(theirs)  # the person takes origin's version
    code, out, err = sync(laptop, "--continue")
    assert code == 0, err
    assert 'secrets.allow = [] applies (origin says [".*"])' in out, out
    assert write_secret(laptop, "Keys")[0] == 2
    assert settings(laptop)["secrets.allow"]["source"] == "held"
