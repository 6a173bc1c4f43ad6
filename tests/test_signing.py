"""Every commit gitmem writes is signed by git with this clone's SSH key (#33, item 1)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gitmem.memory.repo import MemoryRepo
from gitmem.setup.clone import clone_repo
from gitmem.setup.init import init_repo
from gitmem.setup.signing import default_key

from helpers import git, gm

CARD = "# Acme\n\n## Budget\n40k\n"


@pytest.fixture(autouse=True)
def signing_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITMEM_SIGNING")


def _write(path: Path) -> None:
    res = gm(
        "-C", str(path), "write", "acme", "--old", "", "--new", CARD,
        "--section", "budget", "--keywords", "budget", "--summary", "budget 40k",
    )  # fmt: skip
    assert res.code == 0, res.err


def _states(path: Path) -> list[str]:
    return git(path, "log", "--format=%G? %s", "main").splitlines()


def test_init_signs_every_commit_and_commits_its_key(tmp_path: Path) -> None:
    init_repo(tmp_path / "acme")
    acme = tmp_path / "acme"
    _write(acme)
    assert _states(acme) == [
        "G acme: budget 40k",
        "G gitmem: signer person@example.com",
        "G gitmem: new memory for client acme",
    ]
    public = " ".join(Path(f"{default_key()}.pub").read_text().split()[:2])
    assert git(acme, "show", "main:allowed_signers").endswith(f"{public}\n")
    assert not str(default_key()).startswith(str(acme))  # the key lives outside the repo
    assert git(acme, "show", "--stat", "--format=", "main~1").split()[0] == "allowed_signers"
    assert git(acme, "status", "--porcelain") == ""


def test_a_clone_signs_with_its_own_key_and_trusts_the_remote_signers(tmp_path: Path) -> None:
    init_repo(tmp_path / "acme")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(tmp_path / "acme", "remote", "add", "origin", str(bare))
    assert gm("-C", str(tmp_path / "acme"), "sync").code == 0
    other = tmp_path / "other.key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    clone_repo(str(bare), tmp_path / "copy", signing_key=other)
    copy = tmp_path / "copy"
    _write(copy)
    assert [s.split()[0] for s in _states(copy)] == ["G", "G", "G", "G"]
    signers = git(copy, "show", "main:allowed_signers").splitlines()
    assert len(signers) == 2 and signers[1].endswith(
        other.with_suffix(".key.pub").read_text().split()[1]
    )


def test_signing_off_still_works_and_status_says_so_once(tmp_path: Path) -> None:
    init_repo(tmp_path / "acme")
    acme = tmp_path / "acme"
    toml = acme / "gitmem.toml"
    toml.write_text(toml.read_text().replace("enabled = true", "enabled = false"))
    git(acme, "commit", "-q", "--no-gpg-sign", "-am", "signing off")
    _write(acme)
    assert _states(acme)[0] == "N acme: budget 40k"
    res = gm("-C", str(acme), "status")
    assert res.code == 0 and res.out.count("Signing is off") == 1, res.out
    assert "signing.enabled is false" in res.out


def test_without_ssh_keygen_init_and_write_work_unsigned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    real = subprocess.run(["which", "git"], capture_output=True, text=True, check=True)
    (bin_dir / "git").symlink_to(real.stdout.strip())
    monkeypatch.setenv("PATH", str(bin_dir))
    init_repo(tmp_path / "acme")
    acme = tmp_path / "acme"
    _write(acme)
    with MemoryRepo(acme) as repo:
        assert repo.signing_key is None
    res = gm("-C", str(acme), "status")
    assert res.out.count("Signing is off: ssh-keygen is not installed") == 1, res.out
    assert not (acme / "allowed_signers").exists()


def test_this_machine_can_turn_signing_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITMEM_SIGNING", "off")
    init_repo(tmp_path / "acme")
    _write(tmp_path / "acme")
    assert [s.split()[0] for s in _states(tmp_path / "acme")] == ["N", "N"]
    res = gm("-C", str(tmp_path / "acme"), "status")
    assert "Signing is off: GITMEM_SIGNING=off in the environment" in res.out, res.out


def test_signatures_reads_each_commits_verdict_in_one_pass(tmp_path: Path) -> None:
    from gitmem.git.signing import signatures

    init_repo(tmp_path / "acme")
    acme = tmp_path / "acme"
    _write(acme)
    stranger = tmp_path / "stranger.key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)], check=True)
    git(acme, "commit", "-q", "--allow-empty", "-m", "by a stranger", f"-S{stranger}")
    git(acme, "commit", "-q", "--allow-empty", "--no-gpg-sign", "-m", "unsigned")
    repo = MemoryRepo(acme)
    got = signatures(repo.git, "main")
    order = git(acme, "log", "--format=%H", "main").split()
    assert [got[sha].state for sha in order] == [  # type: ignore[index]
        "unsigned", "unknown", "trusted", "trusted", "trusted",
    ]  # fmt: skip
    newest_trusted = got[order[2]]  # type: ignore[index]
    assert newest_trusted.signer == "person@example.com"
    assert newest_trusted.key.startswith("SHA256:")
    assert got[order[0]].key == ""  # type: ignore[index]


def test_gitmem_signs_as_ssh_keygen_would_and_git_agrees(tmp_path: Path) -> None:
    init_repo(tmp_path / "acme")
    acme = tmp_path / "acme"
    _write(acme)
    raw = git(acme, "cat-file", "commit", "main")
    head, _, message = raw.partition("\n\n")
    payload = "\n".join(ln for ln in head.split("\n") if not ln.startswith(("gpgsig", " ")))
    (tmp_path / "payload").write_text(f"{payload}\n\n{message}")
    key = str(default_key())
    subprocess.run(["ssh-keygen", "-q", "-Y", "sign", "-n", "git", "-f", key,
                    str(tmp_path / "payload")], check=True)  # fmt: skip
    made = (tmp_path / "payload.sig").read_text().rstrip("\n").replace("\n", "\n ")
    assert f"\ngpgsig {made}\n" in raw  # the very bytes ssh-keygen makes
    proc = subprocess.run(["git", "verify-commit", "main"], cwd=acme, capture_output=True)
    assert proc.returncode == 0 and b'Good "git" signature' in proc.stderr


def test_a_key_only_ssh_keygen_signs_with_is_signed_by_git(tmp_path: Path) -> None:
    rsa = tmp_path / "rsa"
    subprocess.run(["ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", str(rsa)],
                   check=True)  # fmt: skip
    res = gm("init", str(tmp_path / "acme"), "--signing-key", str(rsa))
    assert res.code == 0, res.err
    _write(tmp_path / "acme")
    assert _states(tmp_path / "acme")[0] == "G acme: budget 40k"
    assert "-----BEGIN SSH SIGNATURE-----" in git(tmp_path / "acme", "cat-file", "commit", "main")
