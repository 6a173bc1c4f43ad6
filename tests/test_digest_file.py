"""The cache files under .git/gitmem/: read back only as written, whole."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from gitmem.index import build as index
from gitmem.index import digest_file
from gitmem.memory.edit import write_card
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.search.ranked import search

values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.integers() | st.text(max_size=5) | st.binary(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(values, st.data())
def test_what_is_written_reads_back_and_any_damaged_byte_reads_as_nothing(
    data: Any, draw: st.DataObject
) -> None:

    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "cache.marshal")
        assert digest_file.write(path, data)
        assert digest_file.read(path) == data
        raw = bytearray(Path(path).read_bytes())
        at = draw.draw(st.integers(0, len(raw) - 1))
        raw[at] ^= 0xFF
        Path(path).write_bytes(bytes(raw))
        assert digest_file.read(path) is None
        assert sorted(p.name for p in Path(tmp).iterdir()) == ["cache.marshal"]  # no tmp left


def test_a_cache_that_cannot_be_written_is_not_kept(tmp_path: Path) -> None:
    assert digest_file.write(str(tmp_path / "no-such-folder" / "x.marshal"), [1]) is False
    assert digest_file.read(str(tmp_path / "no-such-folder" / "x.marshal")) is None


def test_the_index_caches_are_digest_files(repo: MemoryRepo) -> None:
    """The search index keeps its own format (a fingerprint beside the digest:
    tests/test_search_memory.py); every cache of the index is a digest file."""
    write_card(repo, "acme", "", "## Goals\nShip v2\n", IndexEntry.make("goals", ["v2"], "Ship v2"))
    index.refresh(repo, MAIN)
    index.rendered(repo, MAIN)  # the I block, kept card by card
    assert [h.card for h in search(repo, "ship")] == ["acme"]
    kept = {p.name: digest_file.read(str(p)) for p in repo.gitmem_dir.glob("*.marshal")}
    found = {n for n, data in kept.items() if isinstance(data, dict) and "version" in data}
    files = {"index-fresh-main.marshal", "index-main.cards.marshal"}
    assert files <= found, sorted(kept)
