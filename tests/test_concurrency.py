"""Two processes editing the same card at once: every edit lands, as its own commit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git

WRITER = """
import sys
from gitmem.features.edit import write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry

root, who, n, branch = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
with MemoryRepo.discover(root) as repo:
    for i in range(n):
        sid = f"{who}-{i}"
        write_card(repo, "shared", "", f"## Note {sid}\\nfrom {who} #{i}\\n",
                   IndexEntry.make(f"note-{sid}", [who], f"note {i} from {who}"),
                   actor=who, branch=branch)
"""


@pytest.mark.slow
@pytest.mark.parametrize("branch", ["main", "gitmem/session/race"])
def test_two_processes_times_200_edits_lose_nothing(
    client: Path, tmp_path: Path, branch: str
) -> None:
    n = 200
    if branch != "main":
        git(client, "branch", branch, "main")
    base = int(git(client, "rev-list", "--count", branch))
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(client), who, str(n), branch], stderr=subprocess.PIPE
        )
        for who in ("alice", "bob")
    ]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err.decode()
    assert int(git(client, "rev-list", "--count", branch)) == base + 2 * n
    card = git(client, "show", f"{branch}:cards/shared.md")
    for who in ("alice", "bob"):
        for i in range(n):
            assert f"## Note {who}-{i}\nfrom {who} #{i}\n" in card
    actors = git(client, "log", "--format=%(trailers:key=Gitmem-Actor,valueonly)", branch).split()
    assert actors.count("alice") == n and actors.count("bob") == n
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=client, capture_output=True, check=False)
    assert fsck.returncode == 0, fsck.stderr.decode()
    assert git(client, "status", "--porcelain") == ""
    if branch == "main":
        assert (client / "cards/shared.md").read_text() == card
