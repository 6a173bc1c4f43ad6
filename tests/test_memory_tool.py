"""GitMemoryTool answers exactly as the SDK's BetaLocalFilesystemMemoryTool, one commit per change."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from anthropic.tools import BetaLocalFilesystemMemoryTool, ToolError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.create import init_repo
from gitmem.history import read_log
from gitmem.memory_tool import GitMemoryTool
from gitmem.repo import MemoryRepo

Outcome = tuple[str, str]

PATHS = [
    "/memories",
    "/memories/",
    "/memories/a.md",
    "/memories/b.md",
    "/memories/notes.txt",
    "/memories/d",
    "/memories/d/",
    "/memories/d/c.md",
    "/memories/d/e",
    "/memories/d/e/f.md",
    "/memories/d/e/g/h.md",
    "/memories/a.md/x.md",
    "/memories/d/../b.md",
    "/memories/./d/c.md",
    "/memoriesX.md",
    "/memories/.hidden.md",
]
PIECES = ["# T\n", "## Budget\n", "## Next steps\n", "a", "b", "\n", "\r\n", "é", "a b\n", "30k"]
text = st.lists(st.sampled_from(PIECES), max_size=6).map("".join)
needle = st.one_of(st.sampled_from(["a", "b", "\n", "## Budget", "a b", "é", "30k", ""]), text)
path = st.sampled_from(PATHS)
line = st.integers(-2, 9)
view_range = st.one_of(st.none(), st.lists(line, min_size=1, max_size=3))
command = st.one_of(
    st.builds(lambda p, r: {"command": "view", "path": p, "view_range": r}, path, view_range),
    st.builds(lambda p, t: {"command": "create", "path": p, "file_text": t}, path, text),
    st.builds(
        lambda p, o, n: {"command": "str_replace", "path": p, "old_str": o, "new_str": n},
        path,
        needle,
        text,
    ),
    st.builds(
        lambda p, n, t: {"command": "insert", "path": p, "insert_line": n, "insert_text": t},
        path,
        line,
        text,
    ),
    st.builds(lambda p: {"command": "delete", "path": p}, path),
    st.builds(lambda a, b: {"command": "rename", "old_path": a, "new_path": b}, path, path),
)


def outcome(tool: Any, cmd: object) -> Outcome:
    """What the tool runner would send back: the result, or the error text (repr otherwise)."""
    try:
        return ("ok", str(tool.call(cmd)))
    except ToolError as err:
        return ("error", str(err.content))
    except Exception as err:
        return ("error", repr(err))


def normalise(result: Outcome) -> Outcome:
    """Directory sizes come from the filesystem (4K on ext4); git has none to give."""
    kind, out = result
    if not out.startswith("Here're the files"):
        return result
    head, *rows = out.split("\n")
    fixed = [
        f"<dir>\t{p}" if i == 0 or p.endswith("/") else f"{s}\t{p}"
        for i, (s, p) in enumerate(r.split("\t", 1) for r in rows)
    ]
    return kind, "\n".join([head, *fixed])


def dirs_on_disk(root: Path) -> set[str]:
    return {d.relative_to(root).as_posix() for d in root.rglob("*") if d.is_dir()}


def tree_state(repo: MemoryRepo, branch: str) -> tuple[dict[str, bytes], set[str]]:
    """Files (without .gitkeep placeholders) and directories under cards/ on ``branch``."""
    listing = repo.git.out("ls-tree", "-r", "-z", "--name-only", branch, "--", "cards/")
    files, dirs = {}, set()
    for name in filter(None, listing.split("\0")):
        rel = name[len("cards/") :]
        parts = rel.split("/")
        dirs.update("/".join(parts[:i]) for i in range(1, len(parts)))
        if parts[-1] != ".gitkeep":
            files[rel] = repo.git.run("show", f"{branch}:{name}").stdout
    return files, dirs


def sdk_state(root: Path) -> tuple[dict[str, bytes], set[str]]:
    files = {f.relative_to(root).as_posix(): f.read_bytes() for f in root.rglob("*") if f.is_file()}
    return files, dirs_on_disk(root)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(command, min_size=1, max_size=14))
def test_same_results_and_files_as_the_sdk_tool(commands: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        init_repo(Path(tmp) / "client")
        sdk = BetaLocalFilesystemMemoryTool(str(Path(tmp) / "sdk"))
        disk = Path(tmp) / "sdk" / "memories"
        with MemoryRepo(Path(tmp) / "client") as repo:
            ours = GitMemoryTool(repo)  # a new session branch
            for cmd in commands:
                before_dirs, before_tip = dirs_on_disk(disk), repo.tip(ours.branch)
                theirs, mine = outcome(sdk, cmd), outcome(ours, cmd)
                assert normalise(mine) == normalise(theirs), cmd
                tip = repo.tip(ours.branch)
                if mine[0] == "error":
                    assert tip == before_tip, f"a failed {cmd} committed something"
                    # The SDK's rename makes the destination's parents before failing;
                    # a failed command commits nothing in git, so drop them here.
                    for new in sorted(dirs_on_disk(disk) - before_dirs, reverse=True):
                        (disk / new).rmdir()
                elif tip != before_tip:
                    assert cmd["command"] != "view"
                    (commit,) = read_log(repo.git, f"{before_tip}..{tip}")
                    assert commit.parents == (before_tip,)
                    assert commit.get("Gitmem-Actor") == "memory-tool"
            assert tree_state(repo, ours.branch) == sdk_state(disk)
