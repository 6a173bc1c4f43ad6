"""`gitmem index` in a new process after a few commits reads only what they changed: the
new commits' ``cards`` trees where they differ from their parents', the kept records of
the cards they touched, and no facts about history; its I block is still the full
replay's, whatever mix of commits came in between."""

from __future__ import annotations

import tempfile
from array import array
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_index_property import SECTIONS, do_edit, do_hand, do_revert, full_replay

from gitmem.git import objects
from gitmem.index import build as index
from gitmem.index import card_cache as index_cards
from gitmem.index import freshness
from gitmem.memory.edit import write_card
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.setup.init import init_repo

from helpers import git

# "a" and "a-b" sort one way as cards and the other way as tree entries ("a-b.md" < "a.md")
NAMES = ["a", "a-b", "beta", "gamma", "zeta"]


def _step(root: Path, kind: str, p: int, sec: int, n: int) -> None:
    project = NAMES[p]
    path = root / "cards" / f"{project}.md"
    if kind == "rm":
        if path.exists():
            git(root, "rm", "-q", f"cards/{project}.md")
            git(root, "commit", "-qm", f"drop {project}")
        return
    if kind == "other":  # a commit that changes no card
        with (root / "notes.txt").open("a") as fh:
            fh.write(f"notes {n}\n")
        git(root, "add", "notes.txt")
        git(root, "commit", "-qm", f"notes {n}")
        return
    with MemoryRepo(root) as repo:
        if kind == "edit":
            do_edit(repo, project, SECTIONS[sec], ["q3", f"w{n % 3}"], n)
        elif kind == "hand":
            do_hand(repo, project, SECTIONS[sec], n % 4)
        else:
            do_revert(repo, n)


@settings(max_examples=15, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(["edit", "edit", "edit", "hand", "hand", "rm", "other", "revert"]),
                st.integers(0, len(NAMES) - 1),
                st.integers(0, 3),
                st.integers(0, 60),
            ),
            min_size=1,
            max_size=4,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_the_index_after_any_few_commits_is_the_full_replays(
    batches: list[list[tuple[str, int, int, int]]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "c"
        init_repo(root)
        with MemoryRepo(root) as repo:
            write_card(
                repo,
                "zeta",
                "",
                "# Zeta\n\n## Budget\nvalue 0\n",
                IndexEntry.make("budget", ["k"], "budget then"),
            )
        for batch in batches:
            with MemoryRepo(root) as repo:
                index.rendered(repo)  # the text and the cards kept at this commit
            for step in batch:
                _step(root, *step)
            with MemoryRepo(root) as repo:  # a new process, as `gitmem index` is
                got = index.rendered(repo)
            with MemoryRepo(root) as repo:
                assert got == full_replay(repo).render()


def _card(i: int, more: str = "") -> str:
    return f"# Card {i}\n\n## Notes\nline {i}\n{more}\n## Plan\nplan {i}\n"


def test_a_new_process_reads_only_what_the_new_commits_changed(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemoryRepo(client) as repo:
        for i in range(40):
            write_card(repo, f"card-{i:02}", "", _card(i), IndexEntry.make("notes", ["k"], f"c{i}"))
        index.rendered(repo)
        for i in (3, 17, 29):
            write_card(
                repo,
                f"card-{i:02}",
                f"line {i}",
                f"line {i} now",
                IndexEntry.make("notes", ["k"], f"c{i} now"),
            )
        tree = repo.store.read(f"{repo.tip(MAIN)}:cards")
        assert tree is not None
    facts: list[str] = []
    parsed: list[int] = []  # the bytes of each tree the object store parsed
    real_memo, real_parse = freshness.memo_for, objects.parse_tree
    loaded: list[bytes] = []
    import marshal

    real_loads = marshal.loads

    def memo_spy(repo: MemoryRepo, branch: str) -> freshness.Memo:
        facts.append(branch)
        return real_memo(repo, branch)

    def parse_spy(data: bytes, n: int) -> list[objects.TreeEntry]:
        parsed.append(len(data))
        return real_parse(data, n)

    def loads_spy(data: bytes) -> object:
        loaded.append(data)
        return real_loads(data)

    class Marshal:  # the module as card_cache sees it, its loads counted
        dumps = staticmethod(marshal.dumps)
        loads = staticmethod(loads_spy)

    monkeypatch.setattr(freshness, "memo_for", memo_spy)
    monkeypatch.setattr(objects, "parse_tree", parse_spy)
    monkeypatch.setattr(index_cards, "marshal", Marshal, raising=False)
    with MemoryRepo(client) as repo:
        text = index.rendered(repo)
    assert facts == []  # no facts about history read: the kept cards say what was written
    assert max(parsed, default=0) < len(tree.data) // 4  # the cards tree was never parsed whole
    assert len(loaded) == 3  # the records of the three cards the commits touched, no other
    assert "c17 now" in text
    monkeypatch.undo()
    with MemoryRepo(client) as repo:
        assert text == full_replay(repo).render()


def test_a_damaged_cards_file_is_rebuilt_and_the_index_still_right(client: Path) -> None:
    with MemoryRepo(client) as repo:
        for i in range(4):
            write_card(repo, f"card-{i}", "", _card(i), IndexEntry.make("notes", ["k"], f"c{i}"))
        index.rendered(repo)
        write_card(
            repo, "card-1", "line 1", "line 1 now", IndexEntry.make("notes", ["k"], "c1 now")
        )
        kept = Path(index_cards._path(repo, MAIN))
    raw = bytearray(kept.read_bytes())
    raw[len(raw) // 2] ^= 0xFF  # a torn or edited file: its digest no longer holds
    kept.write_bytes(bytes(raw))
    with MemoryRepo(client) as repo:
        assert index_cards.advance(repo, MAIN, str(repo.tip(MAIN))) is None
        got = index.rendered(repo)
        assert got == full_replay(repo).render() and "c1 now" in got
        again = index_cards._load(repo, MAIN)
        assert again is not None and again["commit"] == repo.tip(MAIN)


def test_a_kill_between_the_cards_file_and_the_block_never_shows_a_wrong_index(
    client: Path,
) -> None:
    with MemoryRepo(client) as repo:
        for i in range(4):
            write_card(repo, f"card-{i}", "", _card(i), IndexEntry.make("notes", ["k"], f"c{i}"))
        index.rendered(repo)
        write_card(
            repo, "card-2", "line 2", "line 2 now", IndexEntry.make("notes", ["k"], "c2 now")
        )
    with MemoryRepo(client) as repo:  # the cards file written at the tip, the block not (killed)
        assert index_cards.advance(repo, MAIN, str(repo.tip(MAIN))) is not None
    with MemoryRepo(client) as repo:
        got = index.rendered(repo)
        assert got == full_replay(repo).render() and "c2 now" in got
        write_card(
            repo, "card-3", "line 3", "line 3 now", IndexEntry.make("notes", ["k"], "c3 now")
        )
    block = Path(index_cache_text(client))
    block.write_bytes(block.read_bytes().replace(b"c2 now", b"c2 NOW"))  # an edited block
    with MemoryRepo(client) as repo:
        got = index.rendered(repo)
        assert got == full_replay(repo).render() and "c2 now" in got and "c3 now" in got


def index_cache_text(client: Path) -> str:
    from gitmem.index import state_cache

    with MemoryRepo(client) as repo:
        return state_cache.text_path(repo, MAIN)


def test_the_records_grow_by_appending_and_a_damaged_one_is_never_shown(client: Path) -> None:
    with MemoryRepo(client) as repo:
        for i in range(6):
            write_card(repo, f"card-{i}", "", _card(i), IndexEntry.make("notes", ["k"], f"c{i}"))
        index.rendered(repo)
        rows = Path(index_cards._rows_path(repo, MAIN))
    first = rows.read_bytes()
    for n in range(2):
        with MemoryRepo(client) as repo:
            write_card(
                repo,
                "card-1",
                f"line 1{'!' * n}",
                f"line 1{'!' * (n + 1)}",
                IndexEntry.make("notes", ["k"], f"c1 v{n}"),
            )
        with MemoryRepo(client) as repo:
            assert index.rendered(repo) == full_replay(repo).render()
    grown = rows.read_bytes()
    assert grown.startswith(first) and len(grown) > len(first)  # appended, not rewritten
    with MemoryRepo(client) as repo:
        kept = index_cards._load(repo, MAIN)
        assert kept is not None
        write_card(repo, "card-1", "line 1!!", "line 1 again", IndexEntry.make("plan", ["p"], "p1"))
    at = dict(zip(kept["names"], array("Q", kept["offsets"]).tolist(), strict=True))
    damaged = bytearray(grown)
    damaged[at["card-1"] + 30] ^= 0xFF  # card-1's record, which the next run reads
    rows.write_bytes(bytes(damaged))
    with MemoryRepo(client) as repo:
        assert index_cards.advance(repo, MAIN, str(repo.tip(MAIN))) is None
        got = index.rendered(repo)
        assert got == full_replay(repo).render() and "p1" in got
