"""GitMemoryTool answers exactly as the SDK's BetaLocalFilesystemMemoryTool, one commit per change."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from anthropic.tools import BetaLocalFilesystemMemoryTool, ToolError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.bridges.memory_tool import GitMemoryTool
from gitmem.memory import path_rule
from gitmem.memory.repo import MemoryRepo
from gitmem.ops.history import read_log
from gitmem.setup.init import init_repo

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
    "/memories//d//e/..",
    "/memoriesX.md",
    "/memories/.hidden.md",
]
PIECES = ["# T\n", "## Budget\n", "## Next steps\n", "a", "b", "\n", "\r\n", "é", "a b\n", "30k"]
text = st.lists(st.sampled_from(PIECES), max_size=6).map("".join)
needle = st.one_of(st.sampled_from(["a", "b", "\n", "## Budget", "a b", "é", "30k", ""]), text)
# Names the SDK's tool takes as they are: spaces (one, several, leading, trailing), tabs,
# unicode, leading dots; and gitmem's own placeholder name, which the model never sees.
ODD_NAMES = [
    "sp ace.md",
    "a  b.md",
    " lead.md",
    "trail.md ",
    "tab\there.md",
    "\tt",
    "é.md",
    "日本 メモ.md",
    "e\u0301.md",
    ".hidden",
    ".d",
    "..x",
    "...",
    ".gitkeep",
    "d",
]
name = st.one_of(st.sampled_from(ODD_NAMES), st.text(alphabet=" \ta.é日-", min_size=1, max_size=4))
odd_path = st.lists(name, min_size=1, max_size=3).map(lambda ns: "/memories/" + "/".join(ns))
path = st.one_of(st.sampled_from(PATHS), odd_path)
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


def reserved(result: Outcome) -> bool:
    """gitmem's refusals where the SDK would go on: a .gitkeep, a name starting with '.',
    a name some system's git would refuse or read as its own, or one that is another's
    name on Windows and macOS (``gitmem.memory.path_rule``)."""
    kind, text = result
    return kind == "error" and " is not allowed: " in text


def dirs_on_disk(root: Path) -> set[str]:
    return {d.relative_to(root).as_posix() for d in root.rglob("*") if d.is_dir()}


def tree_state(repo: MemoryRepo, branch: str) -> tuple[dict[str, bytes], set[str]]:
    """Files (without .gitkeep placeholders) and directories under cards/ on ``branch``."""
    listing = repo.git.out("ls-tree", "-r", "-z", branch, "--", "cards/")
    files: dict[str, bytes] = {}
    dirs: set[str] = set()
    for row in filter(None, listing.split("\0")):
        meta, name = row.split("\t", 1)
        rel = name[len("cards/") :]
        parts = rel.split("/")
        dirs.update("/".join(parts[:i]) for i in range(1, len(parts)))
        if parts[-1] != ".gitkeep":
            files[rel] = repo.git.run("cat-file", "blob", meta.split()[2]).stdout
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
                mine = outcome(ours, cmd)
                tip = repo.tip(ours.branch)
                if reserved(mine):
                    # A .gitkeep made, any other dot name, or a name the path rule refuses is
                    # refused where the SDK goes on.
                    named = [cmd.get(k, "") for k in ("path", "old_path", "new_path")]
                    in_repo = ["cards" + p.removeprefix("/memories") for p in named]
                    assert (
                        any("/." in p for p in named)
                        or any(map(path_rule.path_problem, in_repo))
                        or "is the same name as" in mine[1]
                        or mine[1].startswith("view_range")
                    ), cmd
                    assert tip == before_tip
                    continue
                theirs = outcome(sdk, cmd)
                assert normalise(mine) == normalise(theirs), cmd
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


def side_by_side(repo: MemoryRepo, tmp_path: Path, commands: list[dict[str, Any]]) -> GitMemoryTool:
    """Run ``commands`` on both tools; every result and the files must be the same."""
    sdk = BetaLocalFilesystemMemoryTool(str(tmp_path / "sdk"))
    ours = GitMemoryTool(repo)
    for cmd in commands:
        before = refs(repo)
        theirs, mine = outcome(sdk, cmd), outcome(ours, cmd)
        assert normalise(mine) == normalise(theirs), cmd
        if mine[0] == "error":
            assert refs(repo) == before, cmd
    assert tree_state(repo, ours.branch) == sdk_state(tmp_path / "sdk" / "memories")
    return ours


def test_names_with_spaces_tabs_unicode_and_dots_work_like_the_sdk(
    repo: MemoryRepo, tmp_path: Path
) -> None:
    names = ["sp ace.md", "two  spaces.md", " lead", "日本 メモ.md", "mid.dot.md"]
    commands: list[dict[str, Any]] = []
    for n in names:
        commands += [
            {"command": "view", "path": f"/memories/{n}"},
            {"command": "create", "path": f"/memories/{n}", "file_text": "## Budget\n30k\n"},
            {"command": "create", "path": f"/memories/{n}", "file_text": "again"},
            {
                "command": "str_replace",
                "path": f"/memories/{n}",
                "old_str": "30k",
                "new_str": "40k",
            },
            {"command": "view", "path": f"/memories/{n}"},
            {"command": "rename", "old_path": f"/memories/{n}", "new_path": f"/memories/{n}.d/x y"},
        ]
    commands += [{"command": "view", "path": "/memories"}]
    commands += [{"command": "delete", "path": f"/memories/{n}.d"} for n in names[:3]]
    side_by_side(repo, tmp_path, commands)


def test_the_gitkeep_placeholder_is_invisible(repo: MemoryRepo, tmp_path: Path) -> None:
    assert git_show(repo, "main:cards/.gitkeep") == b""
    commands: list[dict[str, Any]] = [
        {"command": "view", "path": "/memories/.gitkeep"},
        {"command": "str_replace", "path": "/memories/.gitkeep", "old_str": "", "new_str": "x"},
        {"command": "insert", "path": "/memories/.gitkeep", "insert_line": 0, "insert_text": "x"},
        {"command": "rename", "old_path": "/memories/.gitkeep", "new_path": "/memories/k.md"},
        {"command": "delete", "path": "/memories/.gitkeep"},
        {"command": "create", "path": "/memories/d/e/f.md", "file_text": "f"},
        {"command": "delete", "path": "/memories/d/e/f.md"},  # d/e stays, empty: a .gitkeep
        {"command": "view", "path": "/memories/d/e"},
        {"command": "view", "path": "/memories/d/e/.gitkeep"},
        {"command": "delete", "path": "/memories/d/e/.gitkeep"},
        {"command": "rename", "old_path": "/memories/d", "new_path": "/memories/z"},
        {"command": "view", "path": "/memories/z/e/.gitkeep"},
        {"command": "view", "path": "/memories"},
        {"command": "delete", "path": "/memories/z"},
        {"command": "view", "path": "/memories"},
    ]
    ours = side_by_side(repo, tmp_path, commands)
    assert git_show(repo, f"{ours.branch}:cards/.gitkeep") == b""  # the root stays in git
    ours.call({"command": "create", "path": "/memories/f.md", "file_text": "f"})
    before = refs(repo)
    for cmd in [
        {"command": "create", "path": "/memories/.gitkeep", "file_text": "x"},
        {"command": "create", "path": "/memories/n/.gitkeep/x.md", "file_text": "x"},
        {"command": "rename", "old_path": "/memories/f.md", "new_path": "/memories/.gitkeep"},
    ]:
        kind, text = outcome(ours, cmd)
        assert kind == "error" and ".gitkeep is reserved by gitmem" in text, cmd
    assert refs(repo) == before


def test_a_dot_name_is_not_memory_so_no_gitattributes_can_be_made(repo: MemoryRepo) -> None:
    """git reads a .gitattributes anywhere in the tree (`*.md working-tree-encoding=UTF-16LE`
    would change how every card is stored): the tool makes, edits or moves no dot name."""
    tool = GitMemoryTool(repo, branch="main")
    tool.call({"command": "create", "path": "/memories/f.md", "file_text": "f"})
    attrs = "*.md working-tree-encoding=UTF-16LE\n"
    before = refs(repo)
    for cmd in [
        {"command": "create", "path": "/memories/.gitattributes", "file_text": attrs},
        {"command": "create", "path": "/memories/d/.gitignore", "file_text": "*\n"},
        {"command": "create", "path": "/memories/.d/x.md", "file_text": "x"},
        {"command": "rename", "old_path": "/memories/f.md", "new_path": "/memories/.gitattributes"},
        {"command": "view", "path": "/memories/.gitattributes"},
    ]:
        kind, text = outcome(tool, cmd)
        assert kind == "error" and "a name starting with '.' is not memory" in text, cmd
    assert refs(repo) == before
    assert repo.store.read("main:cards/.gitattributes") is None


# -- bad input: a clear error, nothing committed ------------------------------------
def refs(repo: MemoryRepo) -> str:
    return repo.git.out("for-each-ref", "--format=%(refname) %(objectname)")


CARD = "# Acme\n\n## Budget\n30k\n"
BAD = [
    (
        {"command": "view", "path": "/etc/passwd"},
        "Path must start with /memories, got: /etc/passwd",
    ),
    ({"command": "create", "path": "memories/x.md", "file_text": "x"}, "Path must start with"),
    (
        {"command": "create", "path": "/memories/../x.md", "file_text": "x"},
        "would escape /memories",
    ),
    ({"command": "view", "path": "/memories/d/../../../etc/passwd"}, "would escape /memories"),
    ({"command": "delete", "path": "/memories/.."}, "would escape /memories directory"),
    ({"command": "view", "path": "/memories/%2e%2e/x"}, "URL-encoded traversal"),
    ({"command": "create", "path": "/memories/%252e%252e/x", "file_text": "x"}, "URL-encoded"),
    ({"command": "delete", "path": "/memories/a%2f..%2f..%2fx"}, "URL-encoded traversal"),
    ({"command": "create", "path": "/memories/.git/config", "file_text": "x"}, "is not allowed"),
    *[
        ({"command": "create", "path": f"/memories/{name}", "file_text": "x"}, why)
        for name, why in [
            ("git~1/config", "git's own files"),
            ("GIT~1/config", "git's own files"),
            ("Git~2/x.md", "git's own files"),
            ("git~1 /config", "git's own files"),
            ("git~1./config", "git's own files"),
            ("sub/git~1/x", "git's own files"),
            ("gitmod~1/config", "git's own files"),
            ("\u200c.git/config", "git's own files"),
            ("\ufeff.git", "git's own files"),
            ("\u200d.GIT/x", "git's own files"),
            ("Acme.md", "the same name as 'acme.md'"),
            ("ACME.md", "the same name as 'acme.md'"),
            ("cafe\u0301.md", "not in Unicode NFC"),
            ("evil\u202egnp.md", "invisible or control character"),
            ("tab\there.md", "invisible or control character"),
            ("dot.md.", "ends with a dot or a space"),
            ("space.md ", "ends with a dot or a space"),
            ("CON", "Windows device name"),
            ("nul.md", "Windows device name"),
            ("com1.txt", "Windows device name"),
            ("a\\b.md", "Windows does not allow"),
            ("a:b.md", "Windows does not allow"),
            ("what?.md", "Windows does not allow"),
            ("acme.md/x.md", "where a card's file goes"),
        ]
    ],
    (
        {"command": "rename", "old_path": "/memories/acme.md", "new_path": "/memories/git~1/c"},
        "git's own files",
    ),
    (
        {"command": "rename", "old_path": "/memories/acme.md", "new_path": "/memories/Acme.md"},
        "the same name as 'acme.md'",
    ),
    ({"command": "create", "path": "/memories/a\0.md", "file_text": "x"}, "NUL byte"),
    ({"command": "create", "path": "/memories/n.md", "file_text": "bad \ud800"}, "not valid UTF-8"),
    (
        {
            "command": "str_replace",
            "path": "/memories/acme.md",
            "old_str": "30k",
            "new_str": "\udcff",
        },
        "not valid UTF-8",
    ),
    ({"command": "create", "path": "/memories/big.md", "file_text": "x" * 5000}, "over the limit"),
    (
        {
            "command": "str_replace",
            "path": "/memories/acme.md",
            "old_str": "30k",
            "new_str": "y" * 5000,
        },
        "limits.max_card_bytes",
    ),
    ({"command": "delete", "path": "/memories"}, "Cannot delete the /memories directory itself"),
    ({"command": "delete", "path": "/memories/x/.."}, "Cannot delete the /memories directory"),
    (
        {"command": "rename", "old_path": "/memories/", "new_path": "/memories/y"},
        "Cannot rename the /memories directory itself",
    ),
    ({"command": "view"}, "`path` is required for view and must be a string"),
    ({"command": "explode", "path": "/memories"}, "Unknown memory command 'explode'"),
    ("view /memories", "must be an object with a `command` field"),
    ({"command": "create", "path": "/memories/x.md", "file_text": 7}, "`file_text` is required"),
    (
        {"command": "insert", "path": "/memories/acme.md", "insert_line": "1", "insert_text": "x"},
        "integer",
    ),
    ({"command": "view", "path": "/memories/acme.md", "view_range": "1-2"}, "`view_range` must be"),
    ({"command": "view", "path": "/memories/acme.md", "view_range": [5, 2]}, "ends before it"),
]


def test_bad_input_is_a_clear_error_and_commits_nothing(repo: MemoryRepo) -> None:
    toml = repo.root / "gitmem.toml"
    toml.write_text(toml.read_text().replace("max_card_bytes = 1048576", "max_card_bytes = 4096"))
    tool = GitMemoryTool(repo, "main")
    tool.call({"command": "create", "path": "/memories/acme.md", "file_text": CARD})
    before = refs(repo)
    for cmd, message in BAD:
        try:
            tool.call(cmd)
        except ToolError as err:
            assert message in str(err), (cmd, str(err))
        else:
            raise AssertionError(f"{cmd} was accepted")
        assert refs(repo) == before, cmd
    assert git_show(repo, "main:cards/acme.md") == CARD.encode()


def git_show(repo: MemoryRepo, rev: str) -> bytes:
    return repo.git.run("show", rev).stdout


def put_files(root: Path, files: dict[str, bytes | str]) -> None:
    """Write files under ``root`` (symlinks when the value is ``str``: its target)."""
    for name, value in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(value, str):
            target.symlink_to(value)
        else:
            target.write_bytes(value)


def commit_by_hand(repo: MemoryRepo, files: dict[str, bytes | str]) -> None:
    """A person commits files (symlinks when the value is ``str``: its target)."""
    put_files(repo.root, files)
    repo.git.run("add", "--", *files)
    repo.git.run("commit", "-q", "-m", "by hand")


def test_symlinks_are_followed_inside_and_refused_outside_like_the_sdk(
    repo: MemoryRepo, tmp_path: Path
) -> None:
    links: dict[str, bytes | str] = {
        "cards/acme.md": b"# Acme\n",
        "cards/alias.md": "acme.md",
        "cards/out.md": "/etc/passwd",
        "cards/up": "../../..",
        "cards/loop": "loop",
    }
    commit_by_hand(repo, links)
    sdk = BetaLocalFilesystemMemoryTool(str(tmp_path / "sdk"))
    put_files(tmp_path / "sdk" / "memories", {n[len("cards/") :]: v for n, v in links.items()})
    ours = GitMemoryTool(repo)
    for cmd in [
        {"command": "view", "path": "/memories"},
        {"command": "view", "path": "/memories/alias.md"},
        {"command": "view", "path": "/memories/out.md"},
        {"command": "view", "path": "/memories/up/etc/passwd"},
        {"command": "create", "path": "/memories/up/evil.md", "file_text": "x"},
        {"command": "str_replace", "path": "/memories/out.md", "old_str": "root", "new_str": "x"},
        {"command": "rename", "old_path": "/memories/acme.md", "new_path": "/memories/up/x"},
        {"command": "delete", "path": "/memories/out.md"},
    ]:
        before = refs(repo)
        theirs, mine = outcome(sdk, cmd), outcome(ours, cmd)
        assert normalise(mine) == normalise(theirs), cmd
        if mine[0] == "error":
            assert refs(repo) == before, cmd
    assert "escape" in outcome(ours, {"command": "view", "path": "/memories/out.md"})[1]


def test_a_file_that_is_not_utf8_is_refused_clearly(repo: MemoryRepo) -> None:
    commit_by_hand(repo, {"cards/raw.md": b"caf\xe9\n"})
    tool = GitMemoryTool(repo, "main")
    before = refs(repo)
    for cmd in [
        {"command": "view", "path": "/memories/raw.md"},
        {"command": "insert", "path": "/memories/raw.md", "insert_line": 0, "insert_text": "x"},
    ]:
        assert outcome(tool, cmd) == (
            "error",
            "The file /memories/raw.md is not valid UTF-8 text; the memory tool reads only text files.",
        )
    assert refs(repo) == before


# -- the index stays a pure function of history ----------------------------------------
CARDS = [
    "/memories/alpha.md",
    "/memories/beta.md",
    "/memories/notes/x.md",
    "/memories/Not A Card.md",
]
BODIES = ["# Alpha\n\n## Budget\n30k\n", "## Budget\nx\n## People\nbob\n", "plain text\n", ""]
card = st.sampled_from(CARDS)
tool_step = st.one_of(
    st.builds(
        lambda p, t: {"command": "create", "path": p, "file_text": t}, card, st.sampled_from(BODIES)
    ),
    st.builds(
        lambda p, o, n: {"command": "str_replace", "path": p, "old_str": o, "new_str": n},
        card,
        st.sampled_from(["30k", "## Budget", "bob", "x"]),
        st.sampled_from(["40k", "## Money", "## People\nalice", "## Risks\nnone"]),
    ),
    st.builds(
        lambda p, n: {
            "command": "insert",
            "path": p,
            "insert_line": n,
            "insert_text": "## Later\nmore",
        },
        card,
        st.integers(0, 4),
    ),
    st.builds(lambda p: {"command": "delete", "path": p}, card),
    st.builds(lambda a, b: {"command": "rename", "old_path": a, "new_path": b}, card, card),
)
agent_step = st.tuples(st.sampled_from(["alpha", "beta"]), st.sampled_from(["budget", "people"]))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.one_of(tool_step, agent_step), min_size=1, max_size=12))
def test_incremental_index_equals_rebuild_after_memory_tool_commits(steps: list[Any]) -> None:
    from gitmem.agent.tools import MemoryTools
    from gitmem.index import build as index

    with tempfile.TemporaryDirectory() as tmp:
        init_repo(Path(tmp) / "c")
        with MemoryRepo(Path(tmp) / "c") as repo:
            tool = GitMemoryTool(repo)
            agent = MemoryTools(repo, branch=tool.branch, session=tool.session_id)
            for step in steps:
                if isinstance(step, dict):
                    outcome(tool, step)
                else:  # an agent write that describes a section (it may fail: fine)
                    project, section = step
                    entry = {"section_id": section, "keywords": ["k"], "summary": f"{section} set"}
                    agent.call(
                        "write_memory_card",
                        {
                            "project": project,
                            "old_text": "",
                            "new_text": "## Budget\nagent\n",
                            "index_entry": entry,
                        },
                    )
                incremental = index.refresh(repo, tool.branch)
                assert incremental == index.resolve(repo, index.replay_all(repo, tool.branch))
            rebuilt, cached = index.rebuild(repo, tool.branch)
            assert cached == rebuilt
            tool.finish()
            assert index.refresh(repo) == index.rebuild(repo)[0]


def test_memory_tool_entries_come_from_headings_and_stay_unindexed(repo: MemoryRepo) -> None:
    from gitmem.agent.tools import MemoryTools
    from gitmem.features.revert import revert_commit
    from gitmem.index import build as index

    agent = MemoryTools(repo, actor="agent")

    def write(old: str, new: str, summary: str) -> None:
        entry = {"section_id": "budget", "keywords": ["money"], "summary": summary}
        args = {"project": "acme", "old_text": old, "new_text": new, "index_entry": entry}
        assert not agent.call("write_memory_card", args).is_error

    write("", "## Budget\n30k\n\n## People\nbob\n", "Budget is 30k")
    tool = GitMemoryTool(repo, "main")
    tool.call(
        {"command": "str_replace", "path": "/memories/acme.md", "old_str": "bob", "new_str": "al"}
    )
    tool.call(
        {
            "command": "insert",
            "path": "/memories/acme.md",
            "insert_line": 5,
            "insert_text": "## Next Risks",
        }
    )
    text = index.refresh(repo).render()
    assert "- budget: Budget is 30k [money]" in text
    assert "- people: (unindexed) People [people]" in text
    assert "- next-risks: (unindexed) Next Risks [next, risks]" in text
    log = read_log(repo.git, "main", max_count=2)
    assert [c.subject for c in log] == [
        "acme: memory insert § next-risks",
        "acme: memory str_replace § people",
    ]
    assert [(c.get("Gitmem-Section"), c.get("Gitmem-Keywords")) for c in log] == [
        ("next-risks", "next, risks"),
        ("people", "people"),
    ]
    for c in log:
        assert c.get("Gitmem-Card") == "acme" and c.get("Gitmem-Actor") == "memory-tool"
        assert c.get("Gitmem-Summary") is None
    # A memory-tool edit of a summarised section leaves its old summary behind (it may be
    # stale now): the section is unindexed; reverting that edit brings the summary back.
    tool.call(
        {"command": "str_replace", "path": "/memories/acme.md", "old_str": "30k", "new_str": "35k"}
    )
    assert "- budget: (unindexed) Budget [budget]" in index.refresh(repo).render()
    revert_commit(repo, read_log(repo.git, "main", max_count=1)[0].sha)
    assert "- budget: Budget is 30k [money]" in index.refresh(repo).render()
    assert index.refresh(repo) == index.rebuild(repo)[0]


# -- a tool_runner conversation against the fake Messages API --------------------------
def test_tool_runner_conversation_commits_each_change(repo: MemoryRepo, tmp_path: Path) -> None:
    import anthropic

    from gitmem.fakeapi import FakeAnthropicServer, QueueModel, Reply

    calls = [
        {"command": "view", "path": "/memories"},
        {
            "command": "create",
            "path": "/memories/acme.md",
            "file_text": "# Acme\n\n## Budget\n30k\n",
        },
        {"command": "str_replace", "path": "/memories/acme.md", "old_str": "30k", "new_str": "40k"},
        {"command": "delete", "path": "/memories"},
    ]
    model = QueueModel([*(Reply.tool_use("memory", c) for c in calls), "Noted: the budget is 40k."])
    sdk = BetaLocalFilesystemMemoryTool(str(tmp_path / "sdk"))
    expected = [outcome(sdk, c) for c in calls]
    with FakeAnthropicServer(model) as server, GitMemoryTool(repo.root) as tool:
        client = anthropic.Anthropic(api_key="test", base_url=server.base_url, max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-sonnet-5-5",
            max_tokens=1024,
            tools=[tool],
            messages=[{"role": "user", "content": "Remember: the Acme budget is now 40k."}],
        )
        final = runner.until_done()
        session = tool.session_id
        client.close()
    assert final.content[0].type == "text" and final.content[0].text == "Noted: the budget is 40k."
    assert model.seen[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    for request, (kind, text) in zip(model.seen[1:], expected, strict=True):
        (result,) = request["messages"][-1]["content"]
        assert result["type"] == "tool_result"
        assert result["content"] == text and bool(result.get("is_error")) == (kind == "error")
    # The session ended with the runner (auto review): its two commits are on main.
    log = read_log(repo.git, "main", max_count=2)
    assert [c.subject for c in log] == [
        "acme: memory str_replace § budget",
        "acme: memory create § budget",
    ]
    assert all(c.get("Gitmem-Session") == session for c in log)
    assert git_show(repo, "main:cards/acme.md") == b"# Acme\n\n## Budget\n40k\n"


def test_a_concurrent_writer_is_never_overwritten(repo: MemoryRepo, monkeypatch: Any) -> None:
    """The branch moves between planning and the compare-and-swap: plan again on the new tip."""
    from gitmem.bridges import memory_tool_paths

    mine, other = GitMemoryTool(repo), None
    other = GitMemoryTool(repo, mine.branch)
    other.call({"command": "create", "path": "/memories/acme.md", "file_text": "a\nb\n"})
    real = memory_tool_paths.Snapshot.changes
    raced: list[str] = []

    def racing(self: Any, after: Any, removed: Any) -> Any:
        if not raced:  # someone else commits right after our plan
            raced.append("once")
            cmd = {"command": "insert", "path": "/memories/acme.md", "insert_line": 0}
            other.call({**cmd, "insert_text": "first"})
        return real(self, after, removed)

    monkeypatch.setattr(memory_tool_paths.Snapshot, "changes", racing)
    result = mine.call(
        {"command": "str_replace", "path": "/memories/acme.md", "old_str": "b", "new_str": "B"}
    )
    assert raced and result.endswith("     3\tB\n     4\t")  # the snippet of the re-planned edit
    assert git_show(repo, f"{mine.branch}:cards/acme.md") == b"first\na\nB\n"
    assert len(read_log(repo.git, f"main..{mine.branch}")) == 3


def test_on_checked_out_main_a_file_may_replace_a_deleted_directory(repo: MemoryRepo) -> None:
    tool = GitMemoryTool(repo, "main")
    tool.call({"command": "create", "path": "/memories/d/c.md", "file_text": "c"})
    tool.call({"command": "delete", "path": "/memories/d"})
    tool.call({"command": "create", "path": "/memories/d", "file_text": "now a file"})
    assert (repo.root / "cards" / "d").read_text() == "now a file"


# -- names git keeps for itself on other systems -------------------------------------
GIT_OWN_NAMES = [
    "git~1/config",
    "GIT~1/config",
    "Git~1/config",
    "git~1 /config",
    "git~1./config",
    "sub/git~1/x",
    "\u200c.git/config",
    "\u200d.git",
    "\ufeff.git",
    "\u200c.GIT",
    "gitmod~1/config",
    "a\u202eb.md",
    "notes.md.",
    "notes.md ",
    "CON",
    "nul.md",
    "com1.txt",
    "a\\b.md",
    "a:b.md",
]


def test_a_name_git_keeps_for_itself_on_any_system_is_refused(repo: MemoryRepo) -> None:
    """`create /memories/git~1/config` once made every later command fail: git refuses to
    check out a tree holding a name NTFS or HFS+ reads as `.git`. Such names never land."""
    tool = GitMemoryTool(repo, branch="main")
    tool.call({"command": "create", "path": "/memories/f.md", "file_text": "f"})
    before = refs(repo)
    for name in GIT_OWN_NAMES:
        for cmd in [
            {"command": "create", "path": f"/memories/{name}", "file_text": "[core]\n"},
            {"command": "rename", "old_path": "/memories/f.md", "new_path": f"/memories/{name}"},
        ]:
            kind, text = outcome(tool, cmd)
            assert kind == "error" and "is not allowed" in text, (name, text)
    assert refs(repo) == before


_GIT_WORD = st.builds(
    lambda pre, word, post, upper: pre + (word.upper() if upper else word) + post,
    st.sampled_from(["", "\u200c", "\u200d", "\ufeff", "\u202e"]),
    st.sampled_from(["git~1", ".git", "gitmod~1", ".gitmodules", "con", "nul.md", "notes.md"]),
    st.sampled_from(["", " ", ".", ". "]),
    st.booleans(),
)
_PART = st.one_of(
    _GIT_WORD,
    st.text(st.characters(codec="utf-8", exclude_characters="/\0"), min_size=1, max_size=12),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(parts=st.lists(_PART, min_size=1, max_size=3))
def test_every_path_the_tool_accepts_checks_out_on_every_system(
    repo: MemoryRepo, parts: list[str]
) -> None:
    """Whatever path the tool accepts, git checks the tree out with its Windows and macOS
    protections on and `git fsck --strict` finds nothing wrong."""
    tool = GitMemoryTool(repo, branch="main")
    path = "/memories/" + "/".join(parts)
    kind, _ = outcome(tool, {"command": "create", "path": path, "file_text": "x"})
    if kind == "error":
        return
    protect = ["-c", "core.protectNTFS=true", "-c", "core.protectHFS=true"]
    repo.git.out(*protect, "read-tree", "main")
    repo.git.out("fsck", "--strict", "--no-dangling")
