"""Costs that must not grow with history: what is reused, and that reusing it changes nothing."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_index_property import PROJECTS, SECTIONS, do_edit, do_hand, do_revert, full_replay

from gitmem.features.edit import write_card
from gitmem.index import build as index
from gitmem.index import records
from gitmem.memory import branch_files
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.review import session_branches as sessions
from gitmem.setup.init import init_repo

from helpers import git, index_summaries, spy_full_replays


def _cards(repo: MemoryRepo, n: int, branch: str = MAIN, start: int = 0) -> None:
    for i in range(start, start + n):
        text = f"# Card {i}\n\n## Notes\nline {i}\n"
        entry = IndexEntry.make("notes", ["k"], f"card {i} notes")
        write_card(repo, f"card-{i}", "", text, entry, branch=branch)


def test_a_session_branch_starts_from_mains_index_cache(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemoryRepo(client) as repo:
        _cards(repo, 3)
        want = index.refresh(repo, MAIN).render()  # main's cache, as any use leaves it
    calls = spy_full_replays(monkeypatch)
    with MemoryRepo(client) as repo:  # a new process: nothing in memory
        s = sessions.start_session(repo, "20260101-090000-abcd")
        got = index.refresh(repo, s.branch).render()
        assert got == want
        _cards(repo, 1, branch=s.branch, start=3)  # the session's own edit is folded in
        after = index_summaries_at(repo, s.branch)
    assert calls == []
    assert after["card-3/notes"] == "card 3 notes"
    with MemoryRepo(client) as repo:  # the seeded result is the full replay's
        assert index.rebuild(repo, s.branch)[0].render() == index.refresh(repo, s.branch).render()


def index_summaries_at(repo: MemoryRepo, branch: str) -> dict[str, str | None]:
    return {
        f"{c.project}/{s.id}": s.summary
        for c in index.refresh(repo, branch).cards
        for s in c.sections
    }


def test_a_session_resumed_after_main_moved_is_replayed_not_seeded_wrong(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """main's cache at a commit the branch does not grow from cannot seed it."""
    with MemoryRepo(client) as repo:
        _cards(repo, 2)
        s = sessions.start_session(repo, "20260101-090000-abce")
        entry = IndexEntry.make("notes", ["k"], "session's view")
        write_card(repo, "card-0", "line 0", "session line", entry, branch=s.branch)
        entry = IndexEntry.make("notes", ["k"], "main's newer view")
        write_card(repo, "card-1", "line 1", "main line", entry)
        index.refresh(repo, MAIN)  # main's cache is past the session's base
    with MemoryRepo(client) as repo:
        got = index_summaries_at(repo, s.branch)
        assert got == {"card-0/notes": "session's view", "card-1/notes": "card 1 notes"}
        rebuilt = index.rebuild(repo, s.branch)[0]
        assert rebuilt.render() == index.refresh(repo, s.branch).render()
        assert index_summaries(repo)["card-1/notes"] == "main's newer view"


def test_a_landed_session_leaves_no_index_cache(client: Path) -> None:
    with MemoryRepo(client) as repo:
        _cards(repo, 1)
        s = sessions.start_session(repo, "20260101-090000-abcf")
        _cards(repo, 2, branch=s.branch, start=1)
        index.refresh(repo, s.branch)  # the session's own commits: a cache of its own
        index.rendered(repo, s.branch)
        cache = Path(branch_files.path(repo, s.branch, "marshal"))
        assert cache.exists()
        done = sessions.finish_session(repo, s, "auto")
        assert done.landed
        assert not cache.exists()
        assert Path(branch_files.path(repo, MAIN, "marshal")).exists()  # main's is kept


def test_refresh_after_new_commits_in_an_open_repo_is_the_full_replays(
    client: Path,
) -> None:
    with MemoryRepo(client) as repo:
        _cards(repo, 4)
        before = index.refresh(repo, MAIN)
        entry = IndexEntry.make("notes", ["k2"], "card 2 changed")
        write_card(repo, "card-2", "line 2", "line two", entry)
        after = index.refresh(repo, MAIN)
        assert [a == b for a, b in zip(before.cards, after.cards, strict=True)] == [
            True,
            True,
            False,
            True,
        ]
        assert after == index.rebuild(repo, MAIN)[0]
    with MemoryRepo(client) as repo:  # the same as a new process's full fill
        assert index.refresh(repo, MAIN).render() == after.render()
        assert "card 2 changed" in after.render()


# -- the commit-msg hook's shell pre-check ---------------------------------------------------
HOOK = Path(__file__).resolve().parent.parent / "hooks" / "commit-msg"


def _hint_ere() -> str:
    line = next(ln for ln in HOOK.read_text().splitlines() if ln.startswith("hint='"))
    return line[len("hint='") : -1]


def _sh_matches(lines: list[str], tmp: Path) -> set[int]:
    """Which lines (0-based) the hook's grep would start the scanner for."""
    import subprocess

    f = tmp / "lines.txt"
    f.write_bytes("".join(f"+{ln}\n" for ln in lines).encode("utf-8"))
    proc = subprocess.run(
        ["grep", "-naEi", "-e", _hint_ere(), "-e", "[^ -~\t]", str(f)],
        capture_output=True,
        env={"LC_ALL": "C", "PATH": os.environ["PATH"]},
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return {int(ln.split(b":", 1)[0]) - 1 for ln in proc.stdout.splitlines()}


FRAGMENTS = [
    "AKIA",
    "sk-",
    "ghp_",
    "xoxb-",
    "eyJ",
    "://u:p@",
    "Pass",
    "TOKEN",
    "key",
    "auth",
    "SG.",
    "npm_",
    "1234567890:",
    "glpat-",
    "PRIVATE KEY",
    "é",
    "\u212a",
    "\u017f",
]
line_st = st.lists(
    st.one_of(
        st.sampled_from(FRAGMENTS),
        st.text(st.characters(codec="utf-8", exclude_characters="\n\r"), max_size=12),
    ),
    max_size=8,
).map("".join)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(line_st, min_size=1, max_size=30))
def test_the_hook_pre_check_never_skips_a_line_the_scanner_would_look_at(
    tmp_path: Path, lines: list[str]
) -> None:
    from gitmem.memory.secrets import _HINT

    starts = _sh_matches(lines, tmp_path)
    assert {i for i, ln in enumerate(lines) if _HINT.search(ln)} <= starts


def test_the_hook_pre_check_passes_every_corpus_secret(tmp_path: Path) -> None:
    sys.path.insert(0, str(HOOK.parent.parent / "benchmarks"))
    import secrets_corpus as corpus

    from gitmem.memory.secrets import _HINT

    items = [text.split("\n") for _, text in corpus.positives(n_per_form=3, seed=5)]
    lines = [ln for item in items for ln in item]
    starts = _sh_matches(lines, tmp_path)
    assert {i for i, ln in enumerate(lines) if _HINT.search(ln)} <= starts
    first = 0
    for item in items:  # each secret has a line the scanner is started for
        assert starts & set(range(first, first + len(item))), item
        first += len(item)


def test_a_plain_commit_of_a_card_starts_no_python_in_the_hook(
    client: Path, tmp_path: Path
) -> None:
    """Python is observed starting through a sitecustomize on PYTHONPATH."""
    import subprocess

    from gitmem.hooks import hooks_dir

    site = tmp_path / "site"
    site.mkdir()
    marker = tmp_path / "started"
    (site / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'a').write('x')\n")
    with MemoryRepo(client) as repo:
        _cards(repo, 1)
    card = client / "cards" / "card-0.md"
    env = {**os.environ, "PYTHONPATH": str(site)}
    msg = tmp_path / "msg"
    msg.write_text("meeting notes\n")
    hook = [str(hooks_dir(client) / "commit-msg"), str(msg)]
    card.write_text(card.read_text() + "- met the team on Tuesday\n")
    git(client, "add", "cards")
    subprocess.run(hook, cwd=client, env=env, check=True)
    assert not marker.exists()
    card.write_text(card.read_text() + "- the api token is in the vault\n")
    git(client, "add", "cards")
    subprocess.run(hook, cwd=client, env=env, check=True)  # scanned: nothing found
    assert marker.exists()


# -- a chat turn's own costs ------------------------------------------------------------------
def _chat(repo: MemoryRepo, lines: list[str], monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Run a chat against the fake API; the fsyncs made during each turn."""
    from collections.abc import Iterator

    import anthropic

    from gitmem.agent.chat import run_chat
    from gitmem.fakeapi import FakeAnthropicServer, ManualClock, RuleModel

    clock = ManualClock(1_000_000.0)
    fsyncs: list[int] = [0]
    real = os.fsync

    def counting(fd: int) -> None:
        fsyncs[-1] += 1
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    per_turn: list[int] = []

    def turns() -> Iterator[str]:
        for line in lines:
            clock.advance(10)
            fsyncs[-1] = 0
            yield line
            per_turn.append(fsyncs[-1])

    with FakeAnthropicServer(RuleModel(), clock=clock) as api:
        sdk = anthropic.Anthropic(api_key="test", base_url=api.base_url, max_retries=0)
        try:
            run_chat(
                repo, turns(), client=sdk, write=lambda _t: None, warn=lambda _m: None, clock=clock
            )
        finally:
            sdk.close()
    return per_turn


def test_a_chat_turn_syncs_its_transcript_and_usage_once_each(
    repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "recall" makes two requests (a tool call, then the answer): four records and two
    # usage lines, each once fsynced before; now one durable point for the whole turn.
    per_turn = _chat(repo, ["hello", "remember acme Budget: 40k", "recall acme"], monkeypatch)
    assert per_turn[0] <= 2 and per_turn[2] <= 2, per_turn


def test_each_layer_is_hashed_once_while_it_is_unchanged(
    repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hashlib

    _cards(repo, 3)
    index_text = index.refresh(repo, MAIN).render().encode()
    hashed: list[int] = []
    real = hashlib.sha256

    def spy(data: bytes = b"") -> object:
        hashed.append(data.count(b"card 1 notes"))
        return real(data)

    monkeypatch.setattr(hashlib, "sha256", spy)  # what gitmem.agent.prompt and .tokencount use
    _chat(repo, ["one", "two", "three", "four"], monkeypatch)
    assert index_text.count(b"card 1 notes") == 1
    # the index, once per change and never per turn: once for its id and once for its
    # count's memo (the layer), and twice by its budget check at the session's start (its
    # key in index-tokens.json and its count)
    assert sum(hashed) == 4


# -- the cache file is checked, never trusted ----------------------------------------------
def test_a_torn_or_damaged_cache_is_rebuilt(client: Path) -> None:
    with MemoryRepo(client) as repo:
        _cards(repo, 3)
        index.rendered(repo, MAIN)
        path = Path(branch_files.path(repo, MAIN, "marshal"))
    whole = path.read_bytes()
    for n, bad in enumerate((whole[:-3], whole[:-5] + bytes([whole[-5] ^ 0xFF]) + whole[-4:])):
        path.write_bytes(bad)  # a crash mid-write (of another tool), a damaged byte
        with MemoryRepo(client) as repo:
            assert records.load(repo, MAIN) is None
            # the index's own record holds at this tip; the damaged replay is not read
            assert index_summaries(repo)["card-2/notes"] == "card 2 notes"
            _cards(repo, 1, start=3 + n)  # a new commit: folding it in needs the replay
            assert index_summaries(repo)["card-2/notes"] == "card 2 notes"
            assert records.load(repo, MAIN) is not None  # written whole again


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["edit", "edit", "hand", "revert"]),
            st.integers(0, 2),
            st.integers(0, 3),
            st.integers(0, 60),
        ),
        min_size=1,
        max_size=10,
    )
)
def test_the_cache_a_new_process_reads_refreshes_to_the_full_replay(
    plan: list[tuple[str, int, int, int]],
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "c"
        init_repo(root)
        with MemoryRepo(root) as repo:
            for kind, p, sec, n in plan:
                if kind == "edit":
                    do_edit(repo, PROJECTS[p], SECTIONS[sec], ["q3", f"w{n % 3}"], n)
                elif kind == "hand":
                    do_hand(repo, PROJECTS[p], SECTIONS[sec], n % 4)
                else:
                    do_revert(repo, n)
                index.refresh(repo)
                with MemoryRepo(root) as fresh:  # another process: the cache from disk
                    loaded = records.load(fresh, MAIN)
                    assert loaded is not None
                    assert index.refresh(fresh) == full_replay(fresh)


# -- a new process renders only the cards new commits touched -----------------------------------
@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["edit", "edit", "edit", "hand", "revert"]),
            st.integers(0, 2),
            st.integers(0, 3),
            st.integers(0, 60),
        ),
        min_size=1,
        max_size=10,
    )
)
def test_gitmem_index_after_new_commits_is_the_full_replays(
    plan: list[tuple[str, int, int, int]],
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "c"
        init_repo(root)
        for kind, p, sec, n in plan:
            with MemoryRepo(root) as repo:  # each step: a new process, as `gitmem index` is
                index.rendered(repo)  # the text and the cards kept at this commit
                if kind == "edit":
                    do_edit(repo, PROJECTS[p], SECTIONS[sec], ["q3", f"w{n % 3}"], n)
                elif kind == "hand":
                    do_hand(repo, PROJECTS[p], SECTIONS[sec], n % 4)
                else:
                    do_revert(repo, n)
            with MemoryRepo(root) as repo:
                assert index.rendered(repo) == full_replay(repo).render()


def test_a_session_at_mains_tip_renders_mains_index_without_a_replay(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemoryRepo(client) as repo:
        _cards(repo, 3)
        want = index.rendered(repo, MAIN)  # what any `gitmem index` leaves
    calls = spy_full_replays(monkeypatch)
    with MemoryRepo(client) as repo:
        s = sessions.start_session(repo, "20260101-090000-abd0")
        assert index.rendered(repo, s.branch) == want
        assert index.refresh(repo, s.branch).render() == want
    assert calls == []


def test_a_plain_commit_message_starts_no_python_in_commit_msg(
    client: Path, tmp_path: Path
) -> None:
    import subprocess

    from gitmem.hooks import hooks_dir

    site = tmp_path / "site"
    site.mkdir()
    marker = tmp_path / "started"
    (site / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'a').write('x')\n")
    env = {**os.environ, "PYTHONPATH": str(site)}
    msg = tmp_path / "msg"
    msg.write_text("meeting notes\n\nNothing for gitmem here.\n")
    hook = [str(hooks_dir(client) / "commit-msg"), str(msg)]
    subprocess.run(hook, cwd=client, env=env, check=True)
    assert not marker.exists()
    msg.write_text("acme: budget\n\nGitmem-Card: acme\nGitmem-Section: budget\n")
    proc = subprocess.run(hook, cwd=client, env=env, capture_output=True, check=False)
    assert marker.exists()  # checked by gitmem (and refused: no such card here)
    assert proc.returncode != 0


# -- stale marks on the fast paths ------------------------------------------------------------
def test_a_hand_edit_marks_its_entry_stale_in_an_open_repo_and_a_new_process(
    repo: MemoryRepo, client: Path
) -> None:
    from test_index_property import check_stale_marks

    _cards(repo, 3)
    index.refresh(repo)
    index.rendered(repo)
    card = client / "cards" / "card-1.md"
    card.write_text(card.read_text() + "more by hand\n")
    git(client, "commit", "-qam", "a hand edit")
    opened = index.refresh(repo)  # an open repo: the commit folded in
    check_stale_marks(repo, opened)
    assert opened == full_replay(repo)
    want = full_replay(repo).render()
    assert "- notes: (stale) card 1 notes [k]" in want and want.count("(stale)") == 1
    assert opened.render() == want
    with MemoryRepo(client) as fresh:  # a new process: the cache and the commit since
        assert index.rendered(fresh, MAIN) == want
