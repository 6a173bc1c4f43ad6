"""``Git.start``: a git command begun now and read later gives what ``Git.out`` gives, fails
as it fails, and ``stop`` ends one nobody reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.errors import GitError
from gitmem.git.runner import Git


def test_a_begun_command_reads_as_out_and_fails_as_out(client: Path) -> None:
    git = Git(client)
    for args in (
        ("rev-parse", "HEAD"),
        ("log", "--format=%H%n%s", "-3"),
        ("rev-list", "--count", "HEAD"),
    ):
        assert git.start(*args).out() == git.out(*args)
    with pytest.raises(GitError) as begun:
        git.start("rev-parse", "--verify", "no-such-ref").out()
    with pytest.raises(GitError) as now:
        git.out("rev-parse", "--verify", "no-such-ref")
    assert (begun.value.returncode, str(begun.value)) == (now.value.returncode, str(now.value))


def test_stop_ends_a_command_nobody_reads(client: Path) -> None:
    running = Git(client).start("cat-file", "--batch")  # waits on its input for ever
    running.stop()
    assert running.proc.returncode is not None
    running.stop()  # again: nothing left to end
