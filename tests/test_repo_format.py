"""The store names objects in the repository's object format, however its config spells it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gitmem.git.objects import ObjectStore
from gitmem.git.runner import Git

from helpers import git

# Ways people and tools write the one setting; git reads every one of them as sha256.
SPELLINGS = [
    "[extensions]\n\tobjectformat = sha256\n",  # what `git init --object-format` writes
    "[extensions]\n\tobjectformat=sha256\n",
    "[Extensions]\n\tobjectFormat = sha256\n",
    '[extensions]\n\tobjectformat = "sha256"\n',
    "[extensions] objectformat = sha256 ; set by hand\n",
    "[extensions]\n\tobjectformat = sha\\\n256\n",
    "[extensions]\n\tobjectformat = sha1\n\tobjectformat = sha256\n",
]
# Text that mentions the setting without making it; git reads sha1 for each.
NOT_SET = [
    "# [extensions] objectformat = sha256\n",
    '[alias]\n\tnote = "!echo objectformat = sha256"\n',
    "[extensions]\n\t; objectformat = sha256\n",
    "[extensions]\n\tobjectformat = sha256\n\tobjectformat = sha1\n",
    '[remote "origin"]\n\turl = /srv/objectformat = sha256\n',
]


def _repo(tmp: Path, extra: str) -> Path:
    path = tmp / "r"
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    git(path, "config", "core.repositoryformatversion", "1")
    with (path / ".git" / "config").open("a") as fh:
        fh.write(extra)
    return path


def _git_says(path: Path) -> str | None:
    proc = subprocess.run(
        ["git", "rev-parse", "--show-object-format"], cwd=path, capture_output=True, check=False
    )
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def _store_says(path: Path) -> str:
    store = ObjectStore(Git(path), path / ".git")
    try:
        return {20: "sha1", 32: "sha256"}[store.sha_bytes]
    finally:
        store.close()


@pytest.mark.parametrize("text", SPELLINGS + NOT_SET)
def test_object_format_is_what_git_reads(tmp_path: Path, text: str) -> None:
    path = _repo(tmp_path, text)
    expected = "sha256" if text in SPELLINGS else "sha1"
    assert _git_says(path) == expected
    assert _store_says(path) == expected


def test_an_included_file_does_not_set_it(tmp_path: Path) -> None:
    """git takes extensions from the repository's own file, not from what it includes."""
    path = _repo(tmp_path, "[include]\n\tpath = more\n")
    (path / ".git" / "more").write_text("[extensions]\n\tobjectformat = sha256\n")
    assert git(path, "config", "extensions.objectformat").strip() == "sha256"
    assert _git_says(path) == "sha1"
    assert _store_says(path) == "sha1"


def test_a_hand_written_sha256_config_gets_sha256_objects(tmp_path: Path) -> None:
    """gitmem's objects in a sha256 repo are the ones git would write there."""
    path = tmp_path / "r"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", str(path)], check=True)
    config = path / ".git" / "config"
    config.write_text(config.read_text().replace("objectformat = sha256", "objectFormat=sha256"))
    store = ObjectStore(Git(path), path / ".git")
    try:
        sha = store.write("blob", b"a card\n")
    finally:
        store.close()
    assert sha == git(path, "hash-object", "--stdin", input=b"a card\n").strip()
    assert git(path, "cat-file", "blob", sha) == "a card\n"


def test_a_comment_naming_sha256_leaves_a_sha1_repo_sha1(tmp_path: Path) -> None:
    path = _repo(tmp_path, "# extensions: objectformat = sha256 some day\n")
    store = ObjectStore(Git(path), path / ".git")
    try:
        sha = store.write("blob", b"a card\n")
    finally:
        store.close()
    assert sha == git(path, "hash-object", "--stdin", input=b"a card\n").strip()
    assert len(sha) == 40
