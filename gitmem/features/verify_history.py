"""What ``gitmem verify`` checks besides each commit: the signers this clone trusts as
gitmem left them, no grafts or shallow cut, main still holding where gitmem last left it,
no replaced objects, and no remote's rewrite a sync refused."""

from __future__ import annotations

from gitmem.features.verify_places import VerifyFinding
from gitmem.memory import refs, trust
from gitmem.memory.repo import MAIN, MemoryRepo


def history(repo: MemoryRepo) -> list[VerifyFinding]:
    """A main that lost what gitmem last left it at; a remote's rewrite a sync refused."""
    found: list[VerifyFinding] = []
    seen = repo.store.resolve(refs.SEEN)
    if seen and not _contains(repo, MAIN, seen):
        found.append(
            VerifyFinding(
                "rolled-back",
                seen[:7],
                "",
                "main no longer contains this commit, where gitmem last left it "
                "(history rolled back or rewritten outside gitmem)",
                f"`git log --oneline main..{seen[:7]}` shows what went; "
                f"`git merge --ff-only {seen[:7]}` puts back a rollback; "
                f"`git update-ref {refs.SEEN} main` accepts one you made",
                seen,
            )
        )
    listed = repo.git.out(
        "for-each-ref", "--format=%(objectname) %(refname)", refs.SYNC, refs.REPLACE
    )
    for line in listed.splitlines():
        theirs, _, ref = line.partition(" ")
        if ref.startswith(refs.REPLACE):
            found.append(_replaced(ref.removeprefix(refs.REPLACE), theirs))
            continue
        remote = refs.rewritten_remote(ref)
        last = repo.store.resolve(refs.sync(remote, "last-synced")) if remote else None
        if remote and last and not _contains(repo, theirs, last):
            found.append(
                VerifyFinding(
                    "remote-rewritten",
                    theirs[:7],
                    "",
                    f"{remote}'s main was rewritten: it no longer contains {last[:7]}, "
                    "what was synced last (`gitmem sync` refused it)",
                    f"keep this history there with `git push --force-with-lease=main:{theirs} "
                    f"{remote} main`",
                    theirs,
                )
            )
    return found


def state(repo: MemoryRepo) -> list[VerifyFinding]:
    """The signers this clone trusts changed by hand; git told to show other parents
    (grafts) or to stop before the root (a shallow history): what git shows is not all."""
    found = []
    common = trust.trusted_path(repo.root).parent.parent
    if not repo.signers_sealed():
        path = trust.trusted_path(repo.root).relative_to(repo.root)
        found.append(
            VerifyFinding(
                "signers-changed",
                str(path),
                "",
                "the signers this clone trusts were changed outside gitmem, so no signature "
                "is trusted",
                f"`cat {path}` shows them; `gitmem trust signers` trusts them as they are",
                path=str(path),
            )
        )
    grafts = common / "info" / "grafts"
    if grafts.exists():
        found.append(
            VerifyFinding(
                "grafted",
                "info/grafts",
                "",
                "git is told to show commits with other parents than they have, so plain git "
                "shows a history gitmem did not write; gitmem reads the real one",
                f"`rm {grafts}` removes the grafts",
                path=str(grafts),
            )
        )
    shallow = common / "shallow"
    if shallow.exists():
        cut = ", ".join(s[:7] for s in shallow.read_text("ascii", "replace").split())
        found.append(
            VerifyFinding(
                "shallow",
                "shallow",
                "",
                f"history before {cut} is not in this clone, so it is not checked",
                "`git fetch --unshallow` brings it (a shallow file made by hand: remove it)",
                path=str(shallow),
            )
        )
    return found


def _replaced(original: str, replacement: str) -> VerifyFinding:
    problem = (
        f"git is told to show {replacement[:7]} in its place (`git replace`), so plain git "
        "shows text gitmem did not write; gitmem reads the original"
    )
    return VerifyFinding(
        "replaced-object",
        original[:7],
        "",
        problem,
        f"`git replace -d {original}` removes the replacement",
    )


def _contains(repo: MemoryRepo, tip: str, sha: str) -> bool:
    return repo.git.run("merge-base", "--is-ancestor", sha, tip, check=False).returncode == 0
