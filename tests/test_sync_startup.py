"""What a `gitmem sync` process loads: only what the sync needs. A sync that merges, with no
decision interrupted, never imports the review stack (``review.decision_intent`` and what
it brings: pending sessions, hunk parsing with unidiff)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from test_redact import person_commits_secrets
from test_sync import make_pair, write

from gitmem.errors import EXIT_CONFLICT
from gitmem.setup.init import init_repo

from helpers import git, gm, snapshot


def _modules_of_sync(path: Path, out: Path) -> tuple[int, set[str]]:
    """Run `gitmem sync` in a new process; its exit code and the modules it imported."""
    code = (
        "import json, sys\n"
        "from gitmem.cli import main\n"
        "where, out = sys.argv[1], sys.argv[2]\n"
        "sys.argv = ['gitmem', '-C', where, 'sync']\n"
        "try:\n    main()\n    rc = 0\n"
        "except SystemExit as exc:\n    rc = exc.code or 0\n"
        "open(out, 'w').write(json.dumps({'rc': rc, 'modules': sorted(sys.modules)}))\n"
    )
    subprocess.run(
        [sys.executable, "-c", code, str(path), str(out)], check=True, capture_output=True
    )
    data = json.loads(out.read_text())
    return int(data["rc"]), set(data["modules"])


def test_a_merging_sync_with_no_interrupted_decision_does_not_import_the_review_stack(
    tmp_path: Path,
) -> None:
    _bare, laptop, desktop = make_pair(tmp_path)
    write(laptop, "beta", "Ship v2", "Ship v2 in May", "goals", "Ship v2 in May")
    code, _ = _modules_of_sync(laptop, tmp_path / "laptop.json")
    assert code == 0
    write(desktop, "acme-website", "Call Bob", "Call Bob today", "next-steps", "Call Bob today")
    code, modules = _modules_of_sync(desktop, tmp_path / "desktop.json")
    assert code == 0
    assert "merge origin/main" in git(desktop, "log", "-1", "--format=%s", "main")  # it merged
    assert "gitmem.sync.exchange" in modules
    assert (
        not {
            "gitmem.review.decision_intent",
            "gitmem.review.decision",
            "gitmem.review.pending",
            "unidiff",
        }
        & modules
    )


def test_a_remote_bringing_a_symlink_is_refused_first_when_local_commits_carry_a_secret(
    tmp_path: Path,
) -> None:
    """The incoming check (symlinks, submodules) runs before the outgoing scan (secrets):
    with both to refuse, the incoming refusal is the one reported."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    a = tmp_path / "a"
    init_repo(a)
    git(a, "remote", "add", "origin", str(bare))
    assert (
        gm(
            "-C",
            str(a),
            "write",
            "acme",
            "--old",
            "",
            "--new",
            "## Budget\n- 30k\n",
            "--section",
            "budget",
            "--keywords",
            "budget",
            "--summary",
            "budget",
        ).code
        == 0
    )
    assert gm("-C", str(a), "sync").code == 0
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(bare), str(b))
    outside = tmp_path / "outside"
    outside.mkdir()
    git(b, "rm", "-rq", "cards")
    os.symlink(outside, b / "cards")
    git(b, "add", "cards")
    git(b, "commit", "-qm", "cards is a link", "--no-verify")
    git(b, "push", "-q", "origin", "main")
    person_commits_secrets(a)
    before = {k: v for k, v in snapshot(a).items() if not k.startswith(".git/objects/")}
    res = gm("-C", str(a), "sync")
    assert res.code == 4, res.err
    assert "brings cards as a symlink" in res.err and "secret" not in res.err
    assert {k: v for k, v in snapshot(a).items() if not k.startswith(".git/objects/")} == before
    git(a, "remote", "set-url", "origin", str(tmp_path / "elsewhere.git"))
    git(tmp_path, "clone", "-q", "--bare", str(bare), str(tmp_path / "elsewhere.git"))
    git(tmp_path / "elsewhere.git", "update-ref", "refs/heads/main", "main~1")
    res = gm("-C", str(a), "sync")  # the same commits against a remote without the link
    assert res.code == EXIT_CONFLICT and "commits carry a secret" in res.err, res.err
