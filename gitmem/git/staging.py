"""What git's staging area (``.git/index``) holds for a path, as git itself reads it."""

from __future__ import annotations

from gitmem.git.runner import Git, Sha


def staged(git: Git, path: str) -> list[tuple[int, Sha]]:
    """[(stage, sha), ...] of ``path`` in the staging area ([] when it is not there)."""
    return [(stage, sha) for stage, _mode, sha in staged_modes(git, path)]


def staged_modes(git: Git, path: str) -> list[tuple[int, bytes, Sha]]:
    """[(stage, mode, sha), ...] of ``path`` in the staging area."""
    out = git.run(
        "--no-optional-locks", "--literal-pathspecs", "ls-files", "--stage", "-z", "--", path
    ).stdout
    want = path.encode("utf-8", "surrogateescape")
    found = []
    for item in out.split(b"\0"):
        info, _, name = item.partition(b"\t")
        if name == want:  # (a folder's pathspec lists the files below it)
            mode, sha, stage = info.split(b" ")
            found.append((int(stage), mode, Sha(sha.decode())))
    return found
