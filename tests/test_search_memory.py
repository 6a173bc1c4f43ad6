"""The search index's rebuild holds what the index keeps, not all of history at once.

Histories are written with ``git fast-import`` (thousands of commits in a fraction of a
second); memory is what tracemalloc sees Python allocate during ``corpus.rebuild``,
compared between two runs in the same process -- never a time.
"""

from __future__ import annotations

import gc
import random
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from gitmem.git.runner import Git
from gitmem.memory.repo import MemoryRepo
from gitmem.search import corpus as search_index
from gitmem.search.ranked import search_history

from helpers import git

WORDS = [
    "budget",
    "approved",
    "invoice",
    "timeline",
    "launch",
    "hosting",
    "contact",
    "sponsor",
    "risk",
    "migration",
    "portal",
    "export",
    "freeze",
    "design",
    "vendor",
    "contract",
]


def _data(text: str) -> bytes:
    raw = text.encode()
    return b"data %d\n%s\n" % (len(raw), raw)


def _card(rng: random.Random, n: int, words: int = 30, vocab: int = 50) -> str:
    def para() -> str:
        return " ".join(rng.choice(WORDS) + str(rng.randrange(vocab)) for _ in range(words))

    return (
        f"# Client {n}\n\n## Budget\n{para()}\n\n## Timeline\n{para()}\n\n## Contacts\n{para()}\n"
    )


def append_history(
    path: Path,
    *,
    card_edits: int = 0,
    plain: int = 0,
    seed: int = 1,
    words: int = 30,
    vocab: int = 50,
) -> None:
    """``card_edits`` commits rewriting one of 10 cards, then ``plain`` commits that change
    only a file outside cards/ and sessions/ (the log grows, the search index does not)."""
    rng = random.Random(seed)
    out = [b"reset refs/heads/main\nfrom refs/heads/main^0\n"]
    when = int(git(path, "log", "-1", "--format=%at", "main")) + 1
    for i in range(card_edits + plain):
        who = b"Test Person <person@example.com> %d +0000\n" % (when + i)
        if i < card_edits:
            msg = f"Edit client-{i % 10}\n\nGitmem-Card: client-{i % 10}\n"
            change = f"cards/client-{i % 10}.md", _card(rng, i % 10, words, vocab)
        else:
            msg = (
                f"Note {i}\n\nA line of hand-written notes about the week, long enough to "
                f"look like a real message.\n\nGitmem-Session: s{i}\n"
            )
            change = "notes.txt", f"note {i}\n"
        out += [
            b"commit refs/heads/main\n",
            b"author " + who,
            b"committer " + who,
            _data(msg),
            f"M 100644 inline {change[0]}\n".encode(),
            _data(change[1]),
        ]
    git(path, "fast-import", "--quiet", "--force", input=b"".join(out))


def peak_of_rebuild(path: Path, *, cache: bool = True) -> tuple[int, int]:
    """(peak, retained) bytes Python allocated while ``rebuild`` ran on a fresh handle
    (``cache=False``: with no cache file to compare with)."""
    gc.collect()
    with MemoryRepo(path) as repo:
        if not cache:
            Path(search_index._path(repo, "main")).unlink(missing_ok=True)
        tracemalloc.start()
        try:
            state, _ = search_index.rebuild(repo)
            retained, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert state.commit == repo.tip("main")
    return peak, retained


def test_rebuild_memory_does_not_grow_with_commits_that_add_no_document(client: Path) -> None:
    append_history(client, card_edits=40)
    append_history(client, plain=4000, seed=2)
    peak_of_rebuild(client)  # warms what a process keeps (the term cache, imports)
    before, _ = peak_of_rebuild(client, cache=False)
    append_history(client, plain=12000, seed=3)
    after, _ = peak_of_rebuild(client, cache=False)
    # the log is read a piece at a time: 12,000 more commits hold nothing more (the old
    # rebuild held the whole log and every parsed commit: ~6 MB more here)
    assert after - before < 300_000, (before, after)
    with MemoryRepo(client) as repo:
        hits = search_history(repo, "budget approved", limit=3)
    assert hits and {h.card for h in hits} <= {f"client-{n}" for n in range(10)}


def test_rebuild_against_a_matching_cache_loads_no_second_state(client: Path) -> None:
    append_history(client, card_edits=600)
    peak_of_rebuild(client)  # writes the cache file
    cache = Path(search_index._path(MemoryRepo(client), "main"))
    with_cache, state_size = peak_of_rebuild(client)
    with MemoryRepo(client) as repo:
        assert search_index.rebuild(repo)[1] is True  # the cache matched
    without, _ = peak_of_rebuild(client, cache=False)
    assert cache.exists()
    # loading the cached state beside the rebuilt one took about one state more
    assert with_cache - without < state_size // 4, (with_cache, without, state_size)


def test_a_damaged_cache_is_still_found_out_and_replaced(client: Path) -> None:
    append_history(client, card_edits=30)
    with MemoryRepo(client) as repo:
        search_index.rebuild(repo)
        path = Path(search_index._path(repo, "main"))
    raw = bytearray(path.read_bytes())
    raw[-5] ^= 0xFF
    path.write_bytes(bytes(raw))
    with MemoryRepo(client) as repo:
        assert search_index.load(repo, "main") is None
        assert search_index.rebuild(repo)[1] is False
        assert search_index.rebuild(repo)[1] is True
        assert search_index.load(repo, "main") is not None


def test_equal_states_have_one_fingerprint_however_they_were_made(client: Path) -> None:
    append_history(client, card_edits=50)
    with MemoryRepo(client) as repo:
        tip = repo.tip("main")
        assert tip is not None
        base = git(client, "rev-parse", "main~20").strip()
        built = search_index.build(repo, tip)
        folded = search_index.build(repo, base)
        assert search_index.advance(repo, folded, tip)
        search_index.save(repo, "main", folded)
        loaded = search_index.load(repo, "main")
        assert loaded is not None and loaded.comparable() == built.comparable()
        marks = {search_index.fingerprint(s) for s in (built, folded, loaded)}
        assert len(marks) == 1
        assert search_index.fingerprint(search_index.build(repo, base)) not in marks
        assert search_index.rebuild(repo)[1] is True


def test_the_state_keeps_no_past_section_text(client: Path) -> None:
    # 200 rewrites of 10 cards, 3 sections of 400 words each, drawn from 32 terms (few
    # postings a document): ~2 MB of past values
    append_history(client, card_edits=200, words=400, vocab=2)
    peak_of_rebuild(client)  # warms what a process keeps (the term cache, imports)
    _, retained = peak_of_rebuild(client, cache=False)
    with MemoryRepo(client) as repo:
        state = search_index.current(repo)
        past = [d for d in state.docs if d[search_index.KIND] == search_index.PAST]
        assert len(past) >= 500
        assert all(d[search_index.TEXT] == "" for d in past)
        held = sum(len(search_index.text_of(state, d)) for d in past)
    # the old state held every past text (and then some); this one names where each is
    assert held > 1_000_000
    assert retained < held // 3, (retained, held)


def test_the_rebuild_reads_blobs_through_a_git_with_bounded_caches(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # git's cat-file, reading every card blob of history, otherwise maps the whole pack and
    # keeps 96 MiB of delta bases: at 100k commits it grew to the size of the pack
    append_history(client, card_edits=20)
    git(client, "repack", "-adq")  # packed, as a long history is: loose objects need no git
    started: list[tuple[str, ...]] = []
    popen = Git.popen

    def spy(self: Git, *args: str) -> Any:
        started.append(args)
        return popen(self, *args)

    monkeypatch.setattr(Git, "popen", spy)
    with MemoryRepo(client) as repo:
        search_index.rebuild(repo)
    limits = ("core.deltaBaseCacheLimit=", "core.packedGitLimit=", "core.packedGitWindowSize=")

    def bounded(args: tuple[str, ...]) -> bool:
        config = args[: args.index("cat-file")]
        return all(any(a.startswith(k) for a in config) for k in limits)

    cats = [a for a in started if "cat-file" in a]
    assert any(bounded(a) for a in cats), cats


def _posting_count(state: search_index.SearchState) -> int:
    """How many (term, document) postings the state's documents make, counted from the
    documents themselves (a past value's text read back)."""
    total = 0
    for d in state.docs:
        if d[search_index.KIND] != search_index.GONE:
            doc = list(d)
            doc[search_index.TEXT] = search_index.text_of(state, d)
            total += len(search_index._weighted(doc))
    return total


def test_a_posting_takes_four_bytes(client: Path) -> None:
    # a doc id and its count in one 32-bit number (the old lists interleaved them: 8 bytes)
    append_history(client, card_edits=300, vocab=400)
    with MemoryRepo(client) as repo:
        state = search_index.current(repo)
        count = _posting_count(state)
        held = sum(len(p) * p.itemsize for p in state.postings.values())
    assert count > 10_000
    assert held <= 4 * count, (held, count)


def test_a_count_too_large_for_a_small_posting_is_kept_whole(client: Path) -> None:
    # "zebra" 200 times in a section's text weighs 400 (a 4-byte posting holds up to 255)
    rng = random.Random(3)
    text = _card(rng, 0).replace("## Timeline\n", "## Timeline\n" + "zebra " * 200 + "\n")
    out = [
        b"reset refs/heads/main\nfrom refs/heads/main^0\n",
        b"commit refs/heads/main\n",
        b"author A <a@example.com> 1700000000 +0000\n",
        b"committer A <a@example.com> 1700000000 +0000\n",
        _data("Edit client-0\n\nGitmem-Card: client-0\n"),
        b"M 100644 inline cards/client-0.md\n",
        _data(text),
    ]
    git(client, "fast-import", "--quiet", "--force", input=b"".join(out))
    append_history(client, card_edits=30, seed=4)  # client-0 rewritten: the value is past
    with MemoryRepo(client) as repo:
        state = search_index.current(repo)
        got = dict(search_index.pairs(state.postings["zebra"]))
        hits = search_history(repo, "zebra", limit=3)
    assert list(got.values()) == [200 * search_index.W_TEXT]
    assert [(h.card, h.section, h.state) for h in hits] == [("client-0", "timeline", "past")]


def test_a_document_costs_its_columns_not_a_list_of_its_fields(client: Path) -> None:
    # 2,000 rewrites of 3 short sections: 6,000 documents, whose fields are mostly shared
    # strings (card, heading, date); a list of 13 fields a document (and its commit id and
    # origin as objects of their own) kept ~390 bytes a document here, columns ~260
    append_history(client, card_edits=2000, words=8)
    peak_of_rebuild(client)  # warms what a process keeps (the term cache, imports)
    _, retained = peak_of_rebuild(client, cache=False)
    with MemoryRepo(client) as repo:
        state = search_index.current(repo)
        count = len(state.docs)
        past = sum(1 for d in state.docs if d[search_index.KIND] == search_index.PAST)
        hits = search_history(repo, "budget before", limit=3)
    assert count == 6000 and past > 5900
    assert hits and all(h.commit for h in hits)
    assert retained < 330 * count, (retained, retained / count)


def test_a_documents_dates_are_packed_not_kept_as_strings(client: Path) -> None:
    # one ISO date per commit was ~75 bytes as a str object: 7 MB of a 100k-commit state
    append_history(client, card_edits=60)
    with MemoryRepo(client) as repo:
        tip = repo.tip("main")
        assert tip is not None
        state = search_index.build(repo, tip)
    docs = state.docs
    dates = {
        d for n in range(len(docs)) for d in docs[n][search_index.DATE : search_index.UNTIL + 1]
    }
    dates.discard("")
    assert len(dates) >= 50  # a date for each commit, as git wrote it
    assert all(len(d) == 25 and d[10] == "T" for d in dates)
    held = {v for col in docs.strs for v in col}
    assert not dates & held  # no column of strings keeps them
    assert len(docs.dtext) <= 25 * (len(dates) + 1)  # each written once, packed


def test_reindex_lets_go_of_the_search_rebuilds_word_caches_before_the_index(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the index is rebuilt on top of whatever the search rebuild left: its word caches
    # (~30 MB at 100k commits) must be gone by then
    from gitmem.index import build
    from gitmem.rebuild import reindex
    from gitmem.search import terms

    append_history(client, card_edits=30)
    seen: list[int] = []
    rebuild = build.rebuild_checked

    def spy(repo: MemoryRepo, branch: str = "main") -> Any:
        seen.append(len(terms._TERMS) + terms.stem.cache_info().currsize)
        return rebuild(repo, branch)

    monkeypatch.setattr(build, "rebuild_checked", spy)
    with MemoryRepo(client) as repo:
        reindex(repo)
    assert seen == [0]
