"""gitmem revert COMMIT merges card by card, section by section, as sync does."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.features.edit import write_card
from gitmem.index import build as index
from gitmem.memory.cards import section_ids, section_text
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.setup.init import init_repo

from helpers import git, gm, index_summaries, snapshot


def entry(section: str, summary: str) -> IndexEntry:
    return IndexEntry.make(section, [section], summary)


def tip(client: Path) -> str:
    return git(client, "rev-parse", "main").strip()


def card(client: Path, project: str = "acme") -> str:
    return (client / f"cards/{project}.md").read_text()


def test_an_old_edit_next_to_a_later_appended_section_reverts_where_git_revert_conflicts(
    repo: MemoryRepo, client: Path
) -> None:
    write_card(repo, "acme", "", "## Budget\n30k\n", entry("budget", "Budget is 30k"))
    raised = write_card(repo, "acme", "30k", "40k", entry("budget", "Budget raised to 40k")).commit
    write_card(repo, "acme", "", "\n## Team\nAnn\n", entry("team", "Ann leads"))
    # plain git conflicts here: the reverted line is next to the appended section
    probe = Path(tempfile.mkdtemp(dir=client.parent))
    git(client, "worktree", "add", "-q", "--detach", str(probe), "main")
    assert "CONFLICT" in git(probe, "revert", "--no-edit", raised, check=False)
    git(probe, "revert", "--abort")
    git(client, "worktree", "remove", "--force", str(probe))

    res = gm("-C", str(client), "revert", raised[:8])
    assert res.code == 0, res.err
    assert card(client) == "# acme\n\n## Budget\n30k\n\n## Team\nAnn\n"
    assert git(client, "status", "--porcelain") == ""
    assert index_summaries(repo) == {"acme/budget": "Budget is 30k", "acme/team": "Ann leads"}


def test_a_session_revert_merges_by_section_too(repo: MemoryRepo, client: Path) -> None:
    from gitmem.review import session_branches as sessions

    write_card(repo, "acme", "", "## Budget\n30k\n", entry("budget", "Budget is 30k"))
    sid = "20261130-101200-ab12"
    s = sessions.start_session(repo, sid)
    write_card(
        repo,
        "acme",
        "30k",
        "40k",
        entry("budget", "Budget raised to 40k"),
        session=sid,
        actor="agent",
        branch=s.branch,
    )
    sessions.finish_session(repo, s, "auto")
    write_card(repo, "acme", "", "## Team\nAnn\n", entry("team", "Ann leads"))  # right after 40k
    res = gm("-C", str(client), "revert", sid)
    assert res.code == 0, res.err
    assert card(client) == "# acme\n\n## Budget\n30k\n## Team\nAnn\n"
    assert index_summaries(repo) == {"acme/budget": "Budget is 30k", "acme/team": "Ann leads"}


def test_a_section_changed_since_refuses_in_one_line_and_changes_nothing(
    repo: MemoryRepo, client: Path
) -> None:
    write_card(repo, "acme", "", "## Budget\n30k\n\n## Team\nAnn\nBob\nCy\n", entry("budget", "b"))
    first = write_card(repo, "acme", "Ann", "Ann (lead)", entry("team", "Ann leads")).commit
    write_card(
        repo, "acme", "Cy", "Cy (new)", entry("team", "Cy joined")
    )  # same section, other line
    before = snapshot(client)
    res = gm("-C", str(client), "revert", first)
    assert res.code == 4
    assert (
        res.err
        == f"gitmem: error: {first[:7]} cannot be reverted cleanly: acme § team was changed since\n"
    )
    assert snapshot(client) == before


def test_undoing_the_creation_of_a_card_keeps_the_sections_added_since(
    repo: MemoryRepo, client: Path
) -> None:
    made = write_card(repo, "acme", "", "## Budget\n30k\n", entry("budget", "Budget is 30k")).commit
    write_card(repo, "acme", "", "\n## Team\nAnn\n", entry("team", "Ann leads"))
    res = gm("-C", str(client), "revert", made)
    assert res.code == 0, res.err
    assert card(client) == "# acme\n\n## Team\nAnn\n"
    assert index_summaries(repo) == {"acme/team": "Ann leads"}
    # with nothing added since, the card goes
    only = write_card(repo, "beta", "", "## Goals\nShip\n", entry("goals", "Ship it")).commit
    assert gm("-C", str(client), "revert", only).code == 0
    assert not (client / "cards/beta.md").exists()
    assert git(client, "status", "--porcelain") == ""


def test_reverting_an_already_reverted_commit_says_nothing_is_left(
    repo: MemoryRepo, client: Path
) -> None:
    write_card(repo, "acme", "", "## Budget\n30k\n", entry("budget", "Budget is 30k"))
    raised = write_card(repo, "acme", "30k", "40k", entry("budget", "Budget raised")).commit
    assert gm("-C", str(client), "revert", raised).code == 0
    undo = tip(client)
    before = snapshot(client)
    res = gm("-C", str(client), "revert", raised)
    assert res.code == 3
    assert res.err == (
        f"gitmem: error: nothing left to revert: {raised[:7]} is undone on main already "
        f"(reverted by {undo[:7]})\n"
    )
    assert snapshot(client) == before
    # the revert of the revert still applies, and then the edit can be reverted again
    assert gm("-C", str(client), "revert", undo).code == 0
    assert "40k" in card(client)
    assert gm("-C", str(client), "revert", raised).code == 0
    assert "30k" in card(client)


def test_an_edit_undone_by_hand_has_nothing_left_to_revert(repo: MemoryRepo, client: Path) -> None:
    write_card(repo, "acme", "", "## Budget\n30k\n", entry("budget", "Budget is 30k"))
    raised = write_card(repo, "acme", "30k", "40k", entry("budget", "Budget raised")).commit
    (client / "cards/acme.md").write_text(card(client).replace("40k", "30k"))
    git(client, "commit", "-qam", "back to 30k")
    before = snapshot(client)
    res = gm("-C", str(client), "revert", raised)
    assert res.code == 3
    assert (
        res.err
        == f"gitmem: error: nothing left to revert: {raised[:7]} is undone on main already\n"
    )
    assert snapshot(client) == before


# -- property: any earlier edit whose section nobody touched since reverts cleanly --------
SECTIONS = ["budget", "team", "next-steps", "risks"]
HEADINGS = {"budget": "Budget", "team": "Team", "next-steps": "Next steps", "risks": "Risks"}

# (section, how, value): how 0 rewrites the section's first line, 1 its last, 2 adds a line;
# a section not in the card yet is appended, right after the last line or after a blank one
step = st.tuples(st.sampled_from(SECTIONS), st.integers(0, 2), st.integers(0, 999))
plans = st.tuples(st.lists(step, min_size=1, max_size=7), st.integers(0, 100), st.booleans())


def body_lines(text: str, section: str) -> list[str]:
    got = section_text(text, section)
    assert got is not None
    return got.rstrip("\n").split("\n")[1:]


def apply(repo: MemoryRepo, section: str, how: int, value: int, blank: bool) -> bool:
    """One edit of ``section`` in cards/acme.md on main; False when it would change nothing."""
    raw = repo.store.read_blob("refs/heads/main:cards/acme.md")
    text = raw.decode() if raw else None
    summary = f"{section} {how} {value}"
    if text is None or section not in section_ids(text):
        sep = "\n" if blank and text is not None else ""
        write_card(
            repo, "acme", "", f"{sep}## {HEADINGS[section]}\nv{value}\n", entry(section, summary)
        )
        return True
    lines = body_lines(text, section)
    heading = f"## {HEADINGS[section]}\n"
    old = heading + "\n".join(lines)
    if how == 2:
        new = old + f"\nv{value}"
    else:
        at = 0 if how == 0 else len(lines) - 1
        if lines[at] == f"v{value}":
            return False
        new = heading + "\n".join([*lines[:at], f"v{value}", *lines[at + 1 :]])
    write_card(repo, "acme", old, new, entry(section, summary))
    return True


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plans)
def test_reverting_an_edit_of_a_section_unchanged_since_always_succeeds(
    plan: tuple[list[tuple[str, int, int]], int, bool],
) -> None:
    steps, pick, blank = plan
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "c"
        init_repo(root)
        with MemoryRepo(root) as repo:
            done: list[tuple[str, str, str]] = []  # (commit, section, summary) oldest first
            for section, how, value in steps:
                if apply(repo, section, how, value, blank):
                    done.append((tip(root), section, f"{section} {how} {value}"))
            # the edits whose section no later edit touched
            free = [i for i, d in enumerate(done) if all(t != d[1] for _, t, _ in done[i + 1 :])]
            at = free[pick % len(free)]
            sha, section, _ = done[at]
            now = card(root)
            was_raw = repo.store.read_blob(f"{sha}~1:cards/acme.md")
            was = was_raw.decode() if was_raw else ""
            indexed = index_summaries(repo)

            res = gm("-C", str(root), "revert", sha)
            assert res.code == 0, res.err
            after = card(root) if (root / "cards/acme.md").exists() else ""
            assert section_text(after, section) == section_text(was, section)
            others = [s for s in section_ids(now) if s != section]
            assert [s for s in section_ids(after) if s != section] == others
            for s in others:
                assert section_text(after, s) == section_text(now, s)
            assert git(root, "status", "--porcelain") == ""
            # the index: that section's entry as before the edit, the others' as they were
            expected = {k: v for k, v in indexed.items() if k != f"acme/{section}"}
            prior = [summary for _, s, summary in done[:at] if s == section]
            if prior:
                expected[f"acme/{section}"] = prior[-1]
            assert index_summaries(repo) == expected  # also: incremental == full replay
            rebuilt, cached = index.rebuild(repo)
            assert cached == rebuilt
            report = gm("-C", str(root), "reindex", "--json")
            assert report.code == 0 and json.loads(report.out)["matches_cache"] is True


def test_undoing_the_creation_of_a_card_without_sections_edited_since_refuses(
    repo: MemoryRepo, client: Path
) -> None:
    (client / "cards").mkdir(exist_ok=True)
    (client / "cards/notes.md").write_text("# notes\n\nfree text\n")
    git(client, "add", "-A")
    git(client, "commit", "-qm", "notes by hand")
    made = tip(client)
    (client / "cards/notes.md").write_text("# notes\n\nfree text, edited\n")
    git(client, "commit", "-qam", "edited by hand")
    before = snapshot(client)
    res = gm("-C", str(client), "revert", made)
    assert (res.code, res.err) == (
        4,
        f"gitmem: error: {made[:7]} cannot be reverted cleanly: notes was changed since\n",
    )
    assert snapshot(client) == before
