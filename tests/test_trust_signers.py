"""Trusting a new signer is a decision (#33, item 2): a key a remote's allowed_signers adds is
held until `gitmem trust signers`; a key it removes is no longer trusted at once. Two
clones, a bare remote, real keys."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gitmem.setup.clone import clone_repo
from gitmem.setup.init import init_repo

from helpers import git, gm

CARD = "# Acme\n\n## Budget\n40k\n"


@pytest.fixture(autouse=True)
def signing_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITMEM_SIGNING")


def _write(path: Path, old: str, new: str) -> None:
    res = gm(
        "-C", str(path), "write", "acme", "--old", old, "--new", new,
        "--section", "budget", "--keywords", "budget", "--summary", f"budget {new.split()[-1]}",
    )  # fmt: skip
    assert res.code == 0, res.err


def _trusted(path: Path) -> str:
    return (path / ".git" / "gitmem" / "allowed_signers").read_text()


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path, str]:
    """laptop (this machine's key) and desktop (its own key), both on one bare remote;
    desktop has written an edit and synced. Returns them and desktop's public key."""
    laptop, desktop, bare = tmp_path / "laptop", tmp_path / "desktop", tmp_path / "remote.git"
    init_repo(laptop)
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(laptop, "remote", "add", "origin", str(bare))
    assert gm("-C", str(laptop), "sync").code == 0
    key = tmp_path / "desktop.key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    clone_repo(str(bare), desktop, signing_key=key)
    _write(desktop, "", CARD)
    assert gm("-C", str(desktop), "sync").code == 0
    return laptop, desktop, Path(f"{key}.pub").read_text().split()[1]


def test_a_remotes_new_signer_is_held_until_trusted(pair: tuple[Path, Path, str]) -> None:
    laptop, _desktop, public = pair
    res = gm("-C", str(laptop), "sync")
    assert res.code == 0, res.err
    assert "origin's allowed_signers adds 1 signer, held: their commits do not verify" in res.out
    assert f'person@example.com namespaces="git" ssh-ed25519 {public}' in res.out
    assert public not in _trusted(laptop)  # held: git does not trust it here
    tip = git(laptop, "rev-parse", "--short=7", "main").strip()
    assert (
        "Signers held on this machine: 1 key that origin's allowed_signers "
        f"({tip}) adds; their commits do not verify until `gitmem trust signers`"
    ) in gm("-C", str(laptop), "status").out
    res = gm("-C", str(laptop), "verify")
    assert res.code == 1
    lines = res.out.splitlines()[:-1]
    assert len(lines) == 2 and all(
        "signed by a key this clone does not trust (SHA256:" in line
        and line.endswith(
            "a sync holds the signers origin added: `gitmem trust signers` if you trust them"
        )
        for line in lines
    ), lines
    res = gm("-C", str(laptop), "trust", "signers", "--json")
    assert res.code == 0, res.err
    [accepted] = json.loads(res.out)["accepted"]
    assert accepted["key"] == "signers" and accepted["remote"] == "origin"
    assert public in _trusted(laptop)
    res = gm("-C", str(laptop), "verify")
    assert (res.code, res.out.split(":")[0]) == (0, "verified"), res.out
    assert gm("-C", str(laptop), "trust", "signers").out.startswith("nothing is held")


def test_the_trust_command_names_the_keys_it_trusts(pair: tuple[Path, Path, str]) -> None:
    laptop, _desktop, public = pair
    assert gm("-C", str(laptop), "sync").code == 0
    res = gm("-C", str(laptop), "trust")
    tip = git(laptop, "rev-parse", "--short=7", "main").strip()
    assert res.out == (
        f"trusted now, from origin's allowed_signers at {tip}:\n"
        f'  person@example.com namespaces="git" ssh-ed25519 {public}\n'
    )


def test_a_removed_signer_is_no_longer_trusted_at_once(pair: tuple[Path, Path, str]) -> None:
    laptop, desktop, public = pair
    assert gm("-C", str(laptop), "sync").code == 0
    assert gm("-C", str(laptop), "trust", "signers").code == 0
    signers = (desktop / "allowed_signers").read_text().splitlines(keepends=True)
    (desktop / "allowed_signers").write_text("".join(s for s in signers if public not in s))
    git(desktop, "commit", "-q", "-am", "drop the desktop key")
    assert gm("-C", str(desktop), "sync").code == 0
    res = gm("-C", str(laptop), "sync")
    assert res.code == 0 and "held" not in res.out, res.out
    assert public not in _trusted(laptop) and len(_trusted(laptop).splitlines()) == 1
    res = gm("-C", str(laptop), "verify")
    assert res.code == 1 and "does not trust" in res.out
    assert gm("-C", str(laptop), "trust", "signers").out.startswith("nothing is held")


def test_trust_names_signers_among_what_it_can_accept(client: Path) -> None:
    res = gm("-C", str(client), "trust", "nosuch")
    assert res.code == 2
    assert (
        "memory.review, secrets.allow, limits.max_edit_bytes, limits.max_card_bytes, signers"
        in (res.err)
    )
