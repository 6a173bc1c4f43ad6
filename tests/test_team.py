"""Team review across machines: sessions travel with sync, decisions come back, pushes retry.

Clones of one bare remote (and one through a real `git daemon` on 127.0.0.1), each with
its own machine name; a session runs under the review policy on "laptop".
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_review import CARD, SID, agent_session, person_writes
from test_sync import closed_port, git_daemon

from gitmem.memory.repo import MemoryRepo
from gitmem.ops import remote as remote_mod
from gitmem.review import decision as decide
from gitmem.review import session_branches as sessions
from gitmem.review import team
from gitmem.setup.init import init_repo
from gitmem.sync import exchange as sync_mod

from helpers import git, gm, snapshot

BRANCH = f"refs/heads/gitmem/session/{SID}"
BENCH = Path(__file__).parent.parent / "benchmarks"


def sync(path: Path) -> str:
    res = gm("-C", str(path), "sync")
    assert res.code == 0, res.err + res.out
    return res.out


def listed(path: Path, *args: str) -> dict[str, dict[str, object]]:
    res = gm("-C", str(path), "review", "--json", *args)
    assert res.code == 0, res.err
    return {str(s["session"]): s for s in json.loads(res.out)}


def main_of(path: Path) -> str:
    return git(path, "rev-parse", "main").strip()


def remote_refs(bare: Path) -> set[str]:
    return set(git(bare, "for-each-ref", "--format=%(refname)").split())


def machines(
    tmp_path: Path, names: tuple[str, ...], url: str | None = None
) -> tuple[Path, list[Path]]:
    """A bare remote and one clone per machine name, the first having made the memory."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    first = tmp_path / names[0]
    init_repo(first)
    with MemoryRepo(first) as repo:
        person_writes(repo)
    git(first, "remote", "add", "origin", url or str(bare))
    clones = [first]
    sync(first)
    for name in names[1:]:
        path = tmp_path / name
        git(tmp_path, "clone", "-q", url or str(bare), str(path))
        clones.append(path)
    for name, path in zip(names, clones, strict=True):
        git(path, "config", "gitmem.machine", name)
    return bare, clones


# What a refused decision may change: objects, and the remote's refs as last fetched.
THEIRS = (
    ".git/objects/",
    ".git/refs/remotes/",
    ".git/refs/gitmem/remotes/",
    ".git/logs/refs/remotes/",
    ".git/logs/refs/gitmem/remotes/",
)


def local_state(path: Path) -> dict[str, str]:
    return {k: v for k, v in snapshot(path).items() if not k.startswith(THEIRS)}


def produce(laptop: Path) -> None:
    with MemoryRepo(laptop) as repo:
        agent_session(repo)


def test_a_session_made_on_a_is_listed_on_b_accepted_in_part_and_a_learns_it(
    tmp_path: Path,
) -> None:
    bare, (laptop, desktop) = machines(tmp_path, ("laptop", "desktop"))
    produce(laptop)
    out = sync(laptop)
    assert f"published 1 pending session: {SID}" in out
    assert BRANCH in remote_refs(bare) and f"refs/gitmem/from/laptop/{SID}" in remote_refs(bare)
    assert listed(desktop) == {}
    assert f"1 session from another machine waits for review: {SID}" in sync(desktop)
    got = listed(desktop)[SID]
    assert got["state"] == "remote" and got["machine"] == "laptop" and got["remote"] == "origin"
    assert "(from laptop via origin)" in gm("-C", str(desktop), "review").out
    assert git(desktop, "for-each-ref", "refs/heads/gitmem").strip() == ""  # no local branch made
    # review ID shows it exactly as the laptop shows its own session
    here = json.loads(gm("-C", str(laptop), "review", SID, "--json").out)
    there = json.loads(gm("-C", str(desktop), "review", SID, "--json").out)
    assert there["files"] == here["files"] and there["hunks"] == here["hunks"] == 4
    res = gm("-C", str(desktop), "review", SID, "--accept", "--hunks", "1,4")
    assert res.code == 0, res.err
    assert "accepted in part" in res.out
    assert BRANCH not in remote_refs(bare)  # the decision removed the pending branch
    assert f"refs/gitmem/partial/{SID}" in remote_refs(bare)
    assert f"refs/gitmem/by/desktop/{SID}" in remote_refs(bare)
    accepted = (desktop / "cards/acme-website.md").read_text()
    assert "Budget: 40k" in accepted and "Owner: Ann" in accepted and "Call Bob\n" in accepted
    assert (desktop / "cards/beta.md").exists()
    sync(desktop)
    out = sync(laptop)
    assert f"decided on another machine, archived here: {SID}" in out
    assert SID not in listed(laptop)
    assert listed(laptop, "--all")[SID]["state"] == "partial"
    assert main_of(laptop) == main_of(desktop) == git(bare, "rev-parse", "main").strip()
    assert (laptop / "cards/acme-website.md").read_text() == accepted
    assert git(laptop, "for-each-ref", "refs/heads/gitmem").strip() == ""
    assert git(laptop, "rev-parse", f"refs/gitmem/partial/{SID}").strip() == there["tip"]
    # nothing stays pending anywhere, and the next syncs have nothing to say
    assert "up to date" in sync(laptop) and "up to date" in sync(desktop)


def test_a_rejection_on_b_reaches_a_and_lands_nothing(tmp_path: Path) -> None:
    bare, (laptop, desktop) = machines(tmp_path, ("laptop", "desktop"))
    produce(laptop)
    before = main_of(laptop)
    sync(laptop)
    sync(desktop)
    res = gm("-C", str(desktop), "review", SID, "--reject")
    assert res.code == 0, res.err
    sync(desktop)
    sync(laptop)
    assert SID not in listed(laptop) and SID not in listed(desktop)
    assert listed(laptop, "--all")[SID]["state"] == "rejected"
    assert main_of(laptop) == main_of(desktop) == before
    assert (laptop / "cards/acme-website.md").read_text() == CARD
    assert not [r for r in remote_refs(bare) if r.startswith("refs/heads/gitmem/")]


def test_two_machines_deciding_differently_the_first_wins_the_second_changes_nothing(
    tmp_path: Path,
) -> None:
    bare, (laptop, desktop, server) = machines(tmp_path, ("laptop", "desktop", "server"))
    produce(laptop)
    sync(laptop)
    sync(desktop)
    sync(server)
    assert gm("-C", str(desktop), "review", SID, "--accept").code == 0
    before = local_state(server)
    res = gm("-C", str(server), "review", SID, "--reject")
    assert res.code == 4
    assert res.err.strip().splitlines() == [
        f"gitmem: error: session {SID} was accepted on desktop first (origin); your decision "
        "(rejected) was not taken and nothing changed here"
    ]
    assert local_state(server) == before
    assert f"refs/gitmem/rejected/{SID}" not in remote_refs(bare)
    sync(desktop)
    sync(server)
    sync(laptop)
    for path in (laptop, desktop, server):
        assert SID not in listed(path)
        assert listed(path, "--all")[SID]["state"] == "accepted"
    assert main_of(laptop) == main_of(desktop) == main_of(server)
    assert "Owner: Bob" in (server / "cards/acme-website.md").read_text()


def test_a_session_id_another_clone_took_on_the_remote_is_not_called_pushed(
    tmp_path: Path,
) -> None:
    bare, (laptop, desktop) = machines(tmp_path, ("laptop", "desktop"))
    (desktop / "squat.txt").write_text("not a session\n")
    git(desktop, "add", "squat.txt")
    git(desktop, "commit", "-qm", "squat")
    git(desktop, "push", "-q", "origin", f"HEAD:{BRANCH}")
    produce(laptop)
    assert f"session {SID} differs on origin; it was not published" in sync(laptop)
    assert listed(laptop)[SID]["state"] == "pending"
    squat = git(bare, "rev-parse", BRANCH).strip()
    assert squat == git(desktop, "rev-parse", "HEAD").strip()


def test_the_producing_machine_deciding_its_own_published_session_tells_the_others(
    tmp_path: Path,
) -> None:
    bare, (laptop, desktop) = machines(tmp_path, ("laptop", "desktop"))
    produce(laptop)
    sync(laptop)
    sync(desktop)
    assert listed(laptop)[SID]["state"] == "pushed"
    assert gm("-C", str(laptop), "review", SID, "--accept").code == 0
    assert BRANCH not in remote_refs(bare)
    res = gm("-C", str(desktop), "review", SID, "--accept")  # desktop has not synced yet
    assert res.code == 4 and "was accepted on laptop first" in res.err
    sync(laptop)
    sync(desktop)
    assert SID not in listed(desktop) and main_of(desktop) == main_of(laptop)


def test_through_a_real_git_daemon(tmp_path: Path) -> None:
    with git_daemon(tmp_path) as port:
        _, (laptop, desktop) = machines(
            tmp_path, ("laptop", "desktop"), f"git://127.0.0.1:{port}/remote.git"
        )
        produce(laptop)
        sync(laptop)
        sync(desktop)
        assert listed(desktop)[SID]["state"] == "remote"
        commits = json.loads(gm("-C", str(desktop), "review", SID, "--json").out)["files"][0][
            "commits"
        ]
        res = gm("-C", str(desktop), "review", SID, "--accept", "--commit", str(commits[0]["sha"]))
        assert res.code == 0, res.err
        sync(desktop)
        sync(laptop)
        assert SID not in listed(laptop)
        assert listed(laptop, "--all")[SID]["state"] == "partial"
        assert main_of(laptop) == main_of(desktop)
        text = (laptop / "cards/acme-website.md").read_text()
        assert (
            "Budget: 40k" in text
            and "Owner: Ann" in text
            and not (laptop / "cards/beta.md").exists()
        )


def test_an_accepted_remote_session_is_this_clones_own_record(tmp_path: Path) -> None:
    _, (laptop, desktop) = machines(tmp_path, ("laptop", "desktop"))
    produce(laptop)
    sync(laptop)
    sync(desktop)
    assert gm("-C", str(desktop), "review", SID, "--accept").code == 0
    log = json.loads(gm("-C", str(desktop), "log", "--json").out)
    mine = [e for e in log if e.get("session") == SID]
    assert mine and all(e["own"] for e in mine)
    res = gm("-C", str(desktop), "revert", SID)
    assert res.code == 0, res.err
    assert (desktop / "cards/acme-website.md").read_text() == CARD


# -- a lost push race is retried ---------------------------------------------------
def test_a_push_lost_many_times_is_retried_with_growing_pauses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, (laptop, desktop) = machines(tmp_path, ("laptop", "desktop"))
    real = remote_mod.push_updates
    pauses: list[float] = []
    lost = {"n": 0}

    def losing(
        repo: MemoryRepo, name: str, updates: object, where: str | None = None
    ) -> remote_mod.Pushed:
        if lost["n"] < 7:  # another machine pushes first, seven times in a row
            lost["n"] += 1
            hand = laptop / f"cards/hand-{lost['n']}.md"
            hand.write_text(f"# Hand {lost['n']}\n")
            git(laptop, "add", str(hand))
            git(laptop, "commit", "-qm", f"hand {lost['n']}")
            git(laptop, "push", "-q", "origin", "main")
        return real(repo, name, updates, where)  # type: ignore[arg-type]

    monkeypatch.setattr(remote_mod, "push_updates", losing)
    monkeypatch.setattr(sync_mod, "_jitter", lambda lo, hi: hi)
    monkeypatch.setattr(sync_mod, "_sleep", pauses.append)
    (desktop / "cards/mine.md").write_text("# Mine\n")
    git(desktop, "add", "cards/mine.md")
    git(desktop, "commit", "-qm", "mine")
    res = gm("-C", str(desktop), "sync", "--json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["rounds"] == 8
    assert pauses == [min(sync_mod.BACKOFF_CAP, sync_mod.BACKOFF * 2**i) for i in range(1, 8)]
    assert main_of(desktop) == git(bare, "rev-parse", "main").strip()
    assert all((desktop / f"cards/hand-{i}.md").exists() for i in range(1, 8))


@pytest.mark.slow
def test_machines_writing_and_syncing_at_once_lose_nothing_and_converge(tmp_path: Path) -> None:
    """A small run of benchmarks/bench_team.py: 3 clones x 4 rounds of write + sync at once."""
    spec = importlib.util.spec_from_file_location("bench_team", BENCH / "bench_team.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_team"] = bench  # dataclasses look the module up by name
    spec.loader.exec_module(bench)
    figs = bench.load(tmp_path, 3, 4)
    assert figs.edits == 12 and figs.syncs == 12, figs.messages
    assert figs.lost == 0 and figs.remote_forward and figs.converged
    assert figs.refusals <= 1, figs.messages  # the goal: at most 1 in 20 syncs


# -- a decision stopped half-way -------------------------------------------------------
def _stop(*_: object, **__: object) -> None:
    raise KeyboardInterrupt  # the process is stopped here (Ctrl-C, a kill)


def test_a_decision_stopped_after_its_claim_is_finished_by_the_next_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, (laptop, desktop) = machines(tmp_path, ("laptop", "desktop"))
    produce(laptop)
    sync(laptop)
    sync(desktop)
    before = main_of(desktop)
    monkeypatch.setattr(decide, "land", _stop)
    res = gm("-C", str(desktop), "review", SID, "--accept", "--hunks", "1,4")
    assert res.code != 0
    monkeypatch.undo()
    assert f"refs/gitmem/partial/{SID}" in remote_refs(bare) and main_of(desktop) == before
    out = sync(desktop)
    assert f"finished the interrupted decision on {SID}" in out
    text = (desktop / "cards/acme-website.md").read_text()
    assert "Budget: 40k" in text and "Owner: Ann" in text and (desktop / "cards/beta.md").exists()
    assert SID not in listed(desktop) and listed(desktop, "--all")[SID]["state"] == "partial"
    sync(laptop)
    assert main_of(laptop) == main_of(desktop) and SID not in listed(laptop)
    assert not (desktop / ".git/gitmem/decisions" / f"{SID}.json").exists()


def test_a_decision_stopped_before_its_claim_is_undone_by_the_next_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, (laptop, desktop) = machines(tmp_path, ("laptop", "desktop"))
    produce(laptop)
    sync(laptop)
    sync(desktop)
    before = main_of(desktop)
    monkeypatch.setattr(team, "claim", _stop)
    assert gm("-C", str(desktop), "review", SID, "--reject").code != 0
    monkeypatch.undo()
    assert (desktop / ".git/gitmem/decisions" / f"{SID}.json").exists()
    sync(desktop)
    assert not (desktop / ".git/gitmem/decisions" / f"{SID}.json").exists()
    assert listed(desktop)[SID]["state"] == "remote" and main_of(desktop) == before
    assert BRANCH in remote_refs(bare)
    sync(laptop)
    assert listed(laptop)[SID]["state"] == "pushed"


# -- killed processes ------------------------------------------------------------------
GITMEM = str(Path(sys.executable).with_name("gitmem"))


def _killed(path: Path, delay: float, *args: str) -> None:
    """`gitmem ARGS` as a process, killed (SIGKILL) after ``delay`` seconds if still running."""
    proc = subprocess.Popen(
        [GITMEM, "-C", str(path), *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# Spread over the ~0.3 s a decision takes here: before the claim, between the claim and
# the landing (the intent file left behind), after; the sync after it is cut short too.
@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.12, 0.17, 0.2, 0.23, 0.26, 0.3])
def test_a_decision_and_a_sync_killed_anywhere_leave_the_machines_consistent(
    tmp_path: Path, delay: float
) -> None:
    bare, (laptop, desktop) = machines(tmp_path, ("laptop", "desktop"))
    produce(laptop)
    sync(laptop)
    sync(desktop)
    before = main_of(desktop)
    _killed(desktop, delay, "review", SID, "--accept", "--hunks", "1,4")
    _killed(desktop, delay, "sync")
    sync(desktop)
    claimed = f"refs/gitmem/partial/{SID}" in remote_refs(bare)
    text = (desktop / "cards/acme-website.md").read_text()
    if claimed:  # the decision reached the remote: it is finished here
        assert SID not in listed(desktop) and "Budget: 40k" in text and "Owner: Ann" in text
    else:  # it did not: nothing happened
        assert listed(desktop)[SID]["state"] == "remote" and main_of(desktop) == before
        assert BRANCH in remote_refs(bare)
    assert git(desktop, "status", "--porcelain") == ""
    sync(laptop)
    sync(desktop)
    assert main_of(laptop) == main_of(desktop) == git(bare, "rev-parse", "main").strip()
    assert (SID in listed(laptop)) == (not claimed)
    assert (laptop / "cards/acme-website.md").read_text() == text


def test_a_session_with_nothing_beyond_main_is_not_published(tmp_path: Path) -> None:
    bare, (laptop, _) = machines(tmp_path, ("laptop", "desktop"))
    with MemoryRepo(laptop) as repo:
        sessions.start_session(repo, SID)  # a session that has written nothing yet
    out = sync(laptop)
    assert "published" not in out and BRANCH not in remote_refs(bare)


# -- any order of syncs and decisions on three machines ------------------------------
ACTIONS = {
    "accept": ("--accept",),
    "reject": ("--reject",),
    "hunks": ("--accept", "--hunks", "1,4"),
}
STATE_OF = {"accept": "accepted", "reject": "rejected", "hunks": "partial"}


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(st.integers(0, 2), st.sampled_from(["sync", *ACTIONS])), min_size=1, max_size=6
    )
)
def test_any_order_of_syncs_and_decisions_ends_with_one_decision_everywhere(
    ops: list[tuple[int, str]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bare, clones = machines(Path(tmp), ("laptop", "desktop", "server"))
        produce(clones[0])
        taken: list[str] = []
        for who, op in ops:
            if op == "sync":
                sync(clones[who])
                continue
            res = gm("-C", str(clones[who]), "review", SID, *ACTIONS[op])
            assert res.code in (0, 2, 3, 4), res.err  # done, decided already, unknown here, refused
            if res.code == 0:
                taken.append(op)
        for path in clones + clones:
            sync(path)
        decisions = [
            r
            for r in remote_refs(bare)
            if r.endswith(f"/{SID}")
            and "/by/" not in r
            and "/from/" not in r
            and not r.startswith("refs/heads/")
        ]
        assert len(taken) == len(decisions) <= 1  # one decision or none, the same everywhere
        mains = {main_of(p) for p in clones}
        assert mains == {git(bare, "rev-parse", "main").strip()}
        text = (clones[0] / "cards/acme-website.md").read_text()
        for path in clones:
            assert (path / "cards/acme-website.md").read_text() == text
            if taken:
                assert SID not in listed(path)
                assert listed(path, "--all")[SID]["state"] == STATE_OF[taken[0]]
        if not taken:
            assert BRANCH in remote_refs(bare) and text == CARD
            assert listed(clones[0])[SID]["state"] == "pushed"
            assert {listed(p)[SID]["state"] for p in clones[1:]} == {"remote"}
        else:
            assert ("Budget: 40k" in text) == (taken[0] != "reject")
            assert ("Owner: Bob" in text) == (taken[0] == "accept")
            assert not [r for r in remote_refs(bare) if r.startswith("refs/heads/gitmem/")]


def test_a_session_pushed_to_a_forge_only_is_decided_here_alone(tmp_path: Path) -> None:
    _, (laptop, _) = machines(tmp_path, ("laptop", "desktop"))
    forge = tmp_path / "forge.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(forge))
    git(laptop, "remote", "add", "forge", str(forge))
    produce(laptop)
    assert gm("-C", str(laptop), "review", SID, "--push", "forge").code == 0
    assert gm("-C", str(laptop), "review", SID, "--reject").code == 0
    assert BRANCH in remote_refs(forge) and not [
        r for r in remote_refs(forge) if r.startswith("refs/gitmem/")
    ]
    assert listed(laptop, "--all")[SID]["state"] == "rejected"


def test_a_session_on_the_synced_remote_and_a_forge_is_claimed_on_the_synced_one(
    tmp_path: Path,
) -> None:
    bare, (laptop, desktop) = machines(tmp_path, ("laptop", "desktop"))
    forge = tmp_path / "forge.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(forge))
    git(laptop, "remote", "add", "forge", str(forge))
    produce(laptop)
    assert gm("-C", str(laptop), "review", SID, "--push", "forge").code == 0
    sync(laptop)
    sync(desktop)
    assert gm("-C", str(laptop), "review", SID, "--accept").code == 0
    assert BRANCH not in remote_refs(bare) and f"refs/gitmem/archive/{SID}" in remote_refs(bare)
    res = gm("-C", str(desktop), "review", SID, "--reject")
    assert res.code == 4 and "was accepted on laptop first" in res.err


def test_a_decision_on_a_remote_session_with_the_remote_unreachable_changes_nothing(
    tmp_path: Path,
) -> None:
    _, (laptop, desktop) = machines(tmp_path, ("laptop", "desktop"))
    produce(laptop)
    sync(laptop)
    sync(desktop)
    git(desktop, "remote", "set-url", "origin", f"git://127.0.0.1:{closed_port()}/remote.git")
    before = local_state(desktop)
    res = gm("-C", str(desktop), "review", SID, "--accept")
    assert res.code == 5 and len(res.err.strip().splitlines()) == 1 and "origin" in res.err
    after = local_state(desktop)
    intent = f".git/gitmem/decisions/{SID}.json"
    assert after.pop(intent, None) is not None  # kept: the next sync asks the remote
    assert after == before and listed(desktop)[SID]["state"] == "remote"
