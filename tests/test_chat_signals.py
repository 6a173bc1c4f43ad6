"""SIGTERM or SIGHUP to a piped `gitmem chat` ends its session as Ctrl-C does: the edits
land (review policy "auto"), the transcript is committed, no session branch is left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git

GITMEM = str(Path(sys.executable).with_name("gitmem"))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_stop_signal_ends_a_piped_chat_whole(client: Path, sig: signal.Signals) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    proc = subprocess.Popen(
        [GITMEM, "-C", str(client), "chat", "--simulated"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"remember acme Budget: 40k agreed\n")
    proc.stdin.flush()
    assert proc.stdout.readline().strip() == b"Saved."  # the turn is done; input stays open
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.decode().splitlines()[-1] == "gitmem: interrupted"
    subjects = git(client, "log", "--format=%s", "main").splitlines()
    assert "acme: 40k agreed" in subjects
    assert any(s.endswith(": transcript") for s in subjects)
    assert git(client, "branch", "--list", "gitmem/session/*") == ""
