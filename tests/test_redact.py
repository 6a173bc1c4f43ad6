"""Secrets never pushed, and redacted from history: `gitmem sync` refuses, `gitmem redact`
rewrites with git-filter-repo, another clone accepts the redaction. Two clones and a
bare remote, real git throughout."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.errors import EXIT_CONFLICT
from gitmem.setup.init import init_repo

from helpers import git, gm, snapshot, write

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import secrets_corpus as corpus

rng = random.Random(7)
AWS = corpus.aws_access_key(rng)
PASSWORD = corpus.password_word(rng)
PEM = corpus.pem_block(rng)


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A bare remote, clone A (where memory started) and clone B, both synced."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    a = tmp_path / "a"
    init_repo(a)
    git(a, "remote", "add", "origin", str(bare))
    write(a, "acme", "", "## Budget\n- 30k\n", "budget", "Q3 budget is 30k")
    assert gm("-C", str(a), "sync").code == 0
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(bare), str(b))
    assert gm("-C", str(b), "sync").code == 0
    return bare, a, b


def person_commits_secrets(a: Path) -> str:
    """A person's commits that bypass the hook: a key and a PEM in a card, a password in
    an index entry."""
    card = a / "cards" / "acme.md"
    card.write_text(card.read_text() + f"- staging key {AWS}\n\n## Deploy\n{PEM}\n")
    git(
        a,
        "commit",
        "-qam",
        "acme: deploy notes\n\nGitmem-Card: acme\nGitmem-Section: deploy\n"
        "Gitmem-Keywords: deploy\nGitmem-Summary: deploy key below\n",
        "--no-verify",
    )
    card.write_text(card.read_text() + "- root login below\n")
    git(
        a,
        "commit",
        "-qam",
        f"acme: root\n\nGitmem-Card: acme\nGitmem-Section: deploy\n"
        f"Gitmem-Keywords: deploy, root\nGitmem-Summary: root password: {PASSWORD}\n",
        "--no-verify",
    )
    return git(a, "rev-parse", "main").strip()


def test_sync_refuses_to_push_commits_with_a_secret_naming_them(
    world: tuple[Path, Path, Path],
) -> None:
    bare, a, b = world
    remote_before = git(bare, "rev-parse", "main")
    tip = person_commits_secrets(a)
    write(b, "other", "", "## Notes\n- hi\n", "notes", "notes")
    assert gm("-C", str(b), "sync").code == 0  # the remote moved: A would merge, then push
    remote_before = git(bare, "rev-parse", "main")

    def state() -> dict[str, str]:  # all but the objects fetched (a refused sync keeps those)
        return {k: v for k, v in snapshot(a).items() if not k.startswith(".git/objects/")}

    before = state()
    r = gm("-C", str(a), "sync")
    assert r.code == EXIT_CONFLICT
    assert state() == before  # refused before anything changed here: no merge, no ref
    first = git(a, "rev-parse", "main~1").strip()
    assert f"{first[:7]} (aws-access-key)" in r.err and f"{tip[:7]} (password)" in r.err
    assert AWS not in r.err and PASSWORD not in r.err
    assert git(bare, "rev-parse", "main") == remote_before
    scan = json.loads(gm("-C", str(a), "scan", "--history", "--json").out)["findings"]
    assert {(f["commit"], f["kind"]) for f in scan} == {
        (first, "aws-access-key"),
        (first, "private-key"),
        (tip, "password"),
    }


def test_redact_rewrites_history_keeps_trailers_and_index_then_pushes_with_lease(
    world: tuple[Path, Path, Path],
) -> None:
    bare, a, _b = world
    person_commits_secrets(a)
    index_before = gm("-C", str(a), "index").out
    r = gm("-C", str(a), "redact", "--json")
    assert r.code == 0, r.err
    done = json.loads(r.out)
    assert done["record"] == "refs/gitmem/redactions/1" and done["pushed"] is None
    # every commit, every ref: no secret left; each replaced by its kind
    everything = git(a, "log", "--all", "-p", "--format=%B")
    assert (
        AWS not in everything
        and PASSWORD not in everything
        and PEM.split("\n")[1] not in everything
    )
    card = git(a, "show", "main:cards/acme.md")
    assert "[REDACTED:aws-access-key]" in card and "[REDACTED:private-key]" in card
    assert (a / "cards" / "acme.md").read_text() == card  # the working tree followed
    assert "root password: [REDACTED:password]" in git(a, "log", "-1", "--format=%B", "main")
    # trailers kept, and the index a replay of them
    trailers = git(a, "log", "--format=%(trailers:key=Gitmem-Section,valueonly)", "main")
    assert trailers.split() == ["deploy", "deploy", "budget"]
    assert gm("-C", str(a), "scan", "--history").code == 0
    reindex = json.loads(gm("-C", str(a), "reindex", "--json").out)
    assert reindex["differences"] == []
    assert gm("-C", str(a), "index").out == index_before.replace(PASSWORD, "[REDACTED:password]")
    # recorded: a ref (kinds and places, never the secret) and a note on the new tip
    record = git(a, "show", "refs/gitmem/redactions/1:redaction.json")
    assert AWS not in record and json.loads(record)["main_after"] == done["main_after"]
    note = git(a, "notes", "--ref=refs/notes/gitmem-redactions", "show", "main")
    assert "aws-access-key" in note and "private-key" in note
    # nothing left the machine; then --push publishes with force-with-lease
    assert AWS not in git(bare, "log", "--all", "-p")
    r = gm("-C", str(a), "redact", "--push", "origin")
    assert r.code == 0, r.err
    assert git(bare, "rev-parse", "main") == git(a, "rev-parse", "main")
    assert git(bare, "rev-parse", "refs/gitmem/redactions/1").strip()


def test_redact_push_refuses_when_the_remote_moved_since_the_last_sync(
    world: tuple[Path, Path, Path],
) -> None:
    bare, a, b = world
    card = a / "cards" / "acme.md"
    card.write_text(card.read_text() + f"- key {AWS}\n")
    git(a, "commit", "-qam", "key", "--no-verify")
    git(a, "push", "-q", "origin", "main")  # plain git: the secret reached the remote
    assert gm("-C", str(a), "sync").code == 0
    write(b, "other", "", "## Notes\n- hi\n", "notes", "notes")
    assert gm("-C", str(b), "sync").code == 0  # B pushed after A's last sync
    remote_tip = git(bare, "rev-parse", "main")
    r = gm("-C", str(a), "redact", "--push", "origin")
    assert r.code == EXIT_CONFLICT and "refused the redacted main" in r.err
    assert git(bare, "rev-parse", "main") == remote_tip


def test_another_clone_recognises_the_redaction_and_accepts_it(
    world: tuple[Path, Path, Path],
) -> None:
    bare, a, b = world
    person_commits_secrets(a)
    git(a, "push", "-q", "origin", "main")  # plain git: the secrets reached the remote
    assert gm("-C", str(b), "sync").code == 0
    assert AWS in (b / "cards" / "acme.md").read_text()
    # B edits meanwhile; A redacts and publishes
    write(b, "other", "", "## Notes\n- hi\n", "notes", "notes")
    assert gm("-C", str(a), "sync").code == 0
    assert gm("-C", str(a), "redact", "--push", "origin").code == 0
    # B: not the plain rewritten-remote refusal, but an offer
    before = git(b, "rev-parse", "main")
    r = gm("-C", str(b), "sync")
    assert r.code == EXIT_CONFLICT and "--accept-redaction" in r.err
    assert "was rewritten by `gitmem redact`" in r.err
    assert git(b, "rev-parse", "main") == before
    r = gm("-C", str(b), "sync", "--accept-redaction")
    assert r.code == 0, r.err
    card = (b / "cards" / "acme.md").read_text()
    assert AWS not in card and "[REDACTED:aws-access-key]" in card
    assert (b / "cards" / "other.md").exists()  # B's own edit kept, re-made on top
    assert git(bare, "rev-parse", "main") == git(b, "rev-parse", "main")
    main_history = git(b, "log", "-p", "--format=%B", "main")
    assert AWS not in main_history and PASSWORD not in main_history
    assert json.loads(gm("-C", str(b), "reindex", "--json").out)["differences"] == []
    # A takes B's edit with a plain sync: both clones agree
    assert gm("-C", str(a), "sync").code == 0
    assert git(a, "rev-parse", "main") == git(b, "rev-parse", "main")
    assert gm("-C", str(b), "scan", "--history").code == 0  # no ref of B holds a secret


def test_accept_redaction_when_nothing_was_redacted_is_refused(
    world: tuple[Path, Path, Path],
) -> None:
    _bare, _a, b = world
    r = gm("-C", str(b), "sync", "--accept-redaction")
    assert r.code == 2 and "was not redacted" in r.err


def test_redact_push_to_an_unknown_remote_changes_nothing(world: tuple[Path, Path, Path]) -> None:
    _bare, a, _b = world
    person_commits_secrets(a)
    before = snapshot(a)
    r = gm("-C", str(a), "redact", "--push", "nope")
    assert r.code == 3 and r.err.startswith("gitmem: error: no remote 'nope' configured")
    assert snapshot(a) == before


def test_sync_never_publishes_a_session_branch_that_carries_a_secret(
    world: tuple[Path, Path, Path],
) -> None:
    """Sync publishes pending sessions too: a secret on one (here, typed into a chat and
    committed with its transcript) keeps that push from happening, named like main's."""
    bare, a, _b = world
    branch = "gitmem/session/20261130-101200-ab12"
    git(a, "branch", branch, "main")
    transcript = json.dumps({"role": "user", "text": f"the staging key is {AWS}"}) + "\n"
    blob = git(a, "hash-object", "-w", "--stdin", input=transcript.encode()).strip()
    git(a, "update-index", "--add", "--cacheinfo", f"100644,{blob},sessions/x.jsonl")
    tree = git(a, "write-tree").strip()
    git(a, "read-tree", "main")  # the person's index as it was
    commit = git(a, "commit-tree", tree, "-p", branch, "-m", "session: transcript").strip()
    git(a, "update-ref", f"refs/heads/{branch}", commit)
    r = gm("-C", str(a), "sync")
    assert r.code == EXIT_CONFLICT, r.out + r.err
    assert f"{commit[:7]} (aws-access-key)" in r.err and AWS not in r.err
    assert git(bare, "for-each-ref", "refs/heads/gitmem/") == ""  # nothing published


def test_redact_brings_a_linked_worktree_with_main_along(
    world: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, a, _ = world
    person_commits_secrets(a)
    git(a, "switch", "-q", "-c", "side")
    linked = tmp_path / "linked"
    git(a, "worktree", "add", "-q", str(linked), "main")
    r = gm("-C", str(a), "redact")
    assert r.code == 0, r.err
    card = (linked / "cards" / "acme.md").read_text()
    assert AWS not in card and "[REDACTED:" in card  # the worktree with main followed
    assert git(linked, "status", "--porcelain") == ""
    assert git(linked, "rev-parse", "HEAD") == git(a, "rev-parse", "main")


def test_redact_leaves_no_old_commit_in_this_clone(world: tuple[Path, Path, Path]) -> None:
    _bare, a, _b = world
    old = person_commits_secrets(a)
    assert PASSWORD in (a / ".git" / "COMMIT_EDITMSG").read_text()
    assert gm("-C", str(a), "redact").code == 0
    # the reflogs held the old commits, git's last message held the password
    assert PASSWORD not in git(a, "log", "-g", "--all", "--format=%B")
    assert AWS not in git(a, "log", "-g", "--all", "-p")
    assert not (a / ".git" / "COMMIT_EDITMSG").exists()
    gone = subprocess.run(["git", "cat-file", "-e", old], cwd=a, capture_output=True)
    assert gone.returncode != 0  # the old tip's object is pruned, not only unreferenced
    git(a, "fsck", "--no-progress")


def test_accepting_a_redaction_brings_a_linked_worktree_with_main_along(
    world: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _bare, a, b = world
    person_commits_secrets(a)
    git(a, "push", "-q", "origin", "main")
    assert gm("-C", str(b), "sync").code == 0
    git(b, "switch", "-q", "-c", "side")
    linked = tmp_path / "b-linked"
    git(b, "worktree", "add", "-q", str(linked), "main")
    assert gm("-C", str(a), "sync").code == 0
    assert gm("-C", str(a), "redact", "--push", "origin").code == 0
    r = gm("-C", str(b), "sync", "--accept-redaction")
    assert r.code == 0, r.err
    card = (linked / "cards" / "acme.md").read_text()
    assert AWS not in card and "[REDACTED:aws-access-key]" in card  # it followed main
    assert git(linked, "status", "--porcelain") == ""
    assert git(linked, "rev-parse", "HEAD") == git(b, "rev-parse", "main")
