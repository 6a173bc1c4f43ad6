"""git's verdict on SSH-signed commits given in-process (``git/sshsig.py``): it is the
verdict git's own ``%G?`` gives, on real ssh-keygen keys, and git is asked whenever the
case is not one this decides (#33, verify of 10k commits <= 10 s)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gitmem.git import sshsig
from gitmem.git.objects import ObjectStore
from gitmem.git.runner import Git, Sha
from gitmem.git.signing import Signature, signatures, verdicts

from helpers import git, spy_git_processes

KINDS = {
    "ed25519": ["-t", "ed25519"],
    "rsa": ["-t", "rsa", "-b", "2048"],
    "ecdsa": ["-t", "ecdsa", "-b", "256"],
}


def _key(tmp: Path, name: str) -> tuple[Path, str]:
    path = tmp / f"{name}.key"
    kind = name.split("-")[0]
    subprocess.run(["ssh-keygen", "-q", *KINDS[kind], "-N", "", "-f", str(path)], check=True)
    return path, " ".join(Path(f"{path}.pub").read_text().split()[:2])


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "r"
    git(tmp_path, "init", "-q", "-b", "main", str(path))
    git(path, "config", "gpg.format", "ssh")
    git(path, "config", "gpg.ssh.allowedSignersFile", str(tmp_path / "allowed_signers"))
    return path


def _commit(path: Path, key: Path | None, text: str) -> Sha:
    (path / "card.md").write_text(text)
    git(path, "add", "card.md")
    sign = [f"-S{key}"] if key else ["--no-gpg-sign"]
    git(path, "commit", "-q", *sign, "-m", text)
    return Sha(git(path, "rev-parse", "HEAD").strip())


def _tampered(path: Path, sha: str) -> Sha:
    """The signed commit with its message changed, its signature kept."""
    raw = git(path, "cat-file", "commit", sha).replace("\n\nthree", "\n\nthree, edited")
    return Sha(
        git(path, "hash-object", "-t", "commit", "-w", "--stdin", input=raw.encode()).strip()
    )


def _both(path: Path, shas: list[Sha]) -> tuple[dict[Sha, Signature], dict[Sha, Signature]]:
    """(gitmem's verdicts, git's own %G? verdicts) on ``shas``."""
    g = Git(path)
    store = ObjectStore(g, path / ".git")
    settings = {
        k: v
        for k, _, v in (line.partition("=") for line in git(path, "config", "--list").splitlines())
        if k.startswith("gpg.")
    }
    try:
        ours = verdicts(store, shas, settings)
    finally:
        store.close()
    return ours, signatures(g, "--no-walk", stdin=shas)


def test_good_unknown_bad_and_unsigned_are_what_git_says(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = {name: _key(tmp_path, name) for name in ("ed25519", "rsa", "ecdsa", "ed25519-b")}
    (tmp_path / "allowed_signers").write_text(
        f'ann@example.com namespaces="git" {keys["ed25519"][1]}\n'
        f"rsa@example.com {keys['rsa'][1]} a comment\n"
        f'# a comment line\nec@example.com namespaces="git" {keys["ecdsa"][1]}\n'
    )
    shas = [
        _commit(repo, keys["ed25519"][0], "one"),
        _commit(repo, keys["rsa"][0], "two"),
        _commit(repo, keys["ecdsa"][0], "three"),
        _commit(repo, keys["ed25519-b"][0], "four"),  # a key the file does not name
        _commit(repo, None, "five"),
    ]
    shas.append(_tampered(repo, shas[2]))
    started = spy_git_processes(monkeypatch)
    ours, theirs = _both(repo, shas)
    assert ours == theirs
    assert started.count("log") == 2  # the tampered one (git says why), and git's own
    states = [ours[s].state for s in shas]
    assert states == ["trusted", "trusted", "trusted", "unknown", "unsigned", "bad"]
    assert ours[shas[0]].signer == "ann@example.com" and ours[shas[0]].key.startswith("SHA256:")


def test_the_signatures_that_hold_are_decided_without_ssh_keygen(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key, public = _key(tmp_path, "ed25519")
    (tmp_path / "allowed_signers").write_text(f"ann@example.com {public}\n")
    shas = [_commit(repo, key, text) for text in ("one", "two", "three")]
    bad = _tampered(repo, shas[2])
    started = spy_git_processes(monkeypatch)
    ours, theirs = _both(repo, [*shas, bad])
    assert ours == theirs and ours[bad].state == "bad"
    assert started.count("log") == 2  # git asked once for the bad one, once by the test


def test_a_removed_key_is_unknown_as_git_says(repo: Path, tmp_path: Path) -> None:
    (key, public), (_, other) = _key(tmp_path, "ed25519"), _key(tmp_path, "ed25519-b")
    signers = tmp_path / "allowed_signers"
    signers.write_text(f"ann@example.com {public}\nbob@example.com {other}\n")
    sha = _commit(repo, key, "one")
    assert _both(repo, [sha])[0][sha].state == "trusted"
    signers.write_text(f"bob@example.com {other}\n")
    ours, theirs = _both(repo, [sha])
    assert ours == theirs and ours[sha].state == "unknown"


@pytest.mark.parametrize(
    "line",
    [
        'ann@example.com namespaces="file" {key}',  # git says bad: not for git's namespace
        'ann@example.com valid-before="20000101" {key}',  # expired
        "ann@example.com cert-authority {key}",
        '"ann@example.com" {key}',
        "*@example.com {key}",
        "ann@example.com,bob@example.com {key}",
    ],
)
def test_a_file_with_more_than_plain_lines_leaves_the_verdict_to_git(
    repo: Path, tmp_path: Path, line: str
) -> None:
    key, public = _key(tmp_path, "ed25519")
    (tmp_path / "allowed_signers").write_text(line.format(key=public) + "\n")
    sha = _commit(repo, key, "one")
    settings = {"gpg.ssh.allowedsignersfile": str(tmp_path / "allowed_signers")}
    assert sshsig.signers(settings) is None
    ours, theirs = _both(repo, [sha])
    assert ours == theirs


def test_a_revocation_file_leaves_the_verdict_to_git(repo: Path, tmp_path: Path) -> None:
    key, public = _key(tmp_path, "ed25519")
    (tmp_path / "allowed_signers").write_text(f"ann@example.com {public}\n")
    sha = _commit(repo, key, "one")
    (tmp_path / "revoked").write_text(public + "\n")
    git(repo, "config", "gpg.ssh.revocationFile", str(tmp_path / "revoked"))
    ours, theirs = _both(repo, [sha])
    assert ours == theirs and ours[sha].state == "bad"  # ssh-keygen refuses a revoked key


def test_a_signature_is_split_from_its_commit_as_git_splits_it(repo: Path, tmp_path: Path) -> None:
    from gitmem.git.formats import signed_parts

    key, _ = _key(tmp_path, "ed25519")
    sha = _commit(repo, key, "one")
    raw = git(repo, "cat-file", "commit", sha).encode()
    payload, armored = signed_parts(raw, b"gpgsig") or (b"", b"")
    assert armored.startswith(sshsig.BEGIN) and armored.endswith(sshsig.END + b"\n")
    (tmp_path / "sig").write_bytes(armored)
    got = subprocess.run(
        ["ssh-keygen", "-Y", "check-novalidate", "-n", "git", "-s", str(tmp_path / "sig")],
        input=payload,
        capture_output=True,
        check=False,
    )
    assert got.returncode == 0, got.stderr
    assert signed_parts(payload, b"gpgsig") is None


def test_without_ssh_keygen_the_verdict_is_gits(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    key, public = _key(tmp_path, "ed25519")
    (tmp_path / "allowed_signers").write_text(f"ann@example.com {public}\n")
    sha = _commit(repo, key, "one")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git") or "git")
    monkeypatch.setenv("PATH", str(bin_dir))
    ours, theirs = _both(repo, [sha])
    assert ours == theirs and ours[sha].state != "trusted"  # git cannot check it here
