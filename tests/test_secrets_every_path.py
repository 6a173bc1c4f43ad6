"""The secret scan covers every file gitmem pushes, not only memory's folders; one
`gitmem redact` removes every finding, two secrets on one line included. A bare remote,
a clone, a person's `git commit --no-verify`, real git throughout."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.errors import EXIT_CONFLICT
from gitmem.setup.init import init_repo

from helpers import git, gm

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import secrets_corpus as corpus

rng = random.Random(35)
AWS = corpus.aws_access_key(rng)
AWS_SECRET = corpus.aws_secret(rng)
GH = corpus.github_token(rng)


@pytest.fixture
def synced(tmp_path: Path) -> tuple[Path, Path]:
    """A bare remote and a clone that has synced with it once."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    a = tmp_path / "a"
    init_repo(a)
    git(a, "remote", "add", "origin", str(bare))
    assert gm("-C", str(a), "sync").code == 0
    return bare, a


def by_hand(a: Path, path: str, text: str, subject: str) -> str:
    """A person's commit that skips the hooks; its sha."""
    file = a / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text((file.read_text() if file.exists() else "") + text)
    git(a, "add", path)
    git(a, "commit", "-qm", subject, "--no-verify")
    return git(a, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize("path", ["gitmem.toml", "logs/usage.jsonl", "notes/todo.txt"])
def test_a_token_in_any_tracked_file_is_never_pushed_and_scan_names_it(
    synced: tuple[Path, Path], path: str
) -> None:
    bare, a = synced
    remote = git(bare, "rev-parse", "main")
    text = f'# ci = "{GH}"\n' if path.endswith(".toml") else f'{{"note": "token {GH}"}}\n'
    sha = by_hand(a, path, text, "person: settings")
    r = gm("-C", str(a), "sync")
    assert r.code == EXIT_CONFLICT, r.err
    assert f"{sha[:7]} (github-token)" in r.err and GH not in r.err
    assert git(bare, "rev-parse", "main") == remote  # nothing was sent
    found = json.loads(gm("-C", str(a), "scan", "--history", "--json").out)["findings"]
    assert [(f["commit"], f["path"], f["kind"]) for f in found] == [(sha, path, "github-token")]
    shown = gm("-C", str(a), "scan")
    assert f"{path} line" in shown.out and "no secrets found" not in shown.out


def test_the_pre_commit_hook_refuses_a_token_in_any_file(synced: tuple[Path, Path]) -> None:
    _, a = synced
    head = git(a, "rev-parse", "HEAD")
    (a / "gitmem.toml").write_text((a / "gitmem.toml").read_text() + f'# ci = "{GH}"\n')
    git(a, "add", "gitmem.toml")
    proc = subprocess.run(
        ["git", "commit", "-qm", "person: settings"], cwd=a, capture_output=True, text=True
    )
    assert proc.returncode != 0
    assert "commit refused: a secret (github-token in gitmem.toml line" in proc.stderr
    assert GH not in proc.stderr
    assert git(a, "rev-parse", "HEAD") == head


@pytest.mark.parametrize(
    "line",
    [
        f"AWS key {AWS} secret {AWS_SECRET}",
        f"aws_access_key_id={AWS} aws_secret_access_key={AWS_SECRET}",
        f"{AWS_SECRET} goes with {AWS}",
    ],
)
def test_an_aws_key_pair_on_one_line_is_redacted_in_one_run_then_sync_pushes(
    synced: tuple[Path, Path], line: str
) -> None:
    bare, a = synced
    sha = by_hand(a, "cards/acme.md", f"## Deploy\n- {line}\n", "acme: deploy")
    found = json.loads(gm("-C", str(a), "scan", "--history", "--json").out)["findings"]
    assert sorted(f["kind"] for f in found) == ["aws-access-key", "aws-secret-key"]
    assert {f["commit"] for f in found} == {sha}
    assert gm("-C", str(a), "sync").code == EXIT_CONFLICT
    r = gm("-C", str(a), "redact")
    assert r.code == 0, r.err
    text = git(a, "show", "main:cards/acme.md")
    assert AWS not in text and AWS_SECRET not in text
    assert "[REDACTED:aws-access-key]" in text and "[REDACTED:aws-secret-key]" in text
    assert "no secrets found in history" in gm("-C", str(a), "scan", "--history").out
    pushed = gm("-C", str(a), "sync")
    assert pushed.code == 0, pushed.err
    assert git(bare, "rev-parse", "main") == git(a, "rev-parse", "main")
    assert AWS_SECRET not in git(bare, "log", "-p", "main")
