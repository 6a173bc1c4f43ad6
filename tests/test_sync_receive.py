"""What `gitmem sync` does when it receives commits: merged with local ones, the index is
the one a full replay gives; a symlink or submodule where memory lives is refused, one
outside it is brought in by git."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_sync import diverged, make_pair, sync
from test_sync_cost import _commit_on, _merge, step

from gitmem.errors import EXIT_CONFLICT
from gitmem.index import build as index
from gitmem.index import replay
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops import incoming
from gitmem.setup.init import init_repo
from gitmem.sync import exchange

from helpers import git, gm, write_sha


def _received_and_own(tmp_path: Path) -> Path:
    """A desktop whose next sync receives three commits and merges them with its own."""
    _bare, laptop, desktop = make_pair(tmp_path)
    for i in range(3):
        write_sha(
            laptop, f"card-{i}", "", f"# Card {i}\n\n## Notes\nvalue {i}\n", "notes", f"card {i}"
        )
    assert sync(laptop)[0] == 0
    write_sha(desktop, "beta", "Ship v2", "Ship v2 in March", "goals", "Ship v2 in March")
    return desktop


def test_a_sync_merge_gives_the_index_a_full_replay_gives(tmp_path: Path) -> None:
    desktop = _received_and_own(tmp_path)
    with MemoryRepo(desktop) as repo:
        index.refresh(repo)  # the cache at the desktop's own commit
        assert exchange.sync_repo(repo).merged
        here = index.refresh(repo)
    with MemoryRepo(desktop) as repo:  # and a new process agrees with a full replay
        got = index.refresh(repo)
        assert got == here == index.resolve(repo, replay.replay_all(repo))
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


# -- the check for symlinks and submodules where memory lives ------------------------------

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
entry = st.tuples(modes, modes, st.sampled_from("AMDT"), names)


def _raw(commits: list[tuple[str, list[tuple[str, str, str, str]]]]) -> str:
    """What `git log -m --raw -z --format=%x00%H` writes for ``commits``."""
    out = ""
    for sha, entries in commits:
        out += f"\0{sha}\n\0" if entries else f"\0{sha}\n"
        for old, new, status, path in entries:
            out += f":{old} {new} {'1' * 40} {'2' * 40} {status}\0{path}\0"
    return out


@settings(max_examples=300, deadline=None)
@given(commits=st.lists(st.tuples(commit_ids, st.lists(entry, max_size=4)), max_size=5))
def test_every_entry_of_a_raw_log_is_read_with_its_commit(
    commits: list[tuple[str, list[tuple[str, str, str, str]]]],
) -> None:
    got = list(incoming.raw_entries(_raw(commits)))
    assert got == [(sha, n, status, p) for sha, entries in commits for _o, n, status, p in entries]


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
    write_sha(desktop, "beta", "Ship v2", "Ship v2 in May", "goals", "Ship v2 in May")  # a merge
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
    write_sha(desktop, "beta", "Ship v2 in May", "Ship v2 in June", "goals", "Ship v2 in June")
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


def test_a_stopped_sync_refuses_another_and_fetches_nothing(tmp_path: Path) -> None:
    """A stopped sync (a conflict waits) is refused as before: nothing fetched, no ref."""
    _bare, laptop, desktop = make_pair(tmp_path)
    write_sha(laptop, "beta", "Ship v2", "Ship v3", "goals", "Ship v3")
    assert sync(laptop)[0] == 0
    write_sha(desktop, "beta", "Ship v2", "Ship v4", "goals", "Ship v4")
    code, _out, _err = sync(desktop)
    assert code == EXIT_CONFLICT  # the same section on both sides: stopped
    refs = git(desktop, "for-each-ref")
    write_sha(laptop, "beta", "Ship v3", "Ship v5", "goals", "Ship v5")
    assert sync(laptop)[0] == 0
    code, _out, err = sync(desktop)
    assert code == EXIT_CONFLICT and "stopped at a conflict" in err, err
    assert git(desktop, "for-each-ref") == refs


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
