"""The object format is read from the repository's config as git reads it (git is the judge)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.git.objects import ObjectStore
from gitmem.git.repo_format import object_format
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


@pytest.mark.parametrize("text", SPELLINGS + NOT_SET)
def test_object_format_is_what_git_reads(tmp_path: Path, text: str) -> None:
    path = _repo(tmp_path, text)
    expected = "sha256" if text in SPELLINGS else "sha1"
    assert _git_says(path) == expected
    assert object_format(path / ".git" / "config") == expected


def test_an_included_file_does_not_set_it(tmp_path: Path) -> None:
    """git takes extensions from the repository's own file, not from what it includes."""
    path = _repo(tmp_path, "[include]\n\tpath = more\n")
    (path / ".git" / "more").write_text("[extensions]\n\tobjectformat = sha256\n")
    assert git(path, "config", "extensions.objectformat").strip() == "sha256"
    assert _git_says(path) == "sha1"
    assert object_format(path / ".git" / "config") == "sha1"


def test_a_hand_written_sha256_config_gets_sha256_objects(tmp_path: Path) -> None:
    """gitmem's loose objects in a sha256 repo are the ones git would write there."""
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


_NAME = st.sampled_from(["extensions", "Extensions", "EXTENSIONS", "core", "alias", "extensions.x"])
_KEY = st.sampled_from(["objectformat", "objectFormat", "OBJECTFORMAT", "bare", "objectformats"])
_VALUE = st.sampled_from(["sha256", "sha1", '"sha256"', "sha256 # c", '"sha"256', "sha\\\n256"])
_EQ = st.sampled_from(["=", " = ", "\t=\t", "= "])
_LINE = st.one_of(
    st.builds(lambda n: f"[{n}]\n", _NAME),
    st.builds(lambda n, k, e, v: f"[{n}] {k}{e}{v}\n", _NAME, _KEY, _EQ, _VALUE),
    st.builds(lambda k, e, v: f"\t{k}{e}{v}\n", _KEY, _EQ, _VALUE),
    st.builds(lambda k, e, v: f"# {k}{e}{v}\n", _KEY, _EQ, _VALUE),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(_LINE, max_size=6))
def test_object_format_agrees_with_git(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str]
) -> None:
    path = _repo(tmp_path_factory.mktemp("fmt"), "".join(lines))
    said = _git_says(path)
    if said is not None:  # git refuses a config naming an unknown extension: nothing to compare
        assert object_format(path / ".git" / "config") == said


def test_a_comment_naming_sha256_leaves_a_sha1_repo_sha1(tmp_path: Path) -> None:
    path = _repo(tmp_path, "# extensions: objectformat = sha256 some day\n")
    store = ObjectStore(Git(path), path / ".git")
    try:
        sha = store.write("blob", b"a card\n")
    finally:
        store.close()
    assert sha == git(path, "hash-object", "--stdin", input=b"a card\n").strip()
    assert len(sha) == 40
