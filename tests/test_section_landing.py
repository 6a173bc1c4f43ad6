"""Sessions that land on a moved main merge card by card, section by section (issue 22, 10)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_mcp_server import connect

from gitmem.errors import Conflict
from gitmem.git.runner import Sha
from gitmem.memory.cards import section_text, sections
from gitmem.memory.repo import MemoryRepo
from gitmem.ops.land import land
from gitmem.ops.merge import merge_card

from helpers import git

SESSIONS = 4
CARD = "cards/acme.md"
Sides = tuple[list[str], dict[str, str], dict[str, str], list[str]]


def append(key: str, heading: str) -> dict[str, Any]:
    entry = {"section_id": key, "keywords": ["part"], "summary": heading}
    text = f"## {heading}\n{key} text\n"
    return {"project": "acme", "old_text": "", "new_text": text, "index_entry": entry}


def test_concurrent_sessions_appending_different_sections_all_land(
    client: Path, tmp_path: Path
) -> None:
    answers: list[int] = []

    async def first() -> None:
        async with connect(client, tmp_path / "first.err") as s:
            assert not (await s.call_tool("write_memory_card", append("base", "Base"))).is_error

    async def one(i: int, opened: list[int], written: anyio.Event) -> None:
        async with connect(client, tmp_path / f"{i}.err") as s:
            opened.append(i)
            while len(opened) < SESSIONS:  # every session starts from the same main
                await anyio.sleep(0.01)
            got = await s.call_tool("write_memory_card", append(f"part-{i}", f"Part {i}"))
            assert not got.is_error
            answers.append(i)
            await written.wait()  # then all of them end at once

    async def main() -> None:
        await first()
        opened: list[int] = []
        written = anyio.Event()
        async with anyio.create_task_group() as group:
            for i in range(1, SESSIONS + 1):
                group.start_soon(one, i, opened, written)
            while len(answers) < SESSIONS:
                await anyio.sleep(0.01)
            written.set()

    anyio.run(main)
    card = git(client, "show", "main:cards/acme.md")
    assert sections(card)[0].id == "base"
    assert sorted(s.id for s in sections(card)) == sorted(
        ["base", *(f"part-{i}" for i in range(1, SESSIONS + 1))]
    )
    for i in range(1, SESSIONS + 1):
        assert section_text(card, f"part-{i}") == f"## Part {i}\npart-{i} text\n"
        assert "landed on main" in (tmp_path / f"{i}.err").read_text()
    assert git(client, "for-each-ref", "refs/heads/gitmem/session/") == ""


# -- the section merge itself --------------------------------------------------------------

ids = st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=6)


def card(blocks: list[tuple[str, str]]) -> str:
    return "# acme\n\n" + "".join(f"## {k}\n{v}\n" for k, v in blocks)


def body(text: str, key: str) -> str | None:
    got = section_text(text, key)
    return None if got is None else got.split("\n", 1)[1].rstrip("\n")


@st.composite
def two_sides(draw: st.DrawFn) -> Sides:
    """A base card's section ids, the sections each side edits or adds (disjoint), and the
    ids each side adds in its order."""
    base = draw(ids)
    edited = draw(st.lists(st.sampled_from(base), unique=True)) if base else []
    fresh = draw(st.lists(st.sampled_from("klmnopqrst"), unique=True, max_size=6))
    split = draw(st.integers(0, len(edited)))
    cut = draw(st.integers(0, len(fresh)))
    ours = {k: f"ours {k}" for k in edited[:split] + fresh[:cut]}
    theirs = {k: f"theirs {k}" for k in edited[split:] + fresh[cut:]}
    return base, ours, theirs, fresh


def side(base: list[str], changes: dict[str, str]) -> str:
    kept = [(k, changes.get(k, f"was {k}")) for k in base]
    return card(kept + [(k, v) for k, v in changes.items() if k not in base])


@given(two_sides())
def test_disjoint_changes_merge_and_no_section_is_lost(
    sides: Sides,
) -> None:
    base, ours, theirs, _fresh = sides
    merged, clashes = merge_card(card([(k, f"was {k}") for k in base]), *_texts(sides), ("a", "b"))
    assert clashes == []
    got = [s.id for s in sections(merged)]
    new_ours = [k for k in ours if k not in base]
    new_theirs = [k for k in theirs if k not in base]
    assert got == base + new_ours + new_theirs  # main's sections first, then the session's
    for k in got:
        assert body(merged, k) == ours.get(k, theirs.get(k, f"was {k}"))


def _texts(sides: Sides) -> tuple[str, str]:
    base, ours, theirs, _ = sides
    return side(base, ours), side(base, theirs)


@given(two_sides(), st.data())
def test_the_same_section_changed_both_ways_is_a_conflict(
    sides: Sides, data: st.DataObject
) -> None:
    base, ours, theirs, fresh = sides
    both = data.draw(st.sampled_from(base + fresh + ["z"]))
    ours, theirs = {**ours, both: f"ours {both}"}, {**theirs, both: f"theirs {both}"}
    merged, clashes = merge_card(
        card([(k, f"was {k}") for k in base]), side(base, ours), side(base, theirs), ("a", "b")
    )
    assert clashes == [both]
    assert f"ours {both}" in merged and f"theirs {both}" in merged  # both kept, marked
    for k in set(ours) | set(theirs) | set(base):
        assert f"## {k}\n" in merged


def test_the_same_section_changed_in_two_sessions_waits_naming_it(
    client: Path, tmp_path: Path
) -> None:
    async def main() -> None:
        async with connect(client, tmp_path / "first.err") as s:
            assert not (await s.call_tool("write_memory_card", append("base", "Base"))).is_error
        async with (
            connect(client, tmp_path / "a.err") as a,
            connect(client, tmp_path / "b.err") as b,
        ):
            for who, s in (("a", a), ("b", b)):
                edit = {**append("base", "Base"), "old_text": "base text", "new_text": who}
                assert not (await s.call_tool("write_memory_card", edit)).is_error

    anyio.run(main)
    ends = sorted(((tmp_path / f"{who}.err").read_text() for who in "ab"), key=len)
    assert "1 memory edit landed on main" in ends[0]
    assert "1 memory edit waits for review" in ends[1]
    assert "(acme § base was changed on both sides" in ends[1]
    assert body(git(client, "show", "main:cards/acme.md"), "base") in ("a", "b")


def test_a_landing_merges_a_moved_main_section_by_section(repo: MemoryRepo) -> None:
    """``land`` onto a branch that moved since the session began, for many card pairs."""
    main = repo.tip("main")
    assert main is not None

    def commit(parent: Sha, text: str) -> Sha:
        root = repo.store.read(f"{parent}^{{tree}}")
        assert root is not None
        tree = repo.store.update_path(root.sha, CARD, repo.store.write("blob", text.encode()))
        assert tree is not None
        return repo.write_commit(tree, [parent], "acme: edit\n")

    @settings(max_examples=25)
    @given(two_sides(), st.booleans())
    def check(sides: Sides, clash: bool) -> None:
        base_ids, ours, theirs, _ = sides
        if clash and base_ids:  # the same section changed both ways
            ours, theirs = {**ours, base_ids[0]: "ours"}, {**theirs, base_ids[0]: "theirs"}
        base = commit(main, card([(k, f"was {k}") for k in base_ids]))
        moved = commit(base, side(base_ids, ours))
        git(repo.root, "update-ref", "refs/heads/target", moved)
        session = commit(base, side(base_ids, theirs))
        if clash and base_ids:
            with pytest.raises(Conflict, match=f"acme § {base_ids[0]} was changed on both"):
                land(repo, [session], "target", "test")
            return
        land(repo, [session], "target", "test")
        merged = repo.store.read_blob(f"refs/heads/target:{CARD}")
        assert merged is not None
        text = merged.decode()
        new = [k for k in ours if k not in base_ids] + [k for k in theirs if k not in base_ids]
        assert [s.id for s in sections(text)] == base_ids + new
        for k in base_ids + new:
            assert body(text, k) == ours.get(k, theirs.get(k, f"was {k}"))

    check()
