"""`gitmem redact` killed by a real SIGTERM or SIGKILL at each of its steps: `gitmem
status` names what was left, `gitmem recover` rolls it back (killed before the rewritten
history was checked) or finishes it (after), HEAD is never left redacted over a secret
on disk, and nothing is lost. The random-moment run is benchmarks/fault_redact.py."""

from __future__ import annotations

import shutil
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import fault_redact as fr

# Each step, named by the function the redact calls at that moment, and what recover does.
POINTS = [
    ("gitmem.sync.rewrite.rewrite", "rolled back"),  # preparing: nothing rewritten yet
    ("gitmem.sync.rewrite.scan_log", "rolled back"),  # rewritten beside, not yet checked
    ("gitmem.sync.redact_journal.apply", "finished"),  # checked and journaled, no ref moved
    ("gitmem.sync.redact_journal.changed_paths", "finished"),  # the other refs moved, not main
    ("gitmem.ops.worktree.sync_worktree", "finished"),  # main moved, the files not yet
    ("gitmem.sync.redact_journal._write_record", "finished"),  # all moved, no record yet
    ("gitmem.index.build.rebuild", "finished"),  # recorded, the index not rebuilt
    ("gitmem.sync.redact_journal.clear", "finished"),  # done but for the journal
]


def prelude(point: str, sig: signal.Signals) -> str:
    """Arm a real signal to the redact process itself when it reaches ``point``."""
    module, _, name = point.rpartition(".")
    return (
        f"import importlib, os, signal\nm = importlib.import_module({module!r})\n"
        f"real = getattr(m, {name!r})\n"
        f"def wrapped(*a, **k):\n    os.kill(os.getpid(), signal.{sig.name})\n"
        "    return real(*a, **k)\n"
        f"setattr(m, {name!r}, wrapped)\n"
    )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, fr.State, fr.State]]:
    where = tmp_path_factory.mktemp("redact-world")
    with pytest.MonkeyPatch.context() as mp:  # as hermetic as the autouse fixture
        home = where / "home"
        home.mkdir()
        for key, value in {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "GITMEM_HOME": str(home / "gitmem"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "Test Person",
            "GIT_AUTHOR_EMAIL": "person@example.com",
            "GIT_COMMITTER_NAME": "Test Person",
            "GIT_COMMITTER_EMAIL": "person@example.com",
            "GITMEM_SIGNING": "off",  # as the runs have it: a redact re-signs only when on
        }.items():
            mp.setenv(key, value)
        root = fr.make_world(where)
        before, after, _ = fr.expected(root, where, runs=1)
        yield root, before, after


@pytest.mark.slow
@pytest.mark.parametrize(("n", "point", "outcome"), [(i, *p) for i, p in enumerate(POINTS)])
def test_redact_killed_at_each_step_is_rolled_back_or_finished(
    world: tuple[Path, fr.State, fr.State], tmp_path: Path, n: int, point: str, outcome: str
) -> None:
    root, before, after = world
    repo = shutil.copytree(root, tmp_path / "repo", symlinks=True)
    sig = (signal.SIGTERM, signal.SIGKILL)[n % 2]
    r = fr.gitmem(repo, "redact", prelude=prelude(point, sig))
    assert r.returncode == -sig, r.stderr  # killed there, by the signal
    problems, lost, got = fr.check(repo, before, after)
    assert problems == [] and not lost
    assert got == outcome
    assert fr.gitmem(repo, "status").stdout.count("redact was interrupted") == 0


def test_no_session_starts_over_a_redact_killed_half_way(
    world: tuple[Path, fr.State, fr.State], tmp_path: Path
) -> None:
    """Killed after its rewrite was checked, before main moved: a session branch made now
    would begin from the history the redact removes, so none starts until it is done."""
    root, before, after = world
    repo = shutil.copytree(root, tmp_path / "repo", symlinks=True)
    point = "gitmem.sync.redact_journal.apply"
    killed = fr.gitmem(repo, "redact", prelude=prelude(point, signal.SIGKILL))
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    sessions = ["for-each-ref", "--format=%(refname)", "refs/heads/gitmem/session/"]
    had = fr.git(repo, *sessions)
    refused = fr.gitmem(repo, "ask", "--simulated", "what is the budget?")
    assert refused.returncode == 4, refused.stderr
    (line,) = [ln for ln in refused.stderr.splitlines() if "error" in ln]  # beside the label
    assert "redact was interrupted" in line and "`gitmem recover`" in line, line
    assert fr.git(repo, *sessions) == had  # no branch was made
    assert fr.gitmem(repo, "recover").returncode == 0
    problems, lost, got = fr.check(repo, before, after)
    assert problems == [] and not lost and got == "finished"
    asked = fr.gitmem(repo, "ask", "--simulated", "what is the budget?")
    assert asked.returncode == 0, asked.stderr
