"""Trees built in-process are byte-for-byte the trees git builds for the same files."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.memory.repo import MemoryRepo
from gitmem.setup.init import init_repo

from helpers import git

NAMES = ["a", "a-b", "a.b", "ab", "b", "cards", "z"]
paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join)
ops = st.lists(
    st.tuples(paths, st.one_of(st.none(), st.binary(max_size=8))), min_size=1, max_size=15
)


def git_tree(root: Path, tree: str, path: str, blob: str | None, index: str) -> str:
    env = {**os.environ, "GIT_INDEX_FILE": index}

    def run(*args: str) -> str:
        return (
            subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, check=True)
            .stdout.decode()
            .strip()
        )

    run("read-tree", tree)
    if blob is None:
        run("update-index", "--force-remove", "--", path)
    else:
        # a file where a folder was (or the reverse) replaces it, as in update_path
        listed = run("ls-files", "--", path).split("\n")
        for other in [p for p in listed if p and p != path]:
            run("update-index", "--force-remove", "--", other)
        for i in range(1, path.count("/") + 1):
            run("update-index", "--force-remove", "--", "/".join(path.split("/")[:i]))
        run("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    return run("write-tree")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops)
def test_update_path_matches_git(plan: list[tuple[str, bytes | None]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "c"
        init_repo(root)
        with MemoryRepo(root) as repo:
            tree = repo.store.resolve("HEAD^{tree}")
            assert tree is not None
            for path, data in plan:
                blob = repo.store.write("blob", data) if data is not None else None
                ours = repo.store.update_path(tree, path, blob) or repo.store.write_tree([])
                theirs = git_tree(root, tree, path, blob, str(Path(tmp) / "index"))
                assert ours == theirs, (path, data)
                tree = ours
            fsck = subprocess.run(
                ["git", "fsck", "--strict", "--no-dangling"],
                cwd=root,
                capture_output=True,
                check=False,
            )
            assert fsck.returncode == 0, fsck.stderr


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.text(alphabet=" \ta.é-", min_size=1, max_size=6).filter(lambda n: n not in (".", "..")),
    st.booleans(),
)
def test_read_answers_any_name_git_echoes_back(name: str, exists: bool) -> None:
    """``cat-file --batch`` repeats a missing name in its header: spaces and all."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "client"
        init_repo(root)
        if exists:
            (root / "cards" / name).write_bytes(b"x\n")
            subprocess.run(["git", "add", "--", f"cards/{name}"], cwd=root, check=True)
            subprocess.run(["git", "commit", "-qm", "x"], cwd=root, check=True)
        with MemoryRepo(root) as repo:
            for rev in (f"main:cards/{name}", f"{name} missing", name):
                got = repo.store.read(rev)
                if exists and rev.startswith("main:"):
                    assert got is not None and (got.kind, got.data) == ("blob", b"x\n")
                elif got is not None:  # a name git resolves anyway (a ref, a short sha)
                    assert got.kind in ("blob", "tree", "commit", "tag")
            assert repo.store.read_blob(f"main:cards/{name} x") is None
            assert repo.store.resolve("main") is not None  # the reader is still in step


def test_read_names_each_part_of_what_it_read(repo: MemoryRepo) -> None:
    """``read`` gives an object's id, kind and bytes by name, as git itself reports them."""
    root = repo.root
    blob = repo.store.write("blob", b"written by gitmem\n")
    for name in ("main", "main^{tree}", "main:gitmem.toml", blob):
        got = repo.store.read(name)
        assert got is not None
        sha = git(root, "rev-parse", "--verify", name).strip()
        kind = git(root, "cat-file", "-t", sha).strip()
        raw = subprocess.run(
            ["git", "cat-file", kind, sha], cwd=root, capture_output=True, check=True
        ).stdout
        assert (got.sha, got.kind, got.data) == (sha, kind, raw), name


def test_a_commit_reads_as_git_reads_it_a_signed_merge_too(repo: MemoryRepo) -> None:
    root = repo.root
    tip = git(root, "rev-parse", "main").strip()
    tree = git(root, "rev-parse", "main^{tree}").strip()
    who = "A U Thor <a@example.com> 1700000000 +0000"
    raw = (
        f"tree {tree}\nparent {tip}\nparent {tip}\nauthor {who}\ncommitter Other <o@x> 1 +0100\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n parent 0000\n -----END PGP SIGNATURE-----\n"
        "\nsubject\n\nbody: more\n"
    )
    sha = git(root, "hash-object", "-w", "-t", "commit", "--stdin", input=raw.encode()).strip()
    got = repo.store.read_commit(sha)
    shown = git(root, "show", "-s", "--format=%T%n%P", sha).split("\n")
    assert (got.sha, got.tree, " ".join(got.parents)) == (sha, shown[0], shown[1])
    assert got.parents == (tip, tip) and got.author == who
    assert got.committer == "Other <o@x> 1 +0100"
    assert got.message == "subject\n\nbody: more\n"


def test_resolved_all_answers_many_names_in_order_in_one_cat_file(repo: MemoryRepo) -> None:
    """Hundreds of names (more than one group of them) answered as ``resolved`` answers
    each, missing ones and a name with a newline as None, and the store still reads after."""
    root = repo.root
    blobs = [
        git(root, "hash-object", "-w", "--stdin", input=f"note {i}\n".encode()).strip()
        for i in range(600)
    ]
    names = [*blobs, "0" * 40, "nope\nHEAD", "HEAD:no/such/path", *blobs[:3]]
    started = repo.store._proc
    got = list(repo.store.resolved_all(names))
    assert [g.data if g else None for g in got] == [
        *(f"note {i}\n".encode() for i in range(600)),
        None,
        None,
        None,
        *(f"note {i}\n".encode() for i in range(3)),
    ]
    assert all(g.kind == "blob" for g in got if g)
    assert started is None or repo.store._proc is started  # one cat-file, not one per name
    assert repo.store.read_blob(blobs[7]) == b"note 7\n"
