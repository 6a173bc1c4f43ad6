"""Every gitmem command that README.md and docs/*.md show runs as written: the shell
blocks as scripts, each command line, the synopsis lines with their placeholders
filled in, and the MCP client configurations (Claude Desktop, .mcp.json,
`claude mcp add`). None may end in a usage error (2) or a crash (70)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem.fakeapi import FakeAnthropicServer, RuleModel

from helpers import git

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BAD = (2, 70, 126, 127)  # a usage error, a crash, a command that cannot run
SERVE_S = 20  # a server's time to start and serve before Ctrl-C (a 2-core CI machine)


def blocks(path: Path) -> Iterator[tuple[str, str]]:
    """(language, text) of each fenced code block."""
    lang, inside = "", False
    lines: list[str] = []
    for line in path.read_text("utf-8").splitlines():
        if line.startswith("```"):
            if inside:
                yield lang, "\n".join(lines)
            lang, lines, inside = line[3:].strip(), [], not inside
        elif inside:
            lines.append(line)


def is_command(line: str) -> bool:
    return bool(re.match(r"\s*(\$ )?gitmem( |$)", line))


@pytest.fixture
def world(tmp_path: Path, hermetic: Path) -> Iterator[dict[str, str]]:
    """A workspace with client `acme` (a card acme-website § budget, a bare origin), a
    `gitmem` on PATH, and the fake API behind ANTHROPIC_BASE_URL."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    runner = bindir / "gitmem"
    # The installed console script, as a person runs it (it puts no folder on sys.path).
    runner.write_text(f'#!/bin/sh\nexec "{Path(sys.executable).with_name("gitmem")}" "$@"\n')
    runner.chmod(0o755)
    with FakeAnthropicServer(RuleModel()) as server:
        env = {
            **os.environ,
            "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
            "ANTHROPIC_API_KEY": "test",
            "ANTHROPIC_BASE_URL": server.base_url,
            "EDITOR": "true",  # `gitmem edit` as shown: the editor closes with no change
            "BROWSER": "true",  # `gitmem ui --open`: the page "opened" by a command that exits
        }
        run = [str(runner)]
        subprocess.run([*run, "init", "--client", "acme"], env=env, check=True, capture_output=True)
        client = hermetic / "gitmem" / "acme"
        subprocess.run(
            [
                *run,
                "-C",
                str(client),
                "write",
                "acme-website",
                "--old",
                "",
                "--new",
                "## Budget\nQ3 budget: 30k\n",
                "--section",
                "budget",
                "--keywords",
                "budget,q3",
                "--summary",
                "Q3 budget is 30k",
            ],
            env=env,
            check=True,
            capture_output=True,
        )
        bare = tmp_path / "origin.git"
        git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
        git(client, "remote", "add", "origin", str(bare))
        git(client, "push", "-q", "origin", "main")
        # What the import examples read: a notes folder, a Claude Code project in ~/code,
        # a memory-tool folder in the home folder, where the walk-throughs run.
        notes = tmp_path / "notes"
        notes.mkdir()
        (notes / "acme-launch.md").write_text("# Acme launch\n\n## Date\nLaunch on 2026-03-01.\n")
        project = hermetic / "code" / "myproject"
        project.mkdir(parents=True)
        (project / "CLAUDE.md").write_text("# My project\n\n## Build\nRun make.\n")
        memories = hermetic / "memory" / "memories"
        memories.mkdir(parents=True)
        (memories / "notes.md").write_text("# Notes\n\n## Todo\nCall Bob.\n")
        session = subprocess.run(
            [*run, "-C", str(client), "ask", "--json", "hello"],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        yield {
            "client": str(client),
            "tmp": str(tmp_path),
            "session": json.loads(session.stdout)["session"],
            "notes": str(notes),
            "origin": str(bare),
            **{f"env:{k}": v for k, v in env.items()},
        }


def env_of(world: dict[str, str]) -> dict[str, str]:
    return {k[4:]: v for k, v in world.items() if k.startswith("env:")}


def fill(line: str, world: dict[str, str], n: int) -> str:
    """A documented command with the doc's placeholders given values."""
    line = line.replace("/path/to/client", world["client"])
    subs = [
        (r"--section ID", "--section budget"),
        (r"--old T --new T", "--old 'Q3 budget: 30k' --new 'Q3 budget: 40k'"),
        (r"\bK,K\b", "budget,q3"),
        (r"--summary S\b", "--summary 'Q3 budget raised to 40k'"),
        (r'"MESSAGE"', '"hello"'),
        (r"\bCOMMIT\|SESSION\b", "HEAD"),
        (r"\bPROJECT\b", "acme-website"),
        (r"\bSECTION\b", "budget"),
        (r"\bSESSION\b", world["session"]),
        (r"\bID\b", world["session"]),
        (r"\bREMOTE\b", "origin"),
        (r"\bSOURCE\b", world["notes"]),
        (r"\bURL\b", world["origin"]),
        (r"\bDIR\b", shlex.quote(f"{world['tmp']}/out{n}")),
        (r"--layout L\b", "--layout plain"),
        (r"--days N\b", "--days 30"),
        (r"--card X\b", "--card acme-website"),
        (r"\bSHELL\b", "bash"),
        (r"\bHOST:PORT\b", "127.0.0.1:0"),
        (r"--http PORT\b", "--http 0"),
        (r"\bNAME\b", f"beta{n}"),
        (r"\bPATH\b", shlex.quote(f"{world['tmp']}/new{n}")),
    ]
    for pattern, value in subs:
        line = re.sub(pattern, value.replace("\\", "\\\\"), line)
    return line


def _top_level_split(cmd: str) -> list[str]:
    """``a | b [c | d]`` -> ["a", "b [c | d]"]: alternatives outside brackets only."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(cmd):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if depth == 0 and cmd.startswith(" | ", i):
            parts.append(cmd[start:i].strip())
            start = i + 3
    parts.append(cmd[start:].strip())
    return [p for p in parts if p]


def synopsis_forms(line: str) -> list[str]:
    """`gitmem log [PROJECT]   the audit trail` -> each runnable form of it."""
    cmd = re.split(r"\s{2,}", line.strip())[0]
    first, *others = _top_level_split(cmd)
    alts = [first] + [first.rsplit(" ", 1)[0] + " " + o for o in others]
    forms: list[str] = []
    for alt in alts:
        forms.append(_without_options(alt))
        for m in re.finditer(r"\[([^]]*)\]", alt):  # each choice of an optional part
            for choice in m.group(1).split(" | "):
                forms.append(alt[: m.start()] + choice + alt[m.end() :])
    return [_without_options(f) for f in dict.fromkeys(forms)]


def _without_options(form: str) -> str:
    """``--http [HOST:]PORT`` -> ``--http PORT``; ``log [PROJECT]`` -> ``log``."""
    form = re.sub(r"\[[^]]*\](?=\S)", "", form)  # a prefix of the word after it
    return re.sub(r"\s*\[[^]]*\]", "", form)


def run_shell(script: str, world: dict[str, str], cwd: str) -> list[tuple[int, str]]:
    """Run ``script`` in bash, each `gitmem` call's exit code recorded (not stopping)."""
    codes = Path(world["tmp"]) / "codes"
    codes.write_text("")
    err = Path(world["tmp"]) / "stderr"
    # each call: its exit code, its words and the last line it wrote to stderr; a server
    # (`gitmem ui`) gets Ctrl-C after SERVE_S seconds, as a person stops it
    prelude = (
        f"gitmem() {{ timeout --preserve-status -s INT -k 10 {SERVE_S} gitmem "
        f'"$@" </dev/null 2>{shlex.quote(str(err))}; local rc=$?; '
        f'printf "%s %s :: %s\\0" "$rc" "$*" "$(tail -n1 {shlex.quote(str(err))})" '
        f">> {shlex.quote(str(codes))}; return 0; }}\n"
    )
    proc = subprocess.run(
        ["bash", "-c", prelude + script],
        cwd=cwd,
        env=env_of(world),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    found = [
        (int(c), rest)
        for c, _, rest in (ln.partition(" ") for ln in codes.read_text().split("\0") if ln)
    ]
    assert found, f"no gitmem command ran: {proc.stderr}"
    return found


def documented() -> list[tuple[str, str, str]]:
    """(where, kind, text) for each command shown in the docs."""
    out: list[tuple[str, str, str]] = []
    for doc in DOCS:
        name = doc.relative_to(ROOT).as_posix()
        for lang, text in blocks(doc):
            if lang in ("sh", "bash", "shell") and any(is_command(x) for x in text.splitlines()):
                out.append((name, "script", text))
                continue
            if lang == "json" and "mcpServers" in text:
                for server in json.loads(text)["mcpServers"].values():
                    out.append((name, "argv", json.dumps([server["command"], *server["args"]])))
                continue
            if lang == "text":  # a screen or an output shown, not commands to run
                continue
            for line in re.sub(r"\s*\\\n\s*", " ", text).splitlines():  # continuations joined
                if "claude mcp add" in line and " -- " in line:
                    out.append((name, "line", line.split(" -- ", 1)[1]))
                elif is_command(line):
                    synopsis = re.search(r"\S\s{2,}[^#\s]", line.split("#")[0]) is not None
                    out.append((name, "synopsis" if synopsis else "line", line))
    return out


def test_the_docs_show_commands() -> None:
    kinds = {(where, kind) for where, kind, _ in documented()}
    assert ("README.md", "script") in kinds and ("README.md", "synopsis") in kinds
    assert ("docs/mcp.md", "argv") in kinds and ("docs/mcp.md", "line") in kinds


@pytest.mark.slow
def test_every_documented_command_runs(world: dict[str, str]) -> None:
    ran: list[tuple[str, int, str]] = []
    for n, (where, kind, text) in enumerate(documented()):
        if kind == "script":
            # The README's walk-through, from the home directory as a person would.
            for code, cmd in run_shell(text, world, os.environ["HOME"]):
                ran.append((where, code, f"gitmem {cmd}"))
        elif kind == "argv":
            argv = [world["client"] if a == "/path/to/client" else a for a in json.loads(text)]
            proc = subprocess.run(
                argv,
                env=env_of(world),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            ran.append((where, proc.returncode, " ".join(argv) + " " + proc.stderr))
        else:
            forms = synopsis_forms(text) if kind == "synopsis" else [text.split(" #")[0]]
            for form in forms:
                filled = fill(form.strip().removeprefix("$ "), world, n)
                for code, cmd in run_shell(filled, world, world["client"]):
                    ran.append((where, code, f"gitmem {cmd}"))
    print(*ran, sep="\n")
    bad = [r for r in ran if r[1] in BAD]
    assert not bad, bad
    assert len(ran) >= 20
