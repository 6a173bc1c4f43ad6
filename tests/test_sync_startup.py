"""What a `gitmem sync` process loads: only what the sync needs. A sync that merges, with no
decision interrupted, never imports the review stack (``review.decision_intent`` and what
it brings: pending sessions, hunk parsing with unidiff)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from test_sync import make_pair, write

from helpers import git


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
    subprocess.run([sys.executable, "-c", code, str(path), str(out)], check=True,
                   capture_output=True)
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
    assert not {"gitmem.review.decision_intent", "gitmem.review.decision",
                "gitmem.review.pending", "unidiff"} & modules
