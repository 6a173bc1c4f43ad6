"""The search index's cache file: found out when damaged, equal for equal states, and
what it holds (past values with their words) on histories written with ``git fast-import``.
"""

from __future__ import annotations

import random
from datetime import date
from pathlib import Path

import pytest

from gitmem.index import build as index_build
from gitmem.memory.repo import MemoryRepo
from gitmem.search import cache, fold
from gitmem.search.documents import PAST, W_TEXT, text_of
from gitmem.search.ranked import Hit, rank, search
from gitmem.search.related import Related
from gitmem.search.state import fingerprint, pairs

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
    step: int = 1,
) -> None:
    """``card_edits`` commits rewriting one of 10 cards, then ``plain`` commits that change
    only a file outside cards/ and sessions/ (the log grows, the search index does not);
    ``step``: the seconds between two commits."""
    rng = random.Random(seed)
    out = [b"reset refs/heads/main\nfrom refs/heads/main^0\n"]
    when = int(git(path, "log", "-1", "--format=%at", "main")) + 1
    for i in range(card_edits + plain):
        who = b"Test Person <person@example.com> %d +0000\n" % (when + i * step)
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


def test_a_damaged_cache_is_still_found_out_and_replaced(client: Path) -> None:
    append_history(client, card_edits=30)
    with MemoryRepo(client) as repo:
        assert cache.rebuild(repo)[1] is None  # no cache before
        path = Path(cache.path(repo, "main"))
    raw = bytearray(path.read_bytes())
    raw[-5] ^= 0xFF
    path.write_bytes(bytes(raw))
    with MemoryRepo(client) as repo:
        assert cache.load(repo, "main") is None
        assert cache.rebuild(repo)[1] is False
        assert cache.rebuild(repo)[1] is True
        assert cache.load(repo, "main") is not None


def test_equal_states_have_one_fingerprint_however_they_were_made(client: Path) -> None:
    append_history(client, card_edits=50)
    with MemoryRepo(client) as repo:
        tip = repo.tip("main")
        assert tip is not None
        base = git(client, "rev-parse", "main~20").strip()
        built = fold.build(repo, tip)
        folded = fold.build(repo, base)
        assert fold.advance(repo, folded, tip)
        cache.save(repo, "main", folded)
        loaded = cache.load(repo, "main")
        assert loaded == built
        assert folded.days == built.days == loaded.days  # a dated search reads these
        marks = {fingerprint(s) for s in (built, folded, loaded)}
        assert len(marks) == 1
        assert fingerprint(fold.build(repo, base)) not in marks
        assert cache.rebuild(repo)[1] is True


def test_past_values_are_read_back_from_the_commits_that_wrote_them(client: Path) -> None:
    append_history(client, card_edits=60)
    with MemoryRepo(client) as repo:
        state = cache.current(repo)
        past = [d for d in state.docs if d.kind == PAST]
        assert len(past) >= 150
        for d in past:
            shown = git(client, "show", f"{d.commit}:cards/{d.card}.md")
            assert text_of(d, repo.store.read_blob) in shown
        hits = search(repo, "budget before", limit=3)
    assert hits and all(h.state == "past" and h.commit for h in hits)


def test_a_word_repeated_200_times_is_counted_whole(client: Path) -> None:
    # "zebra" 200 times in a section's text weighs 400
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
        state = cache.current(repo)
        got = dict(pairs(state.postings["zebra"]))
        hits = search(repo, "zebra", limit=3)
    assert list(got.values()) == [200 * W_TEXT]
    assert [(h.card, h.section, h.state) for h in hits] == [("client-0", "timeline", "past")]


QUERIES = ["budget3 invoice7", "timeline12", "contact4 before", "risk1 launch2 hosting3", "zebra"]


def _saved(client: Path) -> None:
    append_history(client, card_edits=80, words=40)
    with MemoryRepo(client) as repo:
        cache.current(repo)  # built and written


def test_a_search_read_from_the_file_in_parts_ranks_as_the_whole_state(client: Path) -> None:
    _saved(client)
    with MemoryRepo(client) as repo:
        stored = cache.Stored.open(cache.path(repo, "main"))
        assert stored is not None and stored.whole()
        whole = stored.state()
        assert whole == fold.build(repo, str(repo.tip("main")))
        read = repo.store.read_blob
        for q in QUERIES:
            for limit in (1, 10, 50):
                got = rank(stored, q, read, limit)
                assert got == rank(whole, q, read, limit)
        assert any(rank(stored, q, read, 10) for q in QUERIES)


def test_dated_and_as_of_searches_read_from_the_file_rank_as_the_whole_state(
    client: Path,
) -> None:
    append_history(client, card_edits=80, words=40, step=3 * 86400)  # over 240 days
    with MemoryRepo(client) as repo:
        cache.current(repo)  # built and written
    with MemoryRepo(client) as repo:
        stored = cache.Stored.open(cache.path(repo, "main"))
        assert stored is not None
        whole = fold.build(repo, str(repo.tip("main")))
        day = sorted(d.date[:10] for d in whole.docs)[len(whole.docs) // 2]
        month = date.fromisoformat(day).strftime("%B %Y")
        read = repo.store.read_blob
        for q in ("budget3 invoice7", "timeline12 contact4", "risk1 launch2"):
            dated = rank(stored, f"{q} in {month}", read, 10)
            assert dated == rank(whole, f"{q} in {month}", read, 10)
            then = rank(stored, q, read, 10, as_of=day)
            assert then == rank(whole, q, read, 10, as_of=day)
            assert then and all(h.date[:10] <= day for h in then)  # nothing written later
            assert all(h.until[:10] > day for h in then if h.state == "past")
        first = rank(stored, f"budget3 in {month}", read, 1)
        assert first and day[:7] in (
            first[0].date[:7],
            first[0].until[:7],
        )  # written or replaced then


def _expected(client: Path, query: str) -> list[Hit]:
    with MemoryRepo(client) as repo:
        state = fold.build(repo, str(repo.tip("main")))
        related = Related(index_build.refresh(repo, "main"))  # as search learns it
        return rank(state, query, repo.store.read_blob, 10, related=related)


def _flip_inside(file: str, wheres: list[tuple[int, int, bytes]]) -> None:
    raw = bytearray(Path(file).read_bytes())
    for offset, size, _ in wheres:
        raw[offset + size // 2] ^= 0xFF
    Path(file).write_bytes(bytes(raw))


@pytest.mark.parametrize("part", ["terms", "lengths", "kinds", "docs"])
def test_a_damaged_part_a_search_reads_is_never_served(client: Path, part: str) -> None:
    _saved(client)
    query = "budget3 invoice7"
    want = _expected(client, query)
    assert want
    with MemoryRepo(client) as repo:
        file = cache.path(repo, "main")
        stored = cache.Stored.open(file)
        assert stored is not None
        table = stored.table
    if part == "terms":
        damaged = [table["terms"][cache._bucket("budget3", len(table["terms"]))]]
    else:
        damaged = table["docs"] if part == "docs" else [table[part]]
    _flip_inside(file, damaged)
    with MemoryRepo(client) as repo:
        assert cache.load(repo, "main") is None
        assert list(search(repo, query)) == want
    again = cache.Stored.open(file)
    assert again is not None and again.whole()  # made again from history


def test_a_file_replaced_under_a_running_search_is_read_anew(client: Path) -> None:
    _saved(client)
    with MemoryRepo(client) as repo:
        assert list(search(repo, "timeline12")) == _expected(client, "timeline12")
        with MemoryRepo(client) as other:  # reindex, say, writes the file again
            cache.save(other, "main", fold.build(other, str(other.tip("main"))))
        assert list(search(repo, "contact4 before")) == _expected(client, "contact4 before")
