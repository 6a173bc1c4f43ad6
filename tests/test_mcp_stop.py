"""SIGTERM to `gitmem mcp`'s process group ends its session whole (issue 22, case 11).

A ``reference-transaction`` hook holds the session's end at its first ref update, so the
signal reaches the group exactly then: gitmem must finish the end, and its git child
(in a group of its own) must not be killed halfway.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from helpers import git

SERVER = "from gitmem.cli import main; main()"
HOOK = """#!/bin/sh
[ "$1" = prepared ] || exit 0
grep -qv ' refs/heads/gitmem/session/' || exit 0
[ -e {mark} ] && exit 0
touch {mark}
i=0
while [ ! -e {go} ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
"""
WRITE = {
    "name": "write_memory_card",
    "arguments": {
        "project": "acme",
        "old_text": "",
        "new_text": "## Budget\n30k\n",
        "index_entry": {"section_id": "budget", "keywords": ["budget"], "summary": "30k"},
    },
}


def rpc(proc: subprocess.Popen[bytes], id: int, method: str, params: dict[str, Any]) -> Any:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(
        json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).encode()
        + b"\n"
    )
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def hold_the_end(client: Path, tmp: Path) -> tuple[Path, Path]:
    """A hook that stops the first ref update of anything but a session branch until
    ``go`` exists, having made ``mark``."""
    mark, go = tmp / "held", tmp / "go"
    hook = client / ".git" / "hooks" / "reference-transaction"
    hook.write_text(HOOK.format(mark=mark, go=go))
    hook.chmod(0o755)
    return mark, go


@pytest.mark.parametrize("policy,writes", [("auto", True), ("review", False)])
def test_sigterm_to_the_group_during_the_end_still_ends_it_whole(
    client: Path, tmp_path: Path, policy: str, writes: bool
) -> None:
    toml = client / "gitmem.toml"
    toml.write_text(toml.read_text().replace('review = "auto"', f'review = "{policy}"'))
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, "-C", str(client), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own group, as a client or a terminal starts it
    )
    try:
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}}
        rpc(proc, 1, "initialize", {**hello, "clientInfo": {"name": "t", "version": "1"}})
        if writes:
            assert not rpc(proc, 2, "tools/call", WRITE)["result"]["isError"]
        (branch,) = git(client, "for-each-ref", "--format=%(refname)", "refs/heads/gitmem/").split()
        mark, go = hold_the_end(client, tmp_path)
        assert proc.stdin is not None
        proc.stdin.close()  # the client leaves; the end starts
        for _ in range(400):
            if mark.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        if mark.exists():
            os.killpg(proc.pid, signal.SIGTERM)  # a terminal closing: the whole group
            time.sleep(0.2)
        go.touch()
        proc.wait(timeout=60)
        assert proc.stderr is not None
        err = proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    session = branch.rsplit("/", 1)[1]
    assert mark.exists()  # the signal came while the end moved a ref
    left = git(client, "for-each-ref", "--format=%(refname)", "refs/heads/gitmem/").split()
    assert (proc.returncode, "Traceback" in err) == (0, False), err
    if policy == "auto":
        assert git(client, "show", "main:cards/acme.md").endswith("## Budget\n30k\n")
        assert left == [] and "1 memory edit landed on main" in err
    else:  # the session is archived, not left as an empty branch for review
        assert left == []
        assert git(client, "rev-parse", "-q", "--verify", f"refs/gitmem/archive/{session}")
