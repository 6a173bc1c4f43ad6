"""The index is a pure function of history: incremental upkeep == replay from the first commit."""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.errors import GitmemError
from gitmem.features.edit import write_card
from gitmem.features.revert import revert_commit
from gitmem.index import build as index
from gitmem.index import records
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.setup.init import init_repo

from helpers import git

PROJECTS = ["alpha", "beta", "gamma"]
SECTIONS = ["budget", "next-steps", "people", "risks"]
WORDS = ["invoice", "q3", "deadline", "bob", "alice", "launch", "scope"]

edit = st.tuples(
    st.just("edit"),
    st.sampled_from(PROJECTS),
    st.sampled_from(SECTIONS),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3, unique=True),
    st.integers(0, 99),
)
hand = st.tuples(
    st.just("hand"), st.sampled_from(PROJECTS), st.sampled_from(SECTIONS), st.integers(0, 3)
)
revert = st.tuples(st.just("revert"), st.integers(0, 50))
steps = st.lists(st.one_of(edit, edit, hand, revert), min_size=1, max_size=12)


def full_replay(repo: MemoryRepo) -> index.Index:
    """Replay from the first commit without touching the cache."""
    return index.resolve(repo, index.replay_all(repo))


def heading(section: str) -> str:
    return section.replace("-", " ").capitalize()


def do_edit(repo: MemoryRepo, project: str, section: str, kws: list[str], n: int) -> None:
    text = repo.store.read_blob(f"refs/heads/main:cards/{project}.md")
    body = text.decode() if text else ""
    head = f"## {heading(section)}\n"
    entry = IndexEntry.make(section, kws, f"{section} now {n}")
    if head not in body:
        write_card(repo, project, "", f"{head}value {n}\n", entry)
        return
    start = body.index(head) + len(head)
    line = body[start:].split("\n", 1)[0]
    if line == f"value {n}":
        return
    # e.g. the same line twice after hand edits: refused, nothing changed
    with contextlib.suppress(GitmemError):
        write_card(repo, project, head + line, f"{head}value {n}", entry)


def do_hand(repo: MemoryRepo, project: str, section: str, how: int) -> None:
    """A person edits the card in their editor and commits with plain git."""
    path = repo.root / "cards" / f"{project}.md"
    body = path.read_text() if path.exists() else f"# {project}\n"
    head = f"## {heading(section)}\n"
    if how == 0:  # add or extend a section
        body += f"\n{head}hand note\n" if head not in body else ""
        body += "more by hand\n"
    elif how == 1 and head in body:  # delete the section
        start = body.index(head)
        nxt = body.find("\n## ", start + 1)
        body = body[:start] + (body[nxt + 1 :] if nxt != -1 else "")
    elif how == 2 and head in body:  # rename its heading: a new section id
        body = body.replace(head, f"## {heading(section)} renamed\n")
    else:  # a hand edit that carries a valid index entry
        body += f"\n{head}by hand\n" if head not in body else "one more line by hand\n"
        path.parent.mkdir(exist_ok=True)
        path.write_text(body)
        git(repo.root, "add", "-A")
        msg = (
            f"{project}: hand edit\n\nGitmem-Card: {project}\nGitmem-Section: {section}\n"
            f"Gitmem-Keywords: hand\nGitmem-Summary: edited by hand\nGitmem-Actor: person\n"
        )
        git(repo.root, "commit", "-q", "-m", msg)
        return
    path.parent.mkdir(exist_ok=True)
    path.write_text(body)
    git(repo.root, "add", "-A")
    if git(repo.root, "status", "--porcelain").strip():
        git(repo.root, "commit", "-q", "-m", f"{project}: tidy by hand")


def do_revert(repo: MemoryRepo, pick: int) -> None:
    shas = git(repo.root, "rev-list", "main", "--", "cards").split()
    if not shas:
        return
    # conflicts and root commits are refused without changing anything
    with contextlib.suppress(GitmemError):
        revert_commit(repo, shas[pick % len(shas)])


def do_step(repo: MemoryRepo, step: tuple[object, ...]) -> None:
    """One step of a plan drawn from ``steps``: an edit, a hand edit or a revert."""
    kind = step[0]
    if kind == "edit":
        do_edit(repo, *step[1:])  # type: ignore[arg-type]
    elif kind == "hand":
        do_hand(repo, *step[1:])  # type: ignore[arg-type]
    else:
        do_revert(repo, step[1])  # type: ignore[arg-type]


def section_as_written(repo: MemoryRepo, rev: str, project: str, section: str) -> str | None:
    """The section's text at ``rev`` as git shows it, blanks at line ends left out."""
    from gitmem.memory.cards import section_text

    shown = git(repo.root, "show", f"{rev}:cards/{project}.md", check=False)
    text = section_text(shown, section) if shown else None
    return None if text is None else "\n".join(ln.rstrip() for ln in text.split("\n")).rstrip("\n")


def check_stale_marks(repo: MemoryRepo, idx: index.Index) -> None:
    """An entry is stale exactly when its section's text at the tip differs from the text in
    the commit that wrote the entry (no merges or partial accepts in these histories)."""
    for c in idx.cards:
        for s in c.sections:
            if s.indexed:
                assert s.commit is not None
                then = section_as_written(repo, s.commit, c.project, s.id)
                now = section_as_written(repo, "main", c.project, s.id)
                assert s.stale == (then != now), (c.project, s.id)
            else:
                assert not s.stale


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps)
def test_incremental_index_equals_reindex_after_every_step(plan: list[tuple[object, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "c"
        init_repo(root)
        with MemoryRepo(root) as repo:
            for step in plan:
                do_step(repo, step)
                incremental = index.refresh(repo)
                assert incremental == full_replay(repo)
                check_stale_marks(repo, incremental)
                assert incremental.render() == full_replay(repo).render()
                assert index.rendered(repo) == incremental.render()  # the text cache too
            rebuilt, cached = index.rebuild(repo)
            assert cached == rebuilt


def test_revert_restores_the_previous_entry(repo: MemoryRepo) -> None:
    write_card(repo, "alpha", "", "## Budget\nvalue 1\n", IndexEntry.make("budget", ["a"], "one"))
    res = write_card(repo, "alpha", "value 1", "value 2", IndexEntry.make("budget", ["b"], "two"))
    before = index.refresh(repo)
    assert before.cards[0].sections[0].summary == "two"
    revert_commit(repo, res.commit)
    after = index.refresh(repo)
    assert after.cards[0].sections[0].summary == "one"
    assert after.cards[0].sections[0].keywords == ("a",)
    assert after == full_replay(repo)


def test_hand_edited_section_is_listed_unindexed_and_dropped_sections_vanish(
    repo: MemoryRepo,
) -> None:
    write_card(repo, "alpha", "", "## Budget\nx\n", IndexEntry.make("budget", ["a"], "one"))
    card = repo.root / "cards/alpha.md"
    card.write_text(card.read_text().replace("## Budget", "## Money") + "\n## Notes\nhand\n")
    git(repo.root, "commit", "-qam", "hand edit")
    idx = index.refresh(repo)
    assert [(s.id, s.indexed) for s in idx.cards[0].sections] == [
        ("money", False),
        ("notes", False),
    ]
    assert "- notes: (unindexed) Notes" in idx.render()


def test_rewritten_history_triggers_a_full_rebuild(repo: MemoryRepo) -> None:
    write_card(repo, "alpha", "", "## Budget\nx\n", IndexEntry.make("budget", ["a"], "one"))
    write_card(repo, "alpha", "x", "y", IndexEntry.make("budget", ["b"], "two"))
    assert index.refresh(repo).cards[0].sections[0].summary == "two"
    assert "two" in index.rendered(repo)
    git(repo.root, "reset", "-q", "--hard", "HEAD~1")
    assert "one [a]" in index.rendered(repo)
    assert index.refresh(repo).cards[0].sections[0].summary == "one"
    assert index.refresh(repo) == full_replay(repo)


def test_render_is_byte_identical_across_clones(repo: MemoryRepo, tmp_path: Path) -> None:
    write_card(repo, "beta", "", "## Goals\nShip\n", IndexEntry.make("goals", ["ship"], "Ship it"))
    write_card(repo, "alpha", "", "## Budget\nx\n", IndexEntry.make("budget", ["a"], "one"))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo.root), str(clone))
    with MemoryRepo(clone) as other:
        assert index.refresh(other).render() == index.refresh(repo).render()
    text = index.refresh(repo).render()
    assert text.index("## alpha") < text.index("## beta")


def test_two_untitled_cards_with_the_same_bytes_keep_their_own_names(repo: MemoryRepo) -> None:
    for project in ("beta", "alpha"):
        write_card(repo, project, "", "## Budget\nx\n", IndexEntry.make("budget", ["a"], "one"))
    for p in ("alpha", "beta"):  # no "# Title" line: the card's name is its title
        path = repo.root / "cards" / f"{p}.md"
        path.write_text("## Budget\nx\n")
    git(repo.root, "commit", "-qam", "drop the titles")
    idx = index.refresh(repo)
    assert [(c.project, c.title) for c in idx.cards] == [("alpha", "alpha"), ("beta", "beta")]
    assert idx == full_replay(repo)


def test_reindex_reports_what_a_damaged_cache_got_wrong(repo: MemoryRepo) -> None:
    from helpers import gm

    write_card(repo, "alpha", "", "## Budget\nx\n", IndexEntry.make("budget", ["a"], "the truth"))
    index.refresh(repo)
    with MemoryRepo(repo.root) as other:  # another process damages the cache on disk
        loaded = records.load(other, "main")
        assert loaded is not None
        sha, kws, _ = loaded.state.history("alpha/budget")[-1]
        loaded.state.entries["alpha/budget"].append(f"{sha}\0{kws}\0a lie")
        records.save(other, "main", loaded)
    res = gm("-C", str(repo.root), "reindex", "--json")
    assert res.code == 0, res.err
    report = json.loads(res.out)
    assert report["matches_cache"] is False
    assert report["differences"] == ["alpha § budget: cache had 'a lie', history says 'the truth'"]
    again = json.loads(gm("-C", str(repo.root), "reindex", "--json").out)
    assert again["matches_cache"] is True and again["differences"] == []


def test_reindex_lays_out_the_tree_it_replayed_when_the_branch_moved_meanwhile(
    repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_card(repo, "alpha", "", "## Budget\nx\n", IndexEntry.make("budget", ["a"], "one"))
    first = repo.tip("main")
    write_card(repo, "beta", "", "## Goals\ny\n", IndexEntry.make("goals", ["g"], "two"))
    # The cards are read while git walks: here they are read at an older tip than the one
    # the log ends up replaying, as when a commit lands in between.
    monkeypatch.setattr(MemoryRepo, "tip", lambda self, branch: first)
    rebuilt, _cached = index.rebuild(repo)
    monkeypatch.undo()
    assert [c.project for c in rebuilt.cards] == ["alpha", "beta"]
    assert rebuilt == full_replay(repo)


@pytest.mark.parametrize("setting", ["separators", "aliases"])
def test_a_machine_s_trailer_settings_do_not_change_the_index(
    repo: MemoryRepo, setting: str
) -> None:
    from gitmem.ops.history import read_log

    write_card(repo, "alpha", "", "## Budget\nx\n", IndexEntry.make("budget", ["a"], "the truth"))
    card = repo.root / "cards/alpha.md"
    fields = "Card: alpha\n{0}Section: budget\n{0}Keywords: k\n{0}Summary: {1}\n"
    card.write_text(card.read_text() + "y\n")
    if setting == "separators":  # a trailer block only if "=" separates too
        message = "hand\n\nGitmem-" + fields.format("Gitmem-", "forged") + "Note=x"
        config = {"trailer.separators": "=:"}
    else:  # tokens that a configured alias would print as gitmem's keys
        message = "hand\n\n" + fields.format("", "aliased").lower()
        config = {
            f"trailer.{k}.key": f"Gitmem-{k.capitalize()}"
            for k in ("card", "section", "keywords", "summary")
        }
    git(repo.root, "commit", "-qam", message)
    before = index.rebuild(repo)[0].render()
    for key, value in config.items():
        git(repo.root, "config", key, value)
    with MemoryRepo(repo.root) as other:
        after, cached = index.rebuild(other)
        assert "- budget: (stale) the truth [a]" in before  # y was added by hand
        assert after.render() == before and cached == after
        assert read_log(other.git, "HEAD", max_count=1)[0].trailers == {}
