"""What `gitmem sync` costs when it receives commits and merges them with local ones: the
received commits' trailers are read once for the index (the merge's contested sections
are known from the fold), the index is refreshed while git pushes, and the check for
symlinks and submodules reads git's output in full only when an unsafe mode shows up."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_sync import diverged, make_pair, sync, write
from test_sync_cost import _commit_on, _merge, step

from gitmem.errors import EXIT_CONFLICT
from gitmem.git.runner import Git, Sha
from gitmem.index import build as index
from gitmem.index import replay
from gitmem.memory.repo import MAIN, MEMORY_PATHS, MemoryRepo
from gitmem.setup.init import init_repo
from gitmem.sync import exchange

from helpers import git, gm, spy_full_replays


def _received_and_own(tmp_path: Path) -> Path:
    """A desktop whose next sync receives three commits and merges them with its own."""
    _bare, laptop, desktop = make_pair(tmp_path)
    for i in range(3):
        write(laptop, f"card-{i}", "", f"# Card {i}\n\n## Notes\nvalue {i}\n", "notes", f"card {i}")
    assert sync(laptop)[0] == 0
    write(desktop, "beta", "Ship v2", "Ship v2 in March", "goals", "Ship v2 in March")
    return desktop


def test_a_sync_merge_folds_in_the_received_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    desktop = _received_and_own(tmp_path)
    with MemoryRepo(desktop) as repo:
        index.refresh(repo)  # the cache at the desktop's own commit
        calls = spy_full_replays(monkeypatch)
        result = exchange.sync(repo)
        assert result.merged
        index.refresh(repo)
        assert calls == []
    monkeypatch.undo()
    with MemoryRepo(desktop) as repo:  # and a new process agrees with a full replay
        got = index.refresh(repo)
        assert got == index.resolve(repo, replay.replay_all(repo))
        assert "card 2" in got.render() and "Ship v2 in March" in got.render()


def _drop_caches(root: Path) -> None:
    for f in (root / ".git" / "gitmem").glob("index*"):
        f.unlink()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plan=st.lists(step, min_size=1, max_size=12))
def test_a_merge_folded_in_gives_the_index_a_full_rebuild_gives(
    plan: list[tuple[str, str, str]],
) -> None:
    """The merge's contested sections taken from the fold (fast) or read from both sides
    in a fresh repo with no cache (full): the same index, stale marks included."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "c"
        init_repo(root)
        with MemoryRepo(root) as repo:
            n = 10  # values of two digits: "value 1" would also be found in "value 12"
            for _kind, project, section in [s for s in plan if s[0] in ("base", "base-merge")]:
                n += 1
                _commit_on(repo, "main", project, section, n)
            if repo.tip(MAIN) is None:
                _commit_on(repo, "main", "alpha", "budget", 0)
            git(root, "branch", "-f", "theirs", "main")
            for _kind, project, section in [s for s in plan if s[0] == "ours"]:
                n += 1
                _commit_on(repo, "main", project, section, n)
            for _kind, project, section in [s for s in plan if s[0] == "theirs"]:
                n += 1
                _commit_on(repo, "theirs", project, section, n)
            for _kind, project, section in [s for s in plan if s[0] == "revert-ours"]:
                n += 1  # a later edit on their side of a section ours may hold too
                _commit_on(repo, "theirs", project, section, n)
            index.refresh(repo)
            _merge(root, "main", "theirs")
            fast = index.refresh(repo)
        _drop_caches(root)
        with MemoryRepo(root) as repo:
            full = index.resolve(repo, replay.replay_all(repo))
            assert fast == full
            assert fast.render() == full.render()


def test_the_index_is_refreshed_while_git_pushes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The remote holds the push until the index at the merge exists: a sync that refreshed
    the index only after its push would wait out the hook and be refused."""
    desktop = _received_and_own(tmp_path)
    bare = tmp_path / "remote.git"
    marker = tmp_path / "refreshed"
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\ncat >/dev/null\n"
        f"i=0; while [ ! -e '{marker}' ]; do i=$((i+1)); [ $i -gt 200 ] && exit 1; sleep 0.05; done\n"
    )
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    real = index.refresh

    def refresh(repo: MemoryRepo, branch: str = MAIN) -> index.Index:
        got = real(repo, branch)
        if repo.tip(MAIN) != git(bare, "rev-parse", "main").strip():
            marker.touch()  # main is ahead of the remote: refreshed before the push landed
        return got

    monkeypatch.setattr(index, "refresh", refresh)  # the module exchange refreshes through
    with MemoryRepo(desktop) as repo:
        result = exchange.sync(repo)
        assert result.merged and result.status == "synced"
        assert git(bare, "rev-parse", "main").strip() == repo.tip(MAIN)
        memo = repo.memo[("index", MAIN)]
        assert memo.state.commit == repo.tip(MAIN)  # type: ignore[attr-defined]
    assert marker.exists()


# -- the check for symlinks and submodules: the fast look equals the full reading ----------

modes = st.sampled_from(["000000", "100644", "100755", "120000", "160000", "040000"])
names = st.builds(
    lambda top, rest: top + rest,
    st.sampled_from(
        [
            "",
            "cards",
            "cards/",
            "cardsx/",
            "logs/",
            "sessions/",
            "persona.md",
            "persona.md/",
            "gitmem.toml",
            "README",
            "x/cards/",
        ]
    ),
    st.text(alphabet="ab 12060.md/", max_size=10),
).filter(bool)
commit_ids = st.sampled_from(["a" * 40, "b" * 40, "c" * 64])
entry = st.tuples(modes, modes, names)


def _raw(commits: list[tuple[str, list[tuple[str, str, str]]]]) -> str:
    """What `git log -m --raw -z --format=%x00%H` writes for ``commits``."""
    out = ""
    for sha, entries in commits:
        out += f"\0{sha}\n\0" if entries else f"\0{sha}\n"
        for old, new, path in entries:
            out += f":{old} {new} {'1' * 40} {'2' * 40} M\0{path}\0"
    return out


@settings(max_examples=300, deadline=None)
@given(commits=st.lists(st.tuples(commit_ids, st.lists(entry, max_size=4)), max_size=5))
def test_the_unsafe_mode_look_finds_what_the_full_reading_finds(
    commits: list[tuple[str, list[tuple[str, str, str]]]],
) -> None:
    out = _raw(commits)
    expected = exchange._read_unsafe(out)
    assert exchange._unsafe(out) == expected
    wanted = [
        (p, n)
        for _sha, entries in commits
        for _o, n, p in entries
        if n in ("120000", "160000") and p.split("/")[0] in MEMORY_PATHS
    ]
    assert (expected is None) == (not wanted)
    if expected is not None:
        assert (expected[0], expected[1]) == (
            wanted[0][0],
            {"120000": "a symlink", "160000": "a submodule"}[wanted[0][1]],
        )


def test_a_card_named_like_a_mode_is_received_and_a_symlink_is_refused(tmp_path: Path) -> None:
    _bare, laptop, desktop = make_pair(tmp_path)
    odd = "cards/x 120000 y.md"  # a plain file whose name holds an unsafe mode
    (laptop / odd).write_text("# X\n\n## Notes\nplain\n")
    git(laptop, "add", odd)
    git(laptop, "commit", "-qm", "a card with an odd name", "--no-verify")
    git(laptop, "push", "-q", "origin", "main")
    code, _out, err = sync(desktop)
    assert code == 0, err
    assert (desktop / odd).read_text() == "# X\n\n## Notes\nplain\n"
    os.symlink("/etc/passwd", laptop / "cards" / "link.md")
    git(laptop, "add", "cards/link.md")
    git(laptop, "commit", "-qm", "a link", "--no-verify")
    git(laptop, "push", "-q", "origin", "main")
    before = git(desktop, "rev-parse", "main")
    code, _out, err = sync(desktop)
    assert code == 4 and "cards/link.md as a symlink" in err, err
    assert git(desktop, "rev-parse", "main") == before


def test_a_symlink_outside_memory_is_received(tmp_path: Path) -> None:
    """git lists every path of the received commits; only those where memory lives count:
    a symlink in docs/, or beside cards/ under another name, is the remote's business, and
    git, not gitmem, brings it into the working tree (merged, changed, deleted), so the
    index never shows it deleted."""
    _bare, laptop, desktop = make_pair(tmp_path)
    (laptop / "docs").mkdir()
    os.symlink("/etc", laptop / "docs" / "etc")
    os.symlink("/etc", laptop / "cards-and-more")
    git(laptop, "add", "docs/etc", "cards-and-more")
    git(laptop, "commit", "-qm", "links outside memory", "--no-verify")
    git(laptop, "push", "-q", "origin", "main")
    write(desktop, "beta", "Ship v2", "Ship v2 in May", "goals", "Ship v2 in May")  # a merge
    code, _out, err = sync(desktop)
    assert code == 0, err
    assert os.readlink(desktop / "docs" / "etc") == "/etc"
    assert os.readlink(desktop / "cards-and-more") == "/etc"
    assert git(desktop, "status", "--porcelain") == ""  # the index holds them too
    assert git(desktop, "ls-tree", "main", "docs/etc").split()[0] == "120000"  # merged as a link
    assert sync(laptop)[0] == 0
    os.remove(laptop / "docs" / "etc")
    os.symlink("/usr", laptop / "docs" / "etc")
    git(laptop, "rm", "-q", "cards-and-more")
    git(laptop, "add", "docs/etc")
    git(laptop, "commit", "-qm", "one link changed, one gone", "--no-verify")
    git(laptop, "push", "-q", "origin", "main")
    code, _out, err = sync(desktop)  # a fast-forward
    assert code == 0, err
    assert os.readlink(desktop / "docs" / "etc") == "/usr"
    assert not os.path.lexists(desktop / "cards-and-more")
    assert git(desktop, "status", "--porcelain") == ""
    assert git(desktop, "rev-parse", "main") == git(laptop, "rev-parse", "main")
    git(laptop, "rm", "-q", "docs/etc")
    git(laptop, "commit", "-qm", "the other link gone", "--no-verify")
    git(laptop, "push", "-q", "origin", "main")
    write(desktop, "beta", "Ship v2 in May", "Ship v2 in June", "goals", "Ship v2 in June")
    code, _out, err = sync(desktop)  # a merge that removes a link
    assert code == 0, err
    assert not os.path.lexists(desktop / "docs" / "etc")
    assert git(desktop, "ls-tree", "main", "docs/etc") == ""
    assert git(desktop, "status", "--porcelain") == ""


def test_a_symlink_changed_on_both_sides_stops_the_sync_and_changes_nothing(
    tmp_path: Path,
) -> None:
    _bare, laptop, desktop = make_pair(tmp_path)
    os.symlink("/etc", laptop / "link")
    git(laptop, "add", "link")
    git(laptop, "commit", "-qm", "a link", "--no-verify")
    assert sync(laptop)[0] == 0
    assert sync(desktop)[0] == 0
    for side, target in ((laptop, "/usr"), (desktop, "/var")):
        os.remove(side / "link")
        os.symlink(target, side / "link")
        git(side, "add", "link")
        git(side, "commit", "-qm", f"link to {target}", "--no-verify")
    assert sync(laptop)[0] == 0
    before = git(desktop, "rev-parse", "main")
    code, _out, err = sync(desktop)
    assert code == 4 and "link was changed here and on the other side" in err, err
    assert git(desktop, "rev-parse", "main") == before
    assert os.readlink(desktop / "link") == "/var"
    assert git(desktop, "status", "--porcelain") == ""


def test_a_symlink_inside_a_memory_folder_on_the_way_is_refused(tmp_path: Path) -> None:
    _bare, laptop, desktop = make_pair(tmp_path)
    (laptop / "sessions" / "x").mkdir(parents=True)
    os.symlink("/etc", laptop / "sessions" / "x" / "y")
    git(laptop, "add", "sessions/x/y")
    git(laptop, "commit", "-qm", "a link in memory", "--no-verify")
    git(laptop, "rm", "-q", "sessions/x/y")
    git(laptop, "commit", "-qm", "and gone again", "--no-verify")
    git(laptop, "push", "-q", "origin", "main")
    before = git(desktop, "rev-parse", "main")
    code, _out, err = sync(desktop)
    assert code == 4 and "sessions/x/y as a symlink" in err, err  # in a commit on the way
    assert git(desktop, "rev-parse", "main") == before


# -- the first fetch starts before the sync's code is loaded ------------------------------

_WATCH_FETCH = """
import json, subprocess, sys
loaded = []
real = subprocess.Popen.__init__
def init(self, args, *a, **kw):
    if list(args[:2]) == ["git", "fetch"]:
        loaded.append(sorted(m for m in ("gitmem.sync.exchange", "gitmem.index.build",
                                         "gitmem.index.replay") if m in sys.modules))
    real(self, args, *a, **kw)
subprocess.Popen.__init__ = init
from gitmem.cli import main
sys.argv = ["gitmem", "-C", sys.argv[1], "sync"]
try:
    main()
    rc = 0
except SystemExit as exc:
    rc = exc.code or 0
print(json.dumps({"rc": rc, "loaded": loaded}))
"""


def test_the_first_fetch_starts_before_the_merge_and_the_index_are_loaded(
    tmp_path: Path,
) -> None:
    desktop = _received_and_own(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", _WATCH_FETCH, str(desktop)],
        capture_output=True,
        check=True,
        text=True,
    )
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert data["rc"] == 0, proc.stderr
    assert data["loaded"][0] == []  # the first round's fetch: nothing of the sync loaded yet
    assert "merge origin/main" in git(desktop, "log", "-1", "--format=%s", "main")
    assert git(tmp_path / "remote.git", "rev-parse", "main") == git(desktop, "rev-parse", "main")


def test_a_sync_refused_before_fetching_starts_no_fetch(tmp_path: Path) -> None:
    """A stopped sync (a conflict waits) is refused as before: nothing fetched, no ref."""
    from gitmem.sync import first_fetch

    _bare, laptop, desktop = make_pair(tmp_path)
    write(laptop, "beta", "Ship v2", "Ship v3", "goals", "Ship v3")
    assert sync(laptop)[0] == 0
    write(desktop, "beta", "Ship v2", "Ship v4", "goals", "Ship v4")
    code, _out, _err = sync(desktop)
    assert code == EXIT_CONFLICT  # the same section on both sides: stopped
    refs = git(desktop, "for-each-ref")
    write(laptop, "beta", "Ship v3", "Ship v5", "goals", "Ship v5")
    assert sync(laptop)[0] == 0
    with MemoryRepo(desktop) as repo:
        assert first_fetch.start(repo, "origin") is None
        assert first_fetch.start(repo, "nowhere") is None
    code, _out, err = sync(desktop)
    assert code == EXIT_CONFLICT and "stopped at a conflict" in err, err
    assert git(desktop, "for-each-ref") == refs


def test_the_secret_scan_runs_while_git_lists_what_comes_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gitmem.memory import scan

    desktop = _received_and_own(tmp_path)
    listing: list[subprocess.Popen[bytes]] = []
    seen: list[bool] = []
    real_popen, real_outgoing = Git.popen, scan.outgoing

    def popen(self: Git, *args: str) -> subprocess.Popen[bytes]:
        proc = real_popen(self, *args)
        if "--raw" in args:
            listing.append(proc)
        return proc

    def outgoing(*args: Any, **kw: Any) -> Any:
        seen.append(bool(listing) and listing[0].returncode is None)  # not yet waited for
        return real_outgoing(*args, **kw)

    monkeypatch.setattr(Git, "popen", popen)
    monkeypatch.setattr(scan, "outgoing", outgoing)
    with MemoryRepo(desktop) as repo:
        assert exchange.sync(repo).merged
    assert seen == [True]
    assert listing[0].returncode == 0


# -- the merge base from the walk that counts: what `git merge-base` says -------------------

dag = st.lists(
    st.lists(st.integers(min_value=0, max_value=40), max_size=3), min_size=2, max_size=14
)


@settings(max_examples=60, deadline=None)
@given(
    parents=dag,
    pick=st.tuples(st.integers(min_value=0), st.integers(min_value=0)),
    begun=st.tuples(st.integers(min_value=0), st.integers(min_value=0)),
)
def test_the_merge_base_from_the_counting_walk_is_git_merge_bases(
    parents: list[list[int]], pick: tuple[int, int], begun: tuple[int, int]
) -> None:
    """Any history (each commit's parents among the commits before it, roots anywhere): the
    counts are `rev-list --count`'s, and a base, given when both sides have commits and one
    commit bounds them, is the only one `git merge-base --all` names. The same with the
    walk begun earlier, on these tips or on others (main moved meanwhile: walked again)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "c"
        init_repo(root)
        tree = git(root, "rev-parse", "main^{tree}").strip()
        shas: list[str] = []
        for i, ps in enumerate(parents):
            mine = sorted({shas[p % i] for p in ps}) if i else []
            args = [a for p in mine for a in ("-p", p)]
            shas.append(git(root, "commit-tree", tree, *args, "-m", f"c{i}").strip())
        ours, theirs = shas[pick[0] % len(shas)], shas[pick[1] % len(shas)]
        with MemoryRepo(root) as repo:
            ahead, behind, base = exchange._divergence(repo, ours, theirs)
            for tips in ((ours, theirs), (shas[begun[0] % len(shas)], shas[begun[1] % len(shas)])):
                walk = exchange._Walk(repo, Sha(tips[0]), Sha(tips[1]))
                assert exchange._divergence(repo, ours, theirs, walk) == (ahead, behind, base)
                assert walk.running is None  # taken, or stopped when its tips differ
        assert ahead == int(git(root, "rev-list", "--count", f"{theirs}..{ours}"))
        assert behind == int(git(root, "rev-list", "--count", f"{ours}..{theirs}"))
        found = git(root, "merge-base", "--all", ours, theirs, check=False).split()
        walked = git(root, "rev-list", "--boundary", f"{ours}...{theirs}").split()
        bounds = [line[1:] for line in walked if line.startswith("-")]
        if ahead and behind and len(bounds) == 1:
            assert base == bounds[0] and found == [base]
        else:
            assert base is None


def test_a_merging_sync_starts_no_merge_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    desktop = _received_and_own(tmp_path)
    started: list[tuple[str, ...]] = []
    real_run = Git.run

    def run(self: Git, *args: str, **kw: Any) -> Any:
        started.append(args)
        return real_run(self, *args, **kw)

    monkeypatch.setattr(Git, "run", run)
    with MemoryRepo(desktop) as repo:
        assert exchange.sync(repo).merged
    assert [a for a in started if a[:1] == ("merge-base",) and "--is-ancestor" not in a] == []


def test_a_symlink_outside_memory_syncs_into_a_clone_with_gitmems_hooks(tmp_path: Path) -> None:
    """git brings the link in without running hooks: gitmem's own post-checkout hook would
    wait for the working-tree lock the sync holds (it hung for good)."""
    laptop, desktop = diverged(tmp_path)
    assert gm("-C", str(desktop), "install-hooks").code == 0
    (laptop / "docs").mkdir()
    os.symlink("/etc", laptop / "docs" / "link")
    git(laptop, "add", "docs/link")
    git(laptop, "commit", "-qm", "a link outside memory", "--no-verify")
    git(laptop, "push", "-q", "origin", "main")

    def gitmem_sync() -> None:  # a process, with a deadline: a hang fails, never stalls
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                "from gitmem.cli import main; main()",
                "-C",
                str(desktop),
                "sync",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        assert git(desktop, "status", "--porcelain") == ""

    gitmem_sync()  # a merge: the desktop has an edit of its own
    assert os.readlink(desktop / "docs" / "link") == "/etc"
    assert sync(laptop)[0] == 0
    os.remove(laptop / "docs" / "link")
    os.symlink("/usr", laptop / "docs" / "link")
    git(laptop, "commit", "-qam", "the link changed", "--no-verify")
    git(laptop, "push", "-q", "origin", "main")
    gitmem_sync()  # a fast-forward
    assert os.readlink(desktop / "docs" / "link") == "/usr"


def test_a_linked_folder_outside_memory_that_becomes_a_real_one_is_received(
    tmp_path: Path,
) -> None:
    _bare, laptop, desktop = make_pair(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, laptop / "docs")
    git(laptop, "add", "docs")
    git(laptop, "commit", "-qm", "docs is a link", "--no-verify")
    git(laptop, "push", "-q", "origin", "main")
    assert sync(desktop)[0] == 0
    assert os.path.islink(desktop / "docs")
    git(laptop, "rm", "-q", "docs")
    (laptop / "docs").mkdir()
    (laptop / "docs" / "f.txt").write_text("a real file\n")
    git(laptop, "add", "docs/f.txt")
    git(laptop, "commit", "-qm", "docs is a folder", "--no-verify")
    git(laptop, "push", "-q", "origin", "main")
    code, _out, err = sync(desktop)
    assert code == 0, err
    assert not os.path.islink(desktop / "docs")
    assert (desktop / "docs" / "f.txt").read_text() == "a real file\n"
    assert list(outside.iterdir()) == []  # nothing written through the old link
    assert git(desktop, "status", "--porcelain") == ""
