"""A remote whose gitmem.toml or persona.md this gitmem cannot read: the sync refuses it
before anything changes here, so every later command does not fail on it."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_sync import conflict, make_pair, state, sync

from helpers import git, gm


def _push(other: Path, name: str, data: bytes) -> None:
    (other / name).write_bytes(data)
    git(other, "add", name)
    git(other, "commit", "-qm", f"change {name}", "--no-verify")
    git(other, "push", "-q", "origin", "main")


@pytest.mark.parametrize(
    "name,change,said",
    [
        ("gitmem.toml", lambda t: t.replace(b"[client]", b"[client"), "not valid TOML"),
        ("gitmem.toml", lambda t: t.replace(b'review = "auto"', b'review = "bogus"'), "review"),
        ("persona.md", lambda t: b"\xff\xfe" + t, "not valid UTF-8"),
    ],
    ids=["broken TOML", "a bad value", "persona not UTF-8"],
)
def test_sync_refuses_settings_or_persona_it_cannot_read(
    tmp_path: Path, name: str, change: object, said: str
) -> None:
    _bare, laptop, desktop = make_pair(tmp_path)
    assert callable(change)
    _push(desktop, name, change((desktop / name).read_bytes()))
    before = state(laptop)
    code, _, err = sync(laptop)
    assert code == 6, err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"gitmem: error: origin/main brings a {name} ") and said in line
    assert line.endswith("; nothing was changed here")
    assert state(laptop) == before
    assert gm("-C", str(laptop), "status").code == 0  # this clone still works


@pytest.mark.parametrize(
    "data,said",
    [
        (b"# Ok\n\n## A\n\xffbad\n", "text that is not valid UTF-8"),
        (b"# Ok\n\n## A\nnul\x00byte\n", "a NUL byte"),
        (b"# Ok\n\n## A\n" + b"x" * 1_100_000 + b"\n", "over limits.max_card_bytes"),
    ],
    ids=["not UTF-8", "a NUL byte", "over the size limit"],
)
def test_sync_refuses_a_card_gitmem_would_never_write(
    tmp_path: Path, data: bytes, said: str
) -> None:
    _bare, laptop, desktop = make_pair(tmp_path)
    (desktop / "cards").mkdir(exist_ok=True)
    _push(desktop, "cards/ok.md", data)
    before = state(laptop)
    code, _, err = sync(laptop)
    assert code == 4, err
    (line,) = err.strip().splitlines()
    assert line.startswith("gitmem: error: origin/main brings cards/ok.md with ") and said in line
    assert state(laptop) == before


def test_continue_refuses_a_resolution_gitmem_would_never_write(tmp_path: Path) -> None:
    world = make_pair(tmp_path)
    _bare, _laptop, desktop = world
    conflict(world)
    assert sync(desktop)[0] == 4  # stopped at the conflict
    card = desktop / "cards" / "acme-website.md"
    card.write_bytes(b"# Acme\n\n## Budget\n\xff\x00bad\n")
    main = git(desktop, "rev-parse", "main")
    got = gm("-C", str(desktop), "sync", "--continue")
    assert got.code == 2 and got.err.count("\n") == 1, got.err
    assert got.err.startswith("gitmem: error: cards/acme-website.md now holds a NUL byte")
    assert git(desktop, "rev-parse", "main") == main  # nothing committed, nothing pushed
    assert (desktop / ".git/gitmem/sync-state.json").exists()  # still waiting for a fix
