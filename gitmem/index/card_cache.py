"""The rendered index kept card by card, so a new process after a few commits renders
only the cards those commits touched, without loading the replay state of all history.

``.git/gitmem/index-<branch>.cards.marshal`` holds, at one commit, each card's blob,
headings, resolved sections and rendered lines (with a digest, like the other caches:
a damaged file is ignored and rebuilt). ``advance`` brings it to the tip when history
only grew linearly by commits without reverts, and when every section of a touched card
has its current entry either in the new commits or in the cached card; anything else
(a revert, a merge, a section that reappeared) returns None and the caller refreshes in
full, which gives the same text by design (tests/test_scale.py checks both ways agree).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from gitmem.errors import GitmemError
from gitmem.index import digest_file, freshness
from gitmem.index import state_cache as index_cache
from gitmem.index.build import (
    CardEntry,
    Index,
    Layout,
    SectionEntry,
    layout,
    render_block,
    render_card,
)
from gitmem.index.replay import _Fold, fold, log
from gitmem.memory import branch_files
from gitmem.memory import trailers as T
from gitmem.memory.repo import MAIN, MemoryRepo

_REWRITE = 64  # cards filled again since the file was written: then it is written anew


_FAST_MAX = 128  # more new commits than this: one git log reads them


def _read_new(repo: MemoryRepo, base: str, tip: str) -> _Fold | None:
    """What ``fold(log(repo, f"{base}..{tip}"))`` gives, read through the object store's
    running ``git cat-file`` (no git process) when ``tip`` is a few commits above ``base``,
    each with one parent and a message whose trailers git reads the one obvious way
    (``trailers.plain_block``); None otherwise: then git reads them."""
    got = _Fold(tip=tip, oldest_parent=base)
    sha = tip
    for _ in range(_FAST_MAX):
        if sha == base:
            return got
        obj = repo.store.read(sha)
        if obj is None or obj.kind != "commit":
            return None
        head, _, message = obj.data.decode("utf-8", "replace").partition("\n\n")
        parents = []
        for line in head.split("\n"):
            key, _, value = line.partition(" ")
            if key == "parent":
                parents.append(value)
            elif key == "encoding":
                return None
        block = T.plain_block(message)
        if len(parents) != 1 or block is None:
            return None
        if block:
            got.add(sha, *T.gitmem_trailers(block))
        sha = parents[0]
    return None


def _path(repo: MemoryRepo, branch: str) -> str:
    return branch_files.path(repo, branch, "cards.marshal")


def drop(repo: MemoryRepo, branch: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(_path(repo, branch))


def save(repo: MemoryRepo, branch: str, commit: str, index: Index, cards: Layout,
         headings: index_cache.Headings, merges: list[str]) -> None:
    """Keep ``index`` (filled from ``cards``, whose headings lists are ``headings``'s) with
    the merges of the history behind it (newest first), which staleness depends on."""
    blob_of = {id(info): blob for blob, info in headings.items()}
    rows: list[list[Any]] = []
    for (project, info), card, part in zip(cards, index.cards, index.parts(), strict=True):
        blob = blob_of.get(id(info))
        if blob is None or project != card.project:
            return  # not the layout this index was filled from: keep nothing
        secs = [[s.id, s.heading, list(s.keywords), s.summary, s.commit, s.stale]
                for s in card.sections]
        rows.append([project, blob, info, card.title, secs, part])
    _write(repo, branch, commit, rows, merges)


def _write(repo: MemoryRepo, branch: str, commit: str, rows: list[list[Any]],
           merges: list[str]) -> None:
    digest_file.write(_path(repo, branch), {"version": index_cache.CACHE_VERSION,
                                            "commit": commit, "cards": rows, "merges": merges})


def _load(repo: MemoryRepo, branch: str) -> dict[str, Any] | None:
    data = digest_file.read(_path(repo, branch))
    if not isinstance(data, dict) or data.get("version") != index_cache.CACHE_VERSION:
        return None
    return data


def advance(repo: MemoryRepo, branch: str, tip: str) -> str | None:
    """The I block at ``tip`` from the kept cards and the commits since (which are kept in
    turn, under ``branch``), or None. A branch with no cards of its own (a session's: it
    starts at main's tip) starts from main's. Untouched cards are reused as stored."""
    own = _load(repo, branch)
    data = own if own is not None or branch == MAIN else _load(repo, MAIN)
    if data is None:
        return None
    base = data["commit"]
    try:
        rows = {row[0]: row for row in data["cards"]}
        headings: index_cache.Headings = {row[1]: row[2] for row in data["cards"]}
        slow = False  # the new commits were read by a git log: then the file is written
        if base == tip:
            new = None
        else:
            new = _read_new(repo, base, tip)
            if new is None:
                new = fold(log(repo, f"{base}..{tip}"))
                slow = True
            if new.tip != tip or not new.linear or new.oldest_parent != base or new.reverts:
                return None
        used: index_cache.Headings = {}
        cards = layout(repo, tip, headings, used)
        blob_of = {id(info): blob for blob, info in used.items()}
        entries = new.entries if new else {}  # newest first: not folded onto any state
        touched = {key.partition("/")[0] for key in entries}
        out: list[list[Any]] = []
        redo: list[tuple[int, CardEntry]] = []  # cards filled again: (row, card unmarked)
        for project, info in cards:
            row = rows.get(project)
            if row is not None and row[2] is info and project not in touched:
                out.append(row)
                continue
            old = {s[0]: s for s in row[4]} if row is not None else {}
            secs = []
            for sid, heading in info[1:]:
                got = entries.get(f"{project}/{sid}")
                if got:
                    sha, kws, summary = got[0]
                    keywords = tuple(filter(None, [k.strip() for k in kws.split(",")]))
                    secs.append(SectionEntry(sid, heading, keywords, summary or None, sha))
                elif sid in old:
                    s = old[sid]
                    secs.append(SectionEntry(sid, heading, tuple(s[2]), s[3], s[4]))
                else:
                    return None  # its entry, if any, is in older history: a full refresh
            redo.append((len(out), CardEntry(project, info[0][0] or project, tuple(secs))))
            out.append([project, blob_of[id(info)], info])
        # Stale marks of the cards filled again, as ``index.mark_stale`` gives them: the
        # history grew linearly, so the merges behind it are the kept ones.
        merges: list[str] = data["merges"]
        todo = [(card.project, s.id, s.commit) for _, card in redo for s in card.sections
                if s.indexed and s.commit]
        stale = freshness.stale_keys(repo, branch, tip, todo, merges, some=True) if todo else set()
        for at, card in redo:
            marked = tuple(s._replace(stale=f"{card.project}/{s.id}" in stale) if s.indexed
                           else s for s in card.sections)
            card = card._replace(sections=marked)
            rows_secs = [[x.id, x.heading, list(x.keywords), x.summary, x.commit, x.stale]
                         for x in marked]
            out[at] += [card.title, rows_secs, render_card(card)]
    except (GitmemError, KeyError, IndexError, TypeError, ValueError):
        return None
    # (a session branch still at main's commit reads main's: kept as is.) The branch's own
    # file is rewritten once the cards filled again since it was written are many, or the
    # commits since were too many to read without a git log: until then the next run
    # folds the same commits again (a few, cheaper than the whole file).
    if new is not None and (own is None or len(redo) >= _REWRITE or slow):
        _write(repo, branch, tip, out, merges)
    return render_block([row[5] for row in out])
