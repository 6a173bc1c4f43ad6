"""Bad input: a one-line error naming the problem, a non-zero exit, the repo byte-for-byte unchanged."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, gm, snapshot

GOOD = ["--section", "budget", "--keywords", "budget,q3", "--summary", "Budget raised"]


def refused(client: Path, *args: str, match: str, stdin: str | bytes = b"") -> str:
    before = snapshot(client)
    res = gm("-C", str(client), *args, stdin=stdin)
    assert res.code != 0
    lines = res.err.strip().splitlines()
    assert len(lines) == 1, res.err
    assert lines[0].startswith("gitmem: error: ")
    assert match in lines[0], lines[0]
    assert snapshot(client) == before
    return lines[0]


@pytest.mark.parametrize(
    "name",
    ["../etc", "/abs/path", "-rf", "Acme", "a b", "a/b", "ac..me", "a--b", "", "x" * 65, "naïve"],
)
def test_project_names_that_are_not_slugs(seeded: Path, name: str) -> None:
    refused(
        seeded,
        "write",
        "--old",
        "",
        "--new",
        "## Budget\nx\n",
        *GOOD,
        "--",
        name,
        match="invalid project name",
    )


def test_old_text_missing(seeded: Path) -> None:
    refused(
        seeded, "write", "acme", "--old", "40k", "--new", "50k", *GOOD, match="old_text not found"
    )


def test_old_text_ambiguous_lists_line_numbers(seeded: Path) -> None:
    refused(seeded, "write", "acme", "--old", "foo", "--new", "bar", *GOOD, match="(lines 7, 8)")


def test_unknown_card(seeded: Path) -> None:
    refused(seeded, "write", "nope", "--old", "x", "--new", "y", *GOOD, match="no card 'nope'")


def test_section_absent_after_the_edit(seeded: Path) -> None:
    args = ["--section", "timeline", "--keywords", "k", "--summary", "s"]
    refused(
        seeded,
        "write",
        "acme",
        "--old",
        "30k",
        "--new",
        "40k",
        *args,
        match="section 'timeline' is not in cards/acme.md after the edit (sections: budget, notes)",
    )


def test_edit_that_removes_the_indexed_section(seeded: Path) -> None:
    refused(
        seeded,
        "write",
        "acme",
        "--old",
        "## Budget\n",
        "--new",
        "",
        *GOOD,
        match="section 'budget' is not in",
    )


@pytest.mark.parametrize(
    "flag,value",
    [
        ("--summary", "raised\nGitmem-Card: other"),
        ("--summary", "raised\rGitmem-Card: other"),
        ("--summary", "fine Gitmem-Section: evil"),
        ("--summary", "Signed-off-by: mallory"),
        ("--keywords", "budget,q3\nGitmem-Actor: root"),
        ("--keywords", "Gitmem-Card: x"),
        ("--keywords", "a:b"),
        ("--section", "budget\nGitmem-Card: x"),
    ],
)
def test_trailer_injection(seeded: Path, flag: str, value: str) -> None:
    args = dict(zip(GOOD[::2], GOOD[1::2], strict=True))
    args[flag] = value
    flat = [x for kv in args.items() for x in kv]
    refused(seeded, "write", "acme", "--old", "30k", "--new", "40k", *flat, match="")


def test_non_utf8_argument(seeded: Path) -> None:
    bad = b"\xff\xfe40k".decode("utf-8", "surrogateescape")
    refused(seeded, "write", "acme", "--old", "30k", "--new", bad, *GOOD, match="not valid UTF-8")


def test_non_utf8_file(seeded: Path, tmp_path: Path) -> None:
    f = tmp_path / "new.txt"
    f.write_bytes(b"Budget: \xff\xfe\n")
    refused(
        seeded,
        "write",
        "acme",
        "--old",
        "Budget: 30k\n",
        "--new-file",
        str(f),
        *GOOD,
        match="not valid UTF-8",
    )


def test_non_utf8_argv_through_the_real_command(seeded: Path) -> None:
    before = snapshot(seeded)
    gitmem = Path(sys.executable).with_name("gitmem")
    cmd = [str(gitmem), "-C", str(seeded), "write", "acme", "--old", "30k", "--new"]
    proc = subprocess.run(
        [*map(str.encode, cmd), b"\xff40k", *map(str.encode, GOOD)],
        capture_output=True,
        check=False,
    )
    assert proc.returncode != 0
    assert proc.stderr.decode().strip().splitlines() == [
        "gitmem: error: new_text is not valid UTF-8"
    ]
    assert snapshot(seeded) == before


def test_edit_over_the_configured_size_cap(seeded: Path) -> None:
    toml = seeded / "gitmem.toml"
    toml.write_text(toml.read_text().replace("max_edit_bytes = 65536", "max_edit_bytes = 100"))
    git(seeded, "commit", "-qam", "smaller edits")
    refused(
        seeded,
        "write",
        "acme",
        "--old",
        "30k",
        "--new",
        "4" * 200,
        *GOOD,
        match="over the limit of 100 (limits.max_edit_bytes in gitmem.toml)",
    )
    assert gm("-C", str(seeded), "write", "acme", "--old", "30k", "--new", "40k", *GOOD).code == 0


def test_write_to_a_card_with_uncommitted_edits(seeded: Path) -> None:
    card = seeded / "cards/acme.md"
    card.write_text(card.read_text() + "my own note\n")
    refused(
        seeded,
        "write",
        "acme",
        "--old",
        "30k",
        "--new",
        "40k",
        *GOOD,
        match="uncommitted edits to cards/acme.md",
    )


def test_missing_required_flag_is_a_usage_error(seeded: Path) -> None:
    before = snapshot(seeded)
    res = gm("-C", str(seeded), "write", "acme", "--old", "30k", "--new", "40k")
    assert res.code == 2
    assert res.err.splitlines() == [
        "gitmem: error: Missing option '--section'. (see `gitmem write --help`)"
    ]
    assert snapshot(seeded) == before


def test_outside_a_memory_repo(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    res = gm("-C", str(tmp_path / "plain"), "index")
    assert res.code == 3
    assert res.err.strip() == (
        f"gitmem: error: not a gitmem memory repo: {tmp_path / 'plain'}; `gitmem init PATH` makes "
        "one, -C PATH or --client NAME picks one (`gitmem clients` lists the clients)"
    )


def test_json_errors_are_machine_readable(seeded: Path) -> None:
    res = gm("-C", str(seeded), "write", "acme", "--old", "zzz", "--new", "y", *GOOD, "--json")
    assert res.code == 2
    assert '"type": "EditError"' in res.out and '"exit_code": 2' in res.out


def memory_state(client: Path) -> tuple[dict[str, str], str, str]:
    """What a refused `git commit` must leave alone: refs, history, working tree, staged state.

    git itself writes COMMIT_EDITMSG, the tree objects and refreshes the index before
    it runs the commit-msg hook; those are git's, not memory, and are left out.
    """
    files = {
        k: v
        for k, v in snapshot(client).items()
        if not k.startswith(".git/objects/") and k not in (".git/COMMIT_EDITMSG", ".git/index")
    }
    return files, git(client, "rev-parse", "HEAD"), git(client, "status", "--porcelain")


@pytest.mark.parametrize(
    "trailers,reason",
    [
        (
            "Gitmem-Card: acme\nGitmem-Section: budget\nGitmem-Keywords: k\nGitmem-Summary: s\nGitmem-Evil: x",
            "unknown trailer 'Gitmem-Evil'",
        ),
        (
            "Gitmem-Card: nope\nGitmem-Section: budget\nGitmem-Keywords: k\nGitmem-Summary: s",
            "names 'nope' but cards/nope.md is not in this commit",
        ),
        (
            "Gitmem-Card: acme\nGitmem-Section: timeline\nGitmem-Keywords: k\nGitmem-Summary: s",
            "Gitmem-Section 'timeline' is not a section of cards/acme.md",
        ),
        (
            "Gitmem-Card: ../etc\nGitmem-Section: budget\nGitmem-Keywords: k\nGitmem-Summary: s",
            "invalid project name",
        ),
        (
            "Gitmem-Card: acme\nGitmem-Card: acme\nGitmem-Section: budget\nGitmem-Keywords: k\nGitmem-Summary: s",
            "given more than once",
        ),
        ("Gitmem-Section: budget\nGitmem-Keywords: k\nGitmem-Summary: s", "without Gitmem-Card"),
        (
            "Gitmem-Card: acme\nGitmem-Section: budget",
            "Gitmem-Section needs Gitmem-Keywords beside it",
        ),
        # git log reads trailers past a "---" line (no patch divider in a commit): so does the hook
        (
            "---\n\nGitmem-Card: nope\nGitmem-Section: budget\nGitmem-Keywords: k\nGitmem-Summary: s",
            "names 'nope' but cards/nope.md is not in this commit",
        ),
    ],
)
def test_hook_refuses_forged_trailers(seeded: Path, trailers: str, reason: str) -> None:
    card = seeded / "cards/acme.md"
    card.write_text(card.read_text().replace("30k", "35k"))
    git(seeded, "add", "cards/acme.md")
    before, head, status = memory_state(seeded)
    proc = subprocess.run(
        ["git", "commit", "-q", "-m", f"hand edit\n\n{trailers}\n"],
        cwd=seeded,
        capture_output=True,
        check=False,
    )
    assert proc.returncode != 0
    last = proc.stderr.decode().strip().splitlines()[-1]
    assert last.startswith("gitmem: commit refused: ") and reason in last, last
    assert memory_state(seeded) == (before, head, status)


def test_hook_accepts_a_valid_hand_made_entry(seeded: Path) -> None:
    card = seeded / "cards/acme.md"
    card.write_text(card.read_text().replace("30k", "35k"))
    msg = "hand edit\n\nGitmem-Card: acme\nGitmem-Section: budget\nGitmem-Keywords: k\nGitmem-Summary: by hand\n"
    git(seeded, "commit", "-qam", msg)
    assert "- budget: by hand [k]" in gm("-C", str(seeded), "index").out


def test_hook_accepts_several_reverts_and_refuses_a_malformed_one(seeded: Path) -> None:
    sha = git(seeded, "rev-parse", "HEAD").strip()
    (seeded / "notes.txt").write_text("x\n")
    git(seeded, "add", "notes.txt")
    ok = f"undo\n\nGitmem-Reverts: {sha}\nGitmem-Reverts: {sha}\nGitmem-Actor: person\n"
    git(seeded, "commit", "-qm", ok)
    (seeded / "notes.txt").write_text("y\n")
    bad = subprocess.run(
        ["git", "commit", "-qam", "undo\n\nGitmem-Reverts: HEAD~1\n"],
        cwd=seeded,
        capture_output=True,
        check=False,
    )
    assert bad.returncode != 0
    assert "Gitmem-Reverts must be a full commit sha" in bad.stderr.decode()
