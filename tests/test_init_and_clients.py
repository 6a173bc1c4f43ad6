"""gitmem init, the workspace of clients, hooks installed politely, the index views."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gitmem.index import records
from gitmem.memory.repo import MemoryRepo
from gitmem.setup.workspace import persona

from helpers import git, gm, snapshot

EXPECTED = Path(__file__).parent / "expected"


def test_init_lays_out_the_template_with_one_commit_and_hooks(tmp_path: Path) -> None:
    res = gm("init", str(tmp_path / "acme"))
    assert res.code == 0, res.err
    root = tmp_path / "acme"
    for rel in (
        "gitmem.toml",
        "persona.md",
        "synthesis.md",
        "cards",
        "sessions",
        "logs",
        ".gitattributes",
    ):
        assert (root / rel).exists(), rel
    assert git(root, "branch", "--show-current").strip() == "main"
    assert git(root, "rev-list", "--count", "main").strip() == "1"
    assert 'name = "acme"' in (root / "gitmem.toml").read_text()
    attrs = (root / ".gitattributes").read_text()
    assert "sessions/*.jsonl merge=union" in attrs and "logs/*.jsonl merge=union" in attrs
    assert git(root, "check-attr", "merge", "logs/usage.jsonl").strip().endswith("merge: union")
    for hook in ("commit-msg", "post-checkout", "post-merge", "post-rewrite"):
        assert "gitmem-hook v1" in (root / ".git/hooks" / hook).read_text()
        assert os.access(root / ".git/hooks" / hook, os.X_OK)
    assert git(root, "status", "--porcelain") == ""


def test_init_adopts_a_non_empty_directory_and_leaves_its_files_alone(tmp_path: Path) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    res = gm("init", str(target))
    assert res.code == 0 and "Adopted" in res.out, res.err
    assert (target / "notes.txt").read_text() == "mine"
    assert "notes.txt" not in git(target, "ls-files")  # adopted, not committed for them


def test_foreign_hook_is_kept_as_legacy_and_still_runs(client: Path, tmp_path: Path) -> None:
    hook = client / ".git/hooks/commit-msg"
    hook.write_text(f"#!/bin/sh\necho legacy-ran >> {tmp_path / 'ran'}\n")
    hook.chmod(0o755)
    res = gm("-C", str(client), "install-hooks", "--json")
    assert res.code == 0, res.err
    actions = {a["hook"]: a["action"] for a in json.loads(res.out)}
    assert actions["commit-msg"] == "kept-legacy" and actions["post-merge"] == "up-to-date"
    assert (
        (client / ".git/hooks/commit-msg.legacy").read_text().startswith("#!/bin/sh\necho legacy")
    )
    (client / "x.txt").write_text("x")
    git(client, "add", "x.txt")
    git(client, "commit", "-qm", "plain commit")
    assert (tmp_path / "ran").read_text() == "legacy-ran\n"


def test_second_foreign_hook_with_a_legacy_already_refuses(client: Path) -> None:
    hooks = client / ".git/hooks"
    (hooks / "commit-msg").write_text("#!/bin/sh\nexit 0\n")
    (hooks / "commit-msg.legacy").write_text("#!/bin/sh\nexit 0\n")
    before = snapshot(client)
    res = gm("-C", str(client), "install-hooks")
    assert res.code == 2 and "refusing to overwrite" in res.err
    assert snapshot(client) == before


def test_clients_side_by_side(tmp_path: Path, hermetic: Path) -> None:
    for name in ("acme", "globex"):
        assert gm("init", "--client", name).code == 0
    workspace = hermetic / "gitmem"
    (workspace / "persona.md").write_text("Shared base: be concise.\n")
    args = ["--section", "budget", "--keywords", "money", "--summary", "Acme budget"]
    assert (
        gm(
            "--client",
            "acme",
            "write",
            "site",
            "--old",
            "",
            "--new",
            "## Budget\n40k\n",
            *args,
            cwd=tmp_path,
        ).code
        == 0
    )
    assert "Acme budget" in gm("--client", "acme", "index", cwd=tmp_path).out
    assert "No cards yet." in gm("--client", "globex", "index", cwd=tmp_path).out
    assert gm("--client", "globex", "show", "site").code == 3
    listed = json.loads(gm("clients", "--json").out)
    assert [c["name"] for c in listed] == ["acme", "globex"]
    assert all(c["last_activity"] for c in listed)
    text = persona(workspace / "acme")
    assert text.startswith(
        "Shared base: be concise.\n\n# Persona\n\nYou are the assistant for the client acme."
    )
    assert gm("--client", "nobody", "index").code == 3


def test_post_checkout_and_merge_hooks_keep_the_cache_fresh(client: Path) -> None:
    args = ["--section", "budget", "--keywords", "money", "--summary", "first"]
    gm("-C", str(client), "write", "site", "--old", "", "--new", "## Budget\n1\n", *args)
    git(client, "checkout", "-qb", "side")
    (client / "cards/site.md").write_text("# site\n\n## Budget\n2\n\n## Extra\nhand\n")
    git(client, "commit", "-qam", "hand edit on side")
    git(client, "checkout", "-q", "main")
    git(client, "merge", "-q", "--ff-only", "side")
    with MemoryRepo(client) as repo:
        cached = records.load(repo, "main")
        assert cached is not None
        assert cached.state.commit == git(client, "rev-parse", "main").strip()


def test_index_and_log_views_match_expected_files(client: Path) -> None:
    def w(
        project: str, old: str, new: str, section: str, kws: str, summary: str, *extra: str
    ) -> None:
        res = gm(
            "-C",
            str(client),
            "write",
            project,
            "--old",
            old,
            "--new",
            new,
            "--section",
            section,
            "--keywords",
            kws,
            "--summary",
            summary,
            *extra,
        )
        assert res.code == 0, res.err

    w(
        "acme-website",
        "",
        "# Acme website\n\n## Budget\n30k\n\n## Next steps\nCall Bob\n",
        "budget",
        "budget,q3",
        "Budget set to 30k",
    )
    w(
        "acme-website",
        "30k",
        "40k",
        "budget",
        "budget,invoice,q3",
        "Q3 budget raised to 40k after the 2026-11-28 call",
        "--session",
        "20261130-101200-ab12",
        "--actor",
        "agent",
    )
    w("beta", "", "## Goals\nShip v2\n", "goals", "roadmap", "Ship v2 by March")
    for view in ("index", "log"):
        got = gm("-C", str(client), view).out
        if os.environ.get("REGEN_EXPECTED"):
            (EXPECTED / f"{view}.txt").write_text(got)
        assert got == (EXPECTED / f"{view}.txt").read_text()
    shown = gm("-C", str(client), "show", "acme-website", "next-steps")
    assert shown.out == "## Next steps\nCall Bob\n"


def test_commands_work_without_an_api_key(client: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    env["PATH"] = "/usr/bin:/bin"
    for args in (["index"], ["log"], ["reindex"]):
        proc = subprocess.run(
            [str(Path(sys.executable).with_name("gitmem")), "-C", str(client), *args],
            env=env,
            capture_output=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
