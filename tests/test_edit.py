"""One edit = one commit: content, trailers, CAS on a branch, the working tree following."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from gitmem.errors import DirtyCard, EditError, NotFound
from gitmem.features.edit import apply_edit, write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry

from helpers import git

ENTRY = IndexEntry.make("budget", ["budget", "q3"], "Budget set to 30k")
CARD = "# Acme website\n\n## Budget\nBudget: 30k\n\n## Next steps\nCall Bob.\n"


def seed(repo: MemoryRepo) -> None:
    write_card(repo, "acme-website", "", CARD, ENTRY)


def test_create_then_edit_makes_one_commit_each_with_exact_trailers(repo: MemoryRepo) -> None:
    before = repo.tip("main")
    seed(repo)
    entry = IndexEntry.make("budget", ["budget", "invoice", "q3"], "Q3 budget raised to 40k")
    res = write_card(
        repo, "acme-website", "30k", "40k", entry, session="20261130-101200-ab12", actor="agent"
    )
    count = git(repo.root, "rev-list", "--count", f"{before}..main").strip()
    assert count == "2"
    parsed = git(
        repo.root,
        "interpret-trailers",
        "--parse",
        input=git(repo.root, "log", "-1", "--format=%B", res.commit).encode(),
    )
    assert parsed.splitlines() == [
        "Gitmem-Card: acme-website",
        "Gitmem-Section: budget",
        "Gitmem-Keywords: budget, invoice, q3",
        "Gitmem-Summary: Q3 budget raised to 40k",
        # the section as the edit left it: its lines, heading first, trailing blanks dropped
        "Gitmem-Digest: " + hashlib.sha1(b"## Budget\nBudget: 40k").hexdigest()[:16],
        "Gitmem-Session: 20261130-101200-ab12",
        "Gitmem-Actor: agent",
    ]
    assert git(repo.root, "log", "-1", "--format=%s", res.commit).strip() == (
        "acme-website: Q3 budget raised to 40k"
    )
    assert (repo.root / "cards/acme-website.md").read_text() == CARD.replace("30k", "40k")
    assert git(repo.root, "status", "--porcelain") == ""


def test_create_adds_title_when_missing(repo: MemoryRepo) -> None:
    write_card(repo, "beta", "", "## Goals\nShip.\n", IndexEntry.make("goals", ["goals"], "Goals"))
    assert (repo.root / "cards/beta.md").read_text() == "# beta\n\n## Goals\nShip.\n"


def test_append_with_empty_old_text(repo: MemoryRepo) -> None:
    seed(repo)
    write_card(
        repo, "acme-website", "", "## Risks\nLate.\n", IndexEntry.make("risks", ["risk"], "Risk")
    )
    assert (repo.root / "cards/acme-website.md").read_text() == CARD + "## Risks\nLate.\n"


def test_apply_edit_reports_line_numbers_of_ambiguous_matches() -> None:
    text = "# T\n\n## A\nfoo\n## B\nfoo\n"
    with pytest.raises(EditError, match=r"occurs 2 times .*lines 4, 6"):
        apply_edit(text, "foo", "bar", "t")
    with pytest.raises(EditError, match="not found"):
        apply_edit(text, "baz", "bar", "t")
    with pytest.raises(NotFound):
        apply_edit(None, "foo", "bar", "t")
    assert apply_edit(text, "## A\nfoo", "## A\nbar", "t") == "# T\n\n## A\nbar\n## B\nfoo\n"


def test_write_to_session_branch_leaves_worktree_and_main_alone(repo: MemoryRepo) -> None:
    seed(repo)
    main = repo.tip("main")
    git(repo.root, "branch", "gitmem/session/s1", "main")
    write_card(repo, "acme-website", "30k", "50k", ENTRY, branch="gitmem/session/s1", session="s1")
    assert repo.tip("main") == main
    assert "30k" in (repo.root / "cards/acme-website.md").read_text()
    assert "50k" in git(repo.root, "show", "gitmem/session/s1:cards/acme-website.md")
    assert git(repo.root, "status", "--porcelain") == ""


def test_uncommitted_edit_to_the_card_refuses_and_changes_nothing(repo: MemoryRepo) -> None:
    seed(repo)
    card = repo.root / "cards/acme-website.md"
    card.write_text(card.read_text() + "person's note\n")
    tip = repo.tip("main")
    with pytest.raises(DirtyCard, match=r"uncommitted edits to cards/acme-website\.md"):
        write_card(repo, "acme-website", "30k", "40k", ENTRY)
    assert repo.tip("main") == tip
    assert card.read_text().endswith("person's note\n")


def test_staged_edit_to_the_card_also_refuses(repo: MemoryRepo) -> None:
    seed(repo)
    card = repo.root / "cards/acme-website.md"
    card.write_text(CARD.replace("Bob", "Alice"))
    git(repo.root, "add", "cards/acme-website.md")
    with pytest.raises(DirtyCard):
        write_card(repo, "acme-website", "30k", "40k", ENTRY)


def test_uncommitted_edit_to_another_card_does_not_block(repo: MemoryRepo) -> None:
    seed(repo)
    other = repo.root / "cards/other.md"
    other.write_text("# other\n\n## X\nmine\n")
    write_card(repo, "acme-website", "30k", "40k", ENTRY)
    assert other.read_text() == "# other\n\n## X\nmine\n"
    assert "?? cards/other.md" in git(repo.root, "status", "--porcelain")


def test_cas_detects_a_moved_branch_and_reapplies(repo: MemoryRepo, tmp_path: Path) -> None:
    """A second repo object (another process's view) writes between our read and our CAS."""
    seed(repo)
    other = MemoryRepo(repo.root)
    write_card(
        other,
        "acme-website",
        "Call Bob.",
        "Call Carol.",
        IndexEntry.make("next-steps", ["call"], "Call Carol"),
    )
    write_card(repo, "acme-website", "30k", "40k", ENTRY)
    text = git(repo.root, "show", "main:cards/acme-website.md")
    assert "40k" in text and "Carol" in text
    other.close()


def test_objects_written_in_process_pass_fsck(repo: MemoryRepo) -> None:
    seed(repo)
    for i in range(5):
        write_card(repo, f"p{i}", "", f"## S{i}\nx\n", IndexEntry.make(f"s{i}", ["k"], f"s {i}"))
    out = git(repo.root, "fsck", "--strict", "--no-dangling")
    assert "error" not in out.lower()


def test_a_heading_inside_a_longer_fence_is_not_a_section() -> None:
    """A fence closes only on as many backticks as opened it (CommonMark): a ``` line
    inside a ```` block does not end it, so the heading after it is still code."""
    from gitmem.memory.cards import section_ids

    text = "# C\n\n## Real\nx\n````md\n```\n## Not a heading\n```\n````\n## After\ny\n"
    assert section_ids(text) == ["real", "after"]
    assert section_ids("## A\n~~~\n```\n## B\n~~~\n## C\n") == ["a", "c"]
