"""gitmem sync between two clones ("laptop" and "desktop") of a bare remote, and through git daemon."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gitmem.index import build as index
from gitmem.memory.repo import MemoryRepo
from gitmem.ops import remote as remote_mod
from gitmem.ops.merge import merge_card
from gitmem.setup.init import init_repo

from helpers import git, gm, snapshot, write_sha

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import daemon  # git daemon on 127.0.0.1, shared with the sync benchmarks

CARDS = {
    "acme-website": "# Acme website\n\n## Budget\n30k\n\n## Team\nAnn\nBob\nCy\n\n## Next steps\nCall Bob\n",
    "beta": "# Beta\n\n## Goals\nShip v2\n",
}


def sync(path: Path, *args: str) -> tuple[int, str, str]:
    res = gm("-C", str(path), "sync", *args)
    return res.code, res.out, res.err


def state(path: Path) -> dict[str, str]:
    """Everything but the object store: fetched objects are unreferenced and change nothing."""
    return {k: v for k, v in snapshot(path).items() if not k.startswith(".git/objects/")}


def rendered_index(path: Path) -> str:
    with MemoryRepo(path) as repo:
        idx = index.refresh(repo)
        assert idx == index.resolve(repo, index.replay_all(repo))  # derived, never merged
        return idx.render()


def is_ancestor(path: Path, a: str, b: str) -> bool:
    return (
        subprocess.run(
            ["git", "merge-base", "--is-ancestor", a, b], cwd=path, check=False
        ).returncode
        == 0
    )


def make_pair(tmp_path: Path, url: str | None = None) -> tuple[Path, Path, Path]:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    laptop = tmp_path / "laptop"
    init_repo(laptop)
    for project, text in CARDS.items():
        first = text.split("## ")[1].split("\n")[0].lower().replace(" ", "-")
        write_sha(laptop, project, "", text, first, f"{project} created")
    git(laptop, "remote", "add", "origin", url or str(bare))
    code, _, err = sync(laptop)
    assert code == 0, err
    desktop = tmp_path / "desktop"
    git(tmp_path, "clone", "-q", url or str(bare), str(desktop))
    return bare, laptop, desktop


def diverged(tmp_path: Path) -> tuple[Path, Path]:
    """(laptop, desktop): the laptop's edit of beta is on the remote, the desktop has its
    own edit of acme-website: the desktop's next sync receives one commit and merges."""
    _bare, laptop, desktop = make_pair(tmp_path)
    write_sha(laptop, "beta", "Ship v2", "Ship v2 in May", "goals", "Ship v2 in May")
    assert sync(laptop)[0] == 0
    write_sha(desktop, "acme-website", "Call Bob", "Call Bob today", "next-steps", "Call Bob today")
    return laptop, desktop


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path, Path]:
    return make_pair(tmp_path)


def test_first_sync_pushes_and_a_clone_is_up_to_date(pair: tuple[Path, Path, Path]) -> None:
    bare, laptop, desktop = pair
    assert git(bare, "rev-parse", "main") == git(laptop, "rev-parse", "main")
    code, out, err = sync(desktop)
    assert code == 0, err
    assert out.startswith("main is up to date with origin")
    assert rendered_index(desktop) == rendered_index(laptop)


def test_different_cards_merge_silently_and_keep_every_commit(
    pair: tuple[Path, Path, Path],
) -> None:
    bare, laptop, desktop = pair
    mine = write_sha(laptop, "acme-website", "30k", "40k", "budget", "Budget raised to 40k")
    assert sync(laptop)[0] == 0
    theirs = write_sha(desktop, "beta", "Ship v2", "Ship v2 in March", "goals", "Ship v2 in March")
    old_remote = git(bare, "rev-parse", "main").strip()
    code, out, err = sync(desktop)
    assert code == 0, err
    assert "received 1 commit," in out and "merged" in out
    assert sync(laptop)[0] == 0
    top = git(laptop, "rev-parse", "main").strip()
    assert (
        top == git(desktop, "rev-parse", "main").strip() == git(bare, "rev-parse", "main").strip()
    )
    for sha in (mine, theirs, old_remote):  # nothing rewritten, nothing dropped, never forced
        assert is_ancestor(laptop, sha, top)
    assert "Gitmem-Summary: Ship v2 in March" in git(laptop, "log", "-1", "--format=%B", theirs)
    for path in (laptop, desktop):
        text = (path / "cards/acme-website.md").read_text()
        assert "40k" in text and "Ship v2 in March" in (path / "cards/beta.md").read_text()
        assert git(path, "status", "--porcelain") == ""
    assert rendered_index(laptop) == rendered_index(desktop)
    assert "Budget raised to 40k" in rendered_index(desktop)


def test_different_sections_of_one_card_merge_silently(pair: tuple[Path, Path, Path]) -> None:
    _, laptop, desktop = pair
    write_sha(laptop, "acme-website", "30k", "40k", "budget", "Budget raised")
    write_sha(laptop, "acme-website", "Cy\n", "Cy\nDee\n", "team", "Dee joined")
    assert sync(laptop)[0] == 0
    write_sha(
        desktop, "acme-website", "Call Bob", "Call Bob on Monday", "next-steps", "Call Monday"
    )
    assert sync(desktop)[0] == 0
    assert sync(laptop)[0] == 0
    expected = (
        CARDS["acme-website"]
        .replace("30k", "40k")
        .replace("Cy\n", "Cy\nDee\n")
        .replace("Call Bob", "Call Bob on Monday")
    )
    for path in (laptop, desktop):
        assert (path / "cards/acme-website.md").read_text() == expected
    assert rendered_index(laptop) == rendered_index(desktop)


def test_append_only_logs_merge_by_union(pair: tuple[Path, Path, Path]) -> None:
    _, laptop, desktop = pair
    (laptop / "logs/usage.jsonl").write_text('{"n": "first"}\n')
    git(laptop, "add", "logs/usage.jsonl")
    git(laptop, "commit", "-qm", "usage")
    assert sync(laptop)[0] == 0 and sync(desktop)[0] == 0
    for path, line in ((laptop, '{"n": "laptop"}\n'), (desktop, '{"n": "desktop"}\n')):
        with open(path / "logs/usage.jsonl", "a") as fh:
            fh.write(line)
        git(path, "commit", "-qam", "usage")
    assert sync(laptop)[0] == 0
    code, _, err = sync(desktop)
    assert code == 0, err
    lines = (desktop / "logs/usage.jsonl").read_text().splitlines()
    assert sorted(lines) == ['{"n": "desktop"}', '{"n": "first"}', '{"n": "laptop"}']


def conflict(pair: tuple[Path, Path, Path]) -> tuple[str, str]:
    _, laptop, desktop = pair
    write_sha(laptop, "acme-website", "30k", "40k", "budget", "Budget 40k")
    assert sync(laptop)[0] == 0
    local = write_sha(desktop, "acme-website", "30k", "50k", "budget", "Budget 50k")
    return local, git(laptop, "rev-parse", "main").strip()


def test_same_section_on_both_sides_stops_and_continue_finishes(
    pair: tuple[Path, Path, Path],
) -> None:
    bare, laptop, desktop = pair
    local, remote_tip = conflict(pair)
    code, out, err = sync(desktop)
    assert code == 4, err
    assert "acme-website § budget" in out and "cards/acme-website.md" in out
    assert "--continue" in out and "--abort" in out
    # both versions kept: ours in main, theirs under a ref, both in the working tree
    assert git(desktop, "rev-parse", "main").strip() == local
    assert git(desktop, "rev-parse", "refs/gitmem/conflict/remote").strip() == remote_tip
    text = (desktop / "cards/acme-website.md").read_text()
    assert (
        "<<<<<<< main (this machine)\n## Budget\n50k\n" in text
        and "=======\n## Budget\n40k\n" in text
    )
    assert "## Next steps\nCall Bob\n" in text and text.count("## Team") == 1
    assert json.loads(gm("-C", str(desktop), "sync", "--json").out)["error"]["type"] == "Conflict"
    again = gm("-C", str(desktop), "sync", "--continue")
    assert (
        again.code == 2 and "still has conflict markers" in again.err and again.err.count("\n") == 1
    )

    (desktop / "cards/acme-website.md").write_text(CARDS["acme-website"].replace("30k", "45k"))
    code, out, err = sync(desktop, "--continue")
    assert code == 0, err
    assert git(bare, "rev-parse", "main") == git(desktop, "rev-parse", "main")
    assert is_ancestor(desktop, local, "main") and is_ancestor(desktop, remote_tip, "main")
    assert git(desktop, "status", "--porcelain") == ""
    assert not (desktop / ".git/gitmem/sync-state.json").exists()
    assert git(desktop, "for-each-ref", "refs/gitmem/conflict") == ""
    assert sync(laptop)[0] == 0
    assert (laptop / "cards/acme-website.md").read_text() == CARDS["acme-website"].replace(
        "30k", "45k"
    )
    assert rendered_index(laptop) == rendered_index(desktop)


def test_a_resolution_committed_by_hand_is_taken(pair: tuple[Path, Path, Path]) -> None:
    _, laptop, desktop = pair
    conflict(pair)
    assert sync(desktop)[0] == 4
    (desktop / "cards/acme-website.md").write_text(
        CARDS["acme-website"].replace("30k", "40k, then 50k")
    )
    git(desktop, "commit", "-qam", "settle the budget")
    code, _, err = sync(desktop, "--continue")
    assert code == 0, err
    assert sync(laptop)[0] == 0
    assert "40k, then 50k" in (laptop / "cards/acme-website.md").read_text()


def test_abort_puts_everything_back(pair: tuple[Path, Path, Path]) -> None:
    _, _, desktop = pair
    conflict(pair)
    before = state(desktop)
    assert sync(desktop)[0] == 4
    assert state(desktop) != before
    code, out, err = sync(desktop, "--abort")
    assert code == 0, err
    assert "aborted" in out
    assert state(desktop) == before
    nothing = gm("-C", str(desktop), "sync", "--abort")
    assert nothing.code == 2 and "no sync to abort" in nothing.err


def test_no_remote_configured(repo: MemoryRepo, client: Path) -> None:
    before = snapshot(client)
    res = gm("-C", str(client), "sync")
    assert res.code == 3 and res.err.count("\n") == 1
    assert "no remote 'origin' configured; add one with `git remote add origin URL`" in res.err
    assert snapshot(client) == before


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_remote_is_one_line_and_changes_nothing(repo: MemoryRepo, client: Path) -> None:
    git(client, "remote", "add", "origin", f"git://127.0.0.1:{closed_port()}/remote.git")
    before = snapshot(client)
    res = gm("-C", str(client), "sync")
    assert res.code == 5 and res.err.count("\n") == 1
    assert "cannot fetch from origin" in res.err
    assert snapshot(client) == before


def test_rewritten_remote_is_refused_and_nothing_is_lost(
    tmp_path: Path, pair: tuple[Path, Path, Path]
) -> None:
    bare, _laptop, desktop = pair
    assert sync(desktop)[0] == 0  # desktop has synced: it knows what the remote held
    mine = write_sha(desktop, "beta", "Ship v2", "Ship v3", "goals", "Ship v3")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    git(other, "commit", "-q", "--amend", "-m", "rewritten history")
    git(other, "push", "-q", "--force", "origin", "main")
    before = state(desktop)
    res = gm("-C", str(desktop), "sync")
    assert res.code == 4 and res.err.count("\n") == 1
    assert (
        "origin/main was rewritten" in res.err and "`git push --force-with-lease=main:" in res.err
    )
    after = state(desktop)  # the one thing kept: the rewritten tip, for `gitmem verify`
    after.pop(".git/refs/gitmem/sync/origin/rewritten")
    assert after == before
    kept = git(desktop, "rev-parse", "refs/gitmem/sync/origin/rewritten").strip()
    assert kept == git(other, "rev-parse", "main").strip()
    assert git(desktop, "rev-parse", "main").strip() == mine


def test_someone_pushing_first_means_another_round(
    pair: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, laptop, desktop = pair
    write_sha(desktop, "beta", "Ship v2", "Ship v3", "goals", "Ship v3")
    real_push = remote_mod.push_updates
    calls: list[str] = []

    def racing_push(
        repo: MemoryRepo, name: str, updates: Any, where: str | None = None
    ) -> remote_mod.Pushed:
        if not calls:  # the laptop pushes between our fetch and our push
            (laptop / "cards/acme-website.md").write_text(
                CARDS["acme-website"].replace("Ann", "Anne")
            )
            git(laptop, "commit", "-qam", "hand edit")
            git(laptop, "push", "-q", "origin", "main")
        calls.append(updates[0].ref)
        return real_push(repo, name, updates, where)

    monkeypatch.setattr(remote_mod, "push_updates", racing_push)
    code, _, err = sync(desktop)
    assert code == 0, err
    assert len(calls) == 2
    assert "Anne" in (desktop / "cards/acme-website.md").read_text()
    assert is_ancestor(desktop, git(laptop, "rev-parse", "main").strip(), "main")
    assert git(bare, "rev-parse", "main") == git(desktop, "rev-parse", "main")


def test_json_output(pair: tuple[Path, Path, Path]) -> None:
    _, laptop, _ = pair
    write_sha(laptop, "beta", "Ship v2", "Ship v3", "goals", "Ship v3")
    data = json.loads(gm("-C", str(laptop), "sync", "--json").out)
    assert data["status"] == "synced" and data["sent"] == 1 and data["received"] == 0
    assert data["main"] == git(laptop, "rev-parse", "main").strip()


@contextlib.contextmanager
def git_daemon(base: Path) -> Iterator[int]:
    """``git daemon`` on 127.0.0.1 serving every repo under ``base`` (benchmarks/daemon.py)."""
    with daemon.git_daemon(base, os.environ) as port:
        yield port


def test_two_machines_through_a_real_git_daemon(tmp_path: Path) -> None:
    with git_daemon(tmp_path) as port:
        url = f"git://127.0.0.1:{port}/remote.git"
        bare, laptop, desktop = make_pair(tmp_path, url)
        write_sha(laptop, "acme-website", "30k", "40k", "budget", "Budget 40k")
        write_sha(desktop, "beta", "Ship v2", "Ship v3", "goals", "Ship v3")
        write_sha(desktop, "acme-website", "30k", "50k", "budget", "Budget 50k")
        assert sync(laptop)[0] == 0
        code, out, _ = sync(desktop)
        assert code == 4 and "acme-website § budget" in out
        (desktop / "cards/acme-website.md").write_text(CARDS["acme-website"].replace("30k", "45k"))
        code, _, err = sync(desktop, "--continue")
        assert code == 0, err
        assert sync(laptop)[0] == 0
        assert (
            git(laptop, "rev-parse", "main")
            == git(desktop, "rev-parse", "main")
            == git(bare, "rev-parse", "main")
        )
        assert "Ship v3" in (laptop / "cards/beta.md").read_text()
        assert "45k" in (laptop / "cards/acme-website.md").read_text()
        assert rendered_index(laptop) == rendered_index(desktop)


def test_merge_card_by_section() -> None:
    base = CARDS["acme-website"]
    ours = base.replace("30k", "40k") + "\n## Risks\nnone\n"
    theirs = base.replace("Call Bob", "Call Bob on Monday").replace(
        "## Team\n", "## Legal\nok\n\n## Team\n"
    )
    text, clashes = merge_card(base, ours, theirs, ("main", "origin/main"))
    assert clashes == []
    assert text == (
        base.replace("30k", "40k")
        .replace("Call Bob", "Call Bob on Monday")
        .replace("## Team\n", "## Legal\nok\n\n## Team\n")
        + "\n## Risks\nnone\n"
    )
    same, none = merge_card(base, ours, ours, ("main", "origin/main"))
    assert same == ours and none == []
    text, clashes = merge_card(
        base,
        base.replace("Bob\n", "Bobby\n"),
        base.replace("Cy\n", "Cyd\n"),
        ("main", "origin/main"),
    )
    assert clashes == [
        "team"
    ]  # one section, two different edits: a conflict even if the lines differ
    assert (
        "<<<<<<< main\n## Team\nAnn\nBobby\nCy\n\n=======\n## Team\nAnn\nBob\nCyd\n\n>>>>>>> origin/main\n"
        in text
    )


def test_a_file_other_than_a_card_conflicts_by_lines(pair: tuple[Path, Path, Path]) -> None:
    _, laptop, desktop = pair
    for path, who in ((laptop, "laptop"), (desktop, "desktop")):
        text = (path / "persona.md").read_text()
        (path / "persona.md").write_text(text.splitlines()[0] + f"\nedited on the {who}\n")
        git(path, "commit", "-qam", f"persona on the {who}")
    assert sync(laptop)[0] == 0
    code, out, _ = sync(desktop)
    assert code == 4 and "  persona.md" in out
    text = (desktop / "persona.md").read_text()
    assert "<<<<<<< main (this machine)" in text and ">>>>>>> origin/main" in text
    assert sync(desktop, "--abort")[0] == 0
    assert (desktop / "persona.md").read_text().endswith("edited on the desktop\n")
