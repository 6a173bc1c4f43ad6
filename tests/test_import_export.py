"""`gitmem import SOURCE` and `gitmem export DIR`: every source kind, the plan, clashes,
hostile inputs, one commit per card with its trailers, and the round trip."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from anthropic.tools import BetaLocalFilesystemMemoryTool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.bridges import import_notes as importing
from gitmem.bridges.export import cards_of
from gitmem.bridges.import_claude import auto_memory_dir, references
from gitmem.bridges.import_sources import Note
from gitmem.bridges.memory_tool import GitMemoryTool
from gitmem.git.objects import ObjectStore
from gitmem.git.runner import Git, Sha
from gitmem.memory.repo import MemoryRepo

from helpers import git, gm, index_summaries, snapshot


def _write(root: Path, files: Mapping[str, str | bytes]) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return root


def _trailers(root: Path, rev: str) -> list[tuple[str, str]]:
    """The commit's trailers as `git interpret-trailers --parse` reads them."""
    body = git(root, "log", "-1", "--format=%B", rev)
    parsed = subprocess.run(
        ["git", "interpret-trailers", "--parse"],
        input=body.encode(),
        capture_output=True,
        check=True,
        cwd=root,
    ).stdout.decode()
    return [(k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in parsed.splitlines())]


def _imported(root: Path) -> dict[str, list[tuple[str, str]]]:
    """card -> trailers of each commit the import made (main's history after init)."""
    shas = git(root, "rev-list", "--reverse", "main").split()[1:]
    out = {}
    for sha in shas:
        pairs = _trailers(root, sha)
        out[dict(pairs)["Gitmem-Card"]] = pairs
    return out


NOTES = {
    "acme.md": "# Acme website\n\nIntro line.\n\n## Budget\nQ3 budget: 30k\n\n## Next steps\nCall Dana\n",
    "ideas.md": "Loose thoughts with no headings at all.\n",
    "work/Weekly Review.md": "# Weekly review\r\n\r\n## Done\r\nshipped\r\n",
}


def test_markdown_folder_one_commit_per_card_each_section_indexed_without_summary(
    client: Path, tmp_path: Path
) -> None:
    src = _write(tmp_path / "notes", NOTES)
    res = gm("-C", str(client), "import", str(src), "--json")
    assert res.code == 0, res.err
    refs = git(client, "for-each-ref", "--format=%(refname)").split()
    assert refs == ["refs/gitmem/seen/main", "refs/heads/main"]  # no ref of the writing left
    out = json.loads(res.out)
    assert out["kind"] == "markdown" and out["problems"] == []
    assert {c["card"]: c["sections"] for c in out["cards"]} == {
        "acme": ["budget", "next-steps"],
        "ideas": ["ideas"],
        "weekly-review": ["done"],
    }
    commits = _imported(client)
    assert len(commits) == 3 == len(out["commits"])
    assert commits["acme"] == [
        ("Gitmem-Card", "acme"),
        ("Gitmem-Section", "budget"),
        ("Gitmem-Keywords", "budget"),
        ("Gitmem-Section", "next-steps"),
        ("Gitmem-Keywords", "next, steps"),
        ("Gitmem-Actor", "import"),
    ]
    assert all(("Gitmem-Actor", "import") in t for t in commits.values())
    assert not any(k == "Gitmem-Summary" for t in commits.values() for k, _ in t)
    assert (client / "cards/ideas.md").read_text() == (
        "# ideas\n\n## ideas\n\nLoose thoughts with no headings at all.\n"
    )
    assert (
        client / "cards/weekly-review.md"
    ).read_text() == "# Weekly review\n\n## Done\nshipped\n"
    with MemoryRepo(client) as repo:  # incremental index == full replay, all unindexed
        summaries = index_summaries(repo)
    assert summaries == {
        "acme/budget": None,
        "acme/next-steps": None,
        "ideas/ideas": None,
        "weekly-review/done": None,
    }
    index = gm("-C", str(client), "index").out
    assert "- next-steps: (unindexed) Next steps [next, steps]" in index
    assert "- ideas: (unindexed) ideas [ideas]" in index
    assert gm("-C", str(client), "reindex").code == 0
    assert git(client, "status", "--porcelain") == ""


def test_a_summary_written_later_indexes_an_imported_section(client: Path, tmp_path: Path) -> None:
    src = _write(tmp_path / "notes", {"acme.md": NOTES["acme.md"]})
    assert gm("-C", str(client), "import", str(src)).code == 0
    res = gm(
        "-C",
        str(client),
        "write",
        "acme",
        "--old",
        "30k",
        "--new",
        "40k",
        "--section",
        "budget",
        "--keywords",
        "budget",
        "--summary",
        "Q3 budget is 40k",
    )
    assert res.code == 0, res.err
    index = gm("-C", str(client), "index").out
    assert "- budget: Q3 budget is 40k [budget]" in index
    assert "- next-steps: (unindexed) Next steps [next, steps]" in index


def _claude_project(tmp_path: Path, home: Path) -> Path:
    proj = _write(
        tmp_path / "myproj",
        {
            "CLAUDE.md": (
                "# Project instructions\n\nSee @docs/architecture.md for the design and\n"
                "[the guide](docs/guide.md#setup). Personal: @~/.claude/personal.md\n"
                "Not an import: `@docs/not-this.md`, nor mail@example.com.\n\n"
                "# Commands\n\n- `make test`\n"
            ),
            "docs/architecture.md": "# Architecture\n\n## Layers\nthree\n\nSee also @../../outside.md\n",
            "docs/guide.md": "# Guide\n\n## Setup\nrun make\n",
            "docs/not-this.md": "# Not this\n",
            ".claude/rules/testing.md": "# Testing rules\n\n## Style\npytest only\n",
            "src/main.py": "print('code is not memory')\n",
        },
    )
    (home / ".claude").mkdir()
    (home / ".claude/personal.md").write_text("# Personal\n")
    _write(
        auto_memory_dir(proj, home),
        {
            "MEMORY.md": "# Memory\n\n- [Debugging notes](debugging.md)\n- API: see api-conventions.md\n",
            "debugging.md": "# Debugging\n\n## Flaky tests\nrerun with -p no:randomly\n",
            "api-conventions.md": "# API conventions\n\n## Errors\none line each\n",
        },
    )
    return proj


def test_claude_code_project_follows_imports_links_rules_and_auto_memory(
    client: Path, tmp_path: Path, hermetic: Path
) -> None:
    proj = _claude_project(tmp_path, hermetic)
    res = gm("-C", str(client), "import", str(proj), "--json")
    assert res.code == 0, res.err
    out = json.loads(res.out)
    assert out["kind"] == "claude-code"
    cards = {c["card"]: c for c in out["cards"]}
    assert set(cards) == {
        "claude",
        "architecture",
        "guide",
        "testing",
        "memory",
        "debugging",
        "api-conventions",
    }
    assert cards["claude"]["sections"] == ["project-instructions", "commands"]  # '#' -> '##'
    assert cards["debugging"]["source"].startswith("~/.claude/projects/")
    skipped = "\n".join(out["skipped"])
    assert "~/.claude/personal.md is outside the source" in skipped
    assert "../../outside.md is outside the source" in skipped
    assert "not-this" not in res.out
    assert (
        (client / "cards/claude.md")
        .read_text()
        .startswith("# CLAUDE\n\n## Project instructions\n\nSee @docs/architecture.md")
    )
    assert len(_imported(client)) == 7


def test_claude_code_auto_memory_folder_on_its_own(
    client: Path, tmp_path: Path, hermetic: Path
) -> None:
    proj = _claude_project(tmp_path, hermetic)
    res = gm("-C", str(client), "import", str(auto_memory_dir(proj, hermetic)), "--json")
    assert res.code == 0, res.err
    out = json.loads(res.out)
    assert out["kind"] == "claude-code"
    assert sorted(c["card"] for c in out["cards"]) == ["api-conventions", "debugging", "memory"]


def test_references_skip_code_and_urls() -> None:
    text = (
        "@a.md and `@b.md`\n```\n@c.md [x](d.md)\n```\n[e](e.md) [u](https://x.y/f.md) "
        '[m](mailto:a@b.c) me@host.md [g](<g g.md> "t")\n'
    )
    assert references(text) == ["a.md", "e.md", "g g.md"]


def test_memory_tool_directory_as_the_sdk_tool_writes_it(client: Path, tmp_path: Path) -> None:
    base = tmp_path / "agent-memory"
    sdk = BetaLocalFilesystemMemoryTool(str(base))
    sdk.call(
        {
            "command": "create",
            "path": "/memories/client_notes.md",
            "file_text": "# Client notes\n\n## Preferences\nshort answers\n",
        }
    )
    sdk.call(
        {
            "command": "create",
            "path": "/memories/projects/acme.md",
            "file_text": "## Status\non track\n\n## Risks\nnone\n",
        }
    )
    sdk.call({"command": "create", "path": "/memories/todo.txt", "file_text": "- call Dana\n"})
    res = gm("-C", str(client), "import", str(base), "--json")
    assert res.code == 0, res.err
    out = json.loads(res.out)
    assert out["kind"] == "memory-tool"
    assert {c["card"]: c["sections"] for c in out["cards"]} == {
        "client-notes": ["preferences"],
        "acme": ["status", "risks"],
        "todo": ["todo"],
    }
    assert {c["source"] for c in out["cards"]} == {
        "memories/client_notes.md",
        "memories/projects/acme.md",
        "memories/todo.txt",
    }
    assert (
        client / "cards/acme.md"
    ).read_text() == "# acme\n\n## Status\non track\n\n## Risks\nnone\n"


BASIC = (
    "---\ntitle: Coffee Brewing Methods\ntype: note\ntags: [coffee, brewing]\n"
    "permalink: coffee-brewing-methods\n---\n\n# Coffee Brewing Methods\n\n"
    "## Observations\n- [method] Pour over gives more clarity #brewing\n"
    "- [preference] Ethiopian beans, lighter roasts (personal experience)\n\n"
    "## Relations\n- relates_to [[Coffee Bean Origins]]\n- requires [[Proper Grinding]]\n"
)


def test_basic_memory_note_keeps_frontmatter_observations_and_relations(
    client: Path, tmp_path: Path
) -> None:
    src = _write(tmp_path / "basic", {"coffee/brewing.md": BASIC, "plain.md": "# Plain\n"})
    res = gm("-C", str(client), "import", str(src), "--json")
    assert res.code == 0, res.err
    out = json.loads(res.out)
    assert out["kind"] == "basic-memory"
    assert {c["card"] for c in out["cards"]} == {"coffee-brewing-methods", "plain"}
    card = (client / "cards/coffee-brewing-methods.md").read_text()
    assert card.startswith("# Coffee Brewing Methods\n\n```yaml\ntitle: Coffee Brewing Methods\n")
    assert "permalink: coffee-brewing-methods\n```\n\n## Observations\n" in card
    assert "- [method] Pour over gives more clarity #brewing\n" in card
    assert "- relates_to [[Coffee Bean Origins]]\n" in card
    trailers = _imported(client)["coffee-brewing-methods"]
    assert [v for k, v in trailers if k == "Gitmem-Section"] == ["observations", "relations"]


def test_from_forces_the_kind(client: Path, tmp_path: Path) -> None:
    src = _write(tmp_path / "basic", {"coffee.md": BASIC})
    out = json.loads(
        gm("-C", str(client), "import", str(src), "--from", "markdown", "--dry-run", "--json").out
    )
    assert out["kind"] == "markdown" and [c["card"] for c in out["cards"]] == ["coffee"]


def test_dry_run_prints_the_plan_and_changes_nothing(client: Path, tmp_path: Path) -> None:
    src = _write(tmp_path / "notes", {**NOTES, "a/dup.md": "x\n", "b/dup.md": "y\n"})
    before = snapshot(client)
    res = gm("-C", str(client), "import", str(src), "--dry-run")
    assert res.code == 0, res.err
    assert snapshot(client) == before
    assert "would import 3 cards" in res.out
    assert "cards/acme.md <- acme.md  [budget, next-steps]" in res.out
    assert "problem: a/dup.md: a/dup.md, b/dup.md would all be card 'dup'; rename one" in res.out


def test_clashes_are_reported_and_nothing_is_overwritten(client: Path, tmp_path: Path) -> None:
    assert (
        gm(
            "-C",
            str(client),
            "write",
            "acme",
            "--old",
            "",
            "--new",
            "## Budget\nmine\n",
            "--section",
            "budget",
            "--keywords",
            "budget",
            "--summary",
            "mine",
        ).code
        == 0
    )
    src = _write(tmp_path / "notes", {**NOTES, "a/dup.md": "x\n", "b/Dup.md": "y\n"})
    before = snapshot(client)
    res = gm("-C", str(client), "import", str(src))
    assert res.code == 4
    assert res.err.count("\n") == 1 and "nothing imported" in res.err
    assert "would all be card 'dup'" in res.err and "and 2 more" in res.err
    assert snapshot(client) == before
    res = gm("-C", str(client), "import", str(src), "--skip-problems", "--json")
    assert res.code == 0, res.err
    out = json.loads(res.out)
    assert sorted(c["card"] for c in out["cards"]) == ["ideas", "weekly-review"]
    assert "acme.md: card 'acme' exists already; never overwritten" in out["problems"]
    assert (client / "cards/acme.md").read_text() == "# acme\n\n## Budget\nmine\n"
    assert not (client / "cards/dup.md").exists()


def test_an_uncommitted_card_file_of_the_same_name_is_a_clash(client: Path, tmp_path: Path) -> None:
    (client / "cards/ideas.md").write_text("my draft, not committed yet\n")
    before = snapshot(client)
    res = gm("-C", str(client), "import", str(_write(tmp_path / "n", NOTES)))
    assert res.code == 4 and "cards/ideas.md exists in the working tree" in res.err
    assert snapshot(client) == before


def test_hostile_inputs_give_one_line_reports_and_no_partial_state(
    client: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "outside-secret.md"
    secret.write_text("# Outside\n\ntop secret outside text\n")
    (tmp_path / "outside-dir").mkdir()
    (tmp_path / "outside-dir/inner.md").write_text("# Inner\nouter dir text\n")
    src = _write(tmp_path / "notes", {"good.md": "# Good\n\n## A\nfine\n"})
    os.symlink(secret, src / "link.md")
    os.symlink(tmp_path / "outside-dir", src / "linked-dir")
    before = snapshot(client)
    res = gm("-C", str(client), "import", str(src))
    assert res.code == 2 and res.err.count("\n") == 1, res.err
    assert "link.md: is a symlink; never followed" in res.err
    assert snapshot(client) == before
    plan = json.loads(gm("-C", str(client), "import", str(src), "--dry-run", "--json").out)
    assert sorted(plan["problems"]) == [
        "link.md: is a symlink; never followed",
        "linked-dir: is a symlink; never followed",
    ]
    assert [c["card"] for c in plan["cards"]] == ["good"]
    res = gm("-C", str(client), "import", str(src), "--skip-problems")
    assert res.code == 0, res.err
    everything = git(client, "log", "-p", "--all")
    assert "top secret" not in everything and "outer dir text" not in everything


def test_newline_in_a_file_name_is_one_escaped_line(client: Path, tmp_path: Path) -> None:
    src = _write(tmp_path / "notes", {"bad\nname.md": "# Bad\n", "ok.md": "# Ok\n"})
    before = snapshot(client)
    res = gm("-C", str(client), "import", str(src))
    assert res.code == 2 and res.err.count("\n") == 1, res.err
    assert "bad\\nname.md: its name has a control character" in res.err
    assert snapshot(client) == before


def test_a_10_mb_note_is_over_the_card_limit(client: Path, tmp_path: Path) -> None:
    src = _write(
        tmp_path / "notes",
        {"huge.md": b"# Huge\n\n" + b"x" * (10 * 1024 * 1024), "ok.md": "# Ok\n"},
    )
    before = snapshot(client)
    res = gm("-C", str(client), "import", str(src))
    assert res.code == 2 and res.err.count("\n") == 1, res.err
    assert re.search(
        r"huge\.md: is 1048\d+ bytes, over limits\.max_card_bytes \(1048576\)", res.err
    )
    assert snapshot(client) == before


def test_the_edit_limits_apply_to_imported_text(client: Path, tmp_path: Path) -> None:
    """The write path's own check (limits.max_edit_bytes), not one of import's."""
    toml = client / "gitmem.toml"
    toml.write_text(toml.read_text().replace("max_edit_bytes = 65536", "max_edit_bytes = 100"))
    git(client, "commit", "-qam", "small edits")
    src = _write(
        tmp_path / "notes", {"long.md": "# Long\n\n" + "word " * 50, "bad.md": b"\xff\xfe"}
    )
    size = len(
        importing.card_text(Note("long.md", "long", "# Long\n\n" + "word " * 50, "markdown"))[
            1
        ].encode()
    )
    plan = json.loads(gm("-C", str(client), "import", str(src), "--dry-run", "--json").out)
    assert sorted(plan["problems"]) == [
        "bad.md: is not valid UTF-8 (byte 0)",
        f"long.md: edit is {size} bytes, over the limit of 100 (limits.max_edit_bytes in "
        "gitmem.toml)",
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file whatever its mode")
def test_an_unreadable_note_is_reported(client: Path, tmp_path: Path) -> None:
    src = _write(tmp_path / "notes", {"locked.md": "# Locked\n"})
    (src / "locked.md").chmod(0)
    res = gm("-C", str(client), "import", str(src))
    assert res.code == 2 and "locked.md: cannot be read: Permission denied" in res.err


def test_a_failure_while_writing_leaves_main_and_refs_as_they_were(
    client: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _write(tmp_path / "notes", NOTES)
    real = Git.run

    def disk_full(self: Git, *args: str, **kwargs: Any) -> Any:
        if args[0] == "fast-import":  # the one process writing every card's commit
            raise OSError(28, "No space left on device")
        return real(self, *args, **kwargs)  # the same call, passed on

    monkeypatch.setattr(Git, "run", disk_full)
    before = git(client, "for-each-ref")
    res = gm("-C", str(client), "import", str(src))
    assert res.code == 5 and "no space left" in res.err
    assert git(client, "for-each-ref") == before
    assert git(client, "status", "--porcelain") == ""


def test_a_signed_import_signs_each_card_and_a_failure_lands_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITMEM_SIGNING")
    client = tmp_path / "signed"
    assert gm("init", str(client)).code == 0
    src = _write(tmp_path / "notes", NOTES)
    real = ObjectStore.write_many

    def commits_fail(self: ObjectStore, kind: str, datas: list[bytes]) -> list[Sha]:
        if kind == "commit":  # the chain's signed commits, after its blobs and trees
            raise OSError(28, "No space left on device")
        return real(self, kind, datas)

    with monkeypatch.context() as patched:
        patched.setattr(ObjectStore, "write_many", commits_fail)
        before = git(client, "for-each-ref")
        res = gm("-C", str(client), "import", str(src))
        assert res.code == 5 and "no space left" in res.err
        assert git(client, "for-each-ref") == before
    res = gm("-C", str(client), "import", str(src))
    assert res.code == 0, res.err
    imported = git(client, "log", "--format=%G? %s", "main").splitlines()[: len(NOTES)]
    assert [line.split(" ", 1)[0] for line in imported] == ["G"] * len(NOTES)
    assert all(": imported from " in line for line in imported)


TODO = "/memories/notes/todo.md"


def test_export_round_trip_gives_the_same_cards(tmp_path: Path) -> None:
    first, second, third = (tmp_path / n for n in ("first", "second", "third"))
    for repo in (first, second, third):
        assert gm("init", str(repo)).code == 0
    src = _write(tmp_path / "notes", {**NOTES, "coffee.md": BASIC})
    assert gm("-C", str(first), "import", str(src)).code == 0
    res = gm("-C", str(first), "export", str(tmp_path / "plain"))
    assert res.code == 0 and "Exported 4 cards" in res.out, res.err
    assert gm("-C", str(second), "import", str(tmp_path / "plain")).code == 0
    res = gm("-C", str(first), "export", str(tmp_path / "mt"), "--layout", "memory-tool", "--json")
    assert json.loads(res.out)["files"] == [
        "memories/acme.md",
        "memories/coffee-brewing-methods.md",
        "memories/ideas.md",
        "memories/weekly-review.md",
    ]
    sdk = BetaLocalFilesystemMemoryTool(str(tmp_path / "mt"))  # the SDK tool reads them
    assert "Q3 budget: 30k" in sdk.call({"command": "view", "path": "/memories/acme.md"})
    assert gm("-C", str(third), "import", str(tmp_path / "mt")).code == 0
    with MemoryRepo(first) as a, MemoryRepo(second) as b, MemoryRepo(third) as c:
        assert cards_of(a) == cards_of(b) == cards_of(c) and len(cards_of(a)) == 4


def test_export_holds_what_the_memory_tool_wrote_and_names_what_it_leaves_out(
    client: Path, tmp_path: Path
) -> None:
    with MemoryRepo(client) as repo:
        tool = GitMemoryTool(repo, branch="main")
        for path, text in [("/memories/acme.md", "## Budget\n30k\n"), (TODO, "- call Bob\n")]:
            tool.call({"command": "create", "path": path, "file_text": text})
        tool.call({"command": "create", "path": "/memories/empty/x.md", "file_text": "x\n"})
        tool.call({"command": "delete", "path": "/memories/empty/x.md"})  # leaves a .gitkeep
    target = git(client, "hash-object", "-w", "--stdin", input=b"acme.md").strip()
    git(client, "update-index", "--add", "--cacheinfo", f"120000,{target},cards/link.md")
    git(client, "commit", "-qm", "a symlink by hand", "--no-verify")
    res = gm("-C", str(client), "export", str(tmp_path / "mt"), "--layout", "memory-tool")
    assert res.code == 0, res.err
    assert "Exported 2 files" in res.out  # acme.md, notes/todo.md; no .gitkeep
    assert "left out link.md: a symlink or submodule, not a file" in res.out
    sdk = BetaLocalFilesystemMemoryTool(str(tmp_path / "mt"))
    assert "- call Bob" in sdk.call({"command": "view", "path": TODO})
    assert not (tmp_path / "mt/memories/empty/.gitkeep").exists()
    res = gm("-C", str(client), "export", str(tmp_path / "plain"), "--json")
    left = json.loads(res.out)["left_out"]
    assert left == {
        "link.md": "a symlink or submodule, not a file",
        "notes/todo.md": "not a card; --layout memory-tool exports it",
    }
    assert sorted(p.name for p in (tmp_path / "plain").iterdir()) == ["acme.md"]


def test_export_refuses_to_overwrite_unless_forced(client: Path, tmp_path: Path) -> None:
    assert gm("-C", str(client), "import", str(_write(tmp_path / "n", NOTES))).code == 0
    out = _write(tmp_path / "out", {"ideas.md": "mine\n"})
    res = gm("-C", str(client), "export", str(out))
    assert res.code == 4 and "ideas.md exists" in res.err and "--force" in res.err
    assert sorted(p.name for p in out.iterdir()) == ["ideas.md"]
    assert (out / "ideas.md").read_text() == "mine\n"
    res = gm("-C", str(client), "export", str(out), "--force", "--json")
    assert res.code == 0 and json.loads(res.out)["overwritten"] == ["ideas.md"]
    assert (out / "ideas.md").read_text() == (client / "cards/ideas.md").read_text()


def test_export_never_writes_through_a_symlink(client: Path, tmp_path: Path) -> None:
    assert gm("-C", str(client), "import", str(_write(tmp_path / "n", NOTES))).code == 0
    (tmp_path / "elsewhere").mkdir()
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(tmp_path / "elsewhere", out / "memories")
    res = gm("-C", str(client), "export", str(out), "--layout", "memory-tool")
    assert res.code == 4 and "symlink" in res.err
    assert list((tmp_path / "elsewhere").iterdir()) == []


line = st.sampled_from(
    [
        "# Title",
        "## Budget",
        "# Other",
        "text",
        "",
        "```",
        "---",
        "title: T",
        "## Budget",
        "### Sub",
        "- [x] obs",
        "\r",
    ]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(line, max_size=12).map("\n".join), st.sampled_from(["markdown", "basic-memory"]))
def test_a_card_imported_again_is_the_same_card(text: str, kind: str) -> None:
    """What export writes (a card's text) imports as exactly that card: the round trip."""
    name = "note"
    title, card = importing.card_text(Note("n.md", name, text, kind))
    again = importing.card_text(Note("note.md", name, card, kind))
    assert again == (title, card)
    assert card.startswith(f"# {title}\n\n") and "\n## " in card


def test_the_hook_accepts_an_amended_import_commit_and_checks_each_section(
    client: Path, tmp_path: Path
) -> None:
    assert (
        gm(
            "-C", str(client), "import", str(_write(tmp_path / "n", {"acme.md": NOTES["acme.md"]}))
        ).code
        == 0
    )
    message = git(client, "log", "-1", "--format=%B")
    git(client, "commit", "-q", "--amend", "-m", message.replace("imported", "brought in"))
    assert (
        "- next-steps: (unindexed) Next steps [next, steps]" in gm("-C", str(client), "index").out
    )
    forged = message.replace("Gitmem-Section: next-steps", "Gitmem-Section: nowhere")
    proc = subprocess.run(
        ["git", "commit", "-q", "--amend", "-m", forged],
        cwd=client,
        capture_output=True,
        check=False,
    )
    assert proc.returncode != 0
    assert "Gitmem-Section 'nowhere' is not a section of cards/acme.md" in proc.stderr.decode()


note_names = st.sampled_from(
    ["a.md", "b.md", "A.md", "sub/a.md", "Notes Q3.md", "c.markdown", "x.txt"]
)
note_lines = st.sampled_from(
    [
        "# Title",
        "## Budget",
        "## Next steps",
        "# Other",
        "text",
        "```",
        "## Budget",
        "- [fact] x",
        "",
    ]
)


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.dictionaries(note_names, st.lists(note_lines, max_size=8).map("\n".join), max_size=5))
def test_any_folder_imports_to_cards_the_index_lists_section_by_section(
    tmp_path_factory: pytest.TempPathFactory, notes: dict[str, str]
) -> None:
    tmp = tmp_path_factory.mktemp("prop")
    repo_path = tmp / "client"
    assert gm("init", str(repo_path)).code == 0
    (tmp / "notes").mkdir()
    src = _write(tmp / "notes", dict(notes))
    plan = json.loads(gm("-C", str(repo_path), "import", str(src), "--dry-run", "--json").out)
    res = gm("-C", str(repo_path), "import", str(src), "--skip-problems", "--json")
    assert res.code == 0, res.err
    out = json.loads(res.out)
    assert [c["card"] for c in out["cards"]] == [c["card"] for c in plan["cards"]]
    assert len(out["commits"]) == len(out["cards"]) == len(_imported(repo_path))
    listed = {c["project"]: c for c in json.loads(gm("-C", str(repo_path), "index", "--json").out)}
    for card in out["cards"]:
        sections = listed[card["card"]]["sections"]
        assert [s["id"] for s in sections] == card["sections"]
        assert all(not s["indexed"] and s["keywords"] for s in sections)
    with MemoryRepo(repo_path) as repo:
        index_summaries(repo)  # the incremental index is the full replay's
        assert set(cards_of(repo)) == {c["card"] for c in out["cards"]}


def test_a_note_holding_a_secret_stops_the_import_before_any_card(
    client: Path, tmp_path: Path
) -> None:
    """The import writes its commits itself, not through ``write_card``: the secret scan
    of every edit still refuses a card, and nothing of the import lands."""
    src = _write(
        tmp_path / "notes",
        {**NOTES, "zz-keys.md": "# Keys\n\naws key AKIAQWERTYUIOPASDFGHJ here\n"},
    )
    before = git(client, "for-each-ref")
    res = gm("-C", str(client), "import", str(src))
    assert res.code == 2 and "secret" in res.err.lower(), res.err
    assert len(res.err.strip().splitlines()) == 1
    assert git(client, "for-each-ref") == before
    assert git(client, "status", "--porcelain") == ""
