"""`gitmem --help` lists every command, each command's --help works, --version says which."""

from __future__ import annotations

from importlib.metadata import version

from helpers import gm

# Every command a person can type (the README's table).
COMMANDS = {
    "ask", "cards", "chat", "clients", "clone", "completion", "consolidate", "demo", "edit",
    "export", "import", "index", "init", "install-hooks", "log", "mcp", "recover", "redact",
    "reindex", "review", "revert", "scan", "search", "show", "stale", "status", "sync", "trust",
    "ui", "usage", "verify", "write",
}  # fmt: skip


def test_help_lists_every_command_and_each_one_has_its_help() -> None:
    res = gm("--help")
    assert res.code == 0
    listed = {
        line.split()[0] for line in res.out.split("Commands:")[1].splitlines() if line.strip()
    }
    assert listed == COMMANDS
    for name in sorted(COMMANDS):
        sub = gm(name, "--help")
        assert sub.code == 0, (name, sub.err)
        assert sub.out.startswith(f"Usage: gitmem {name} "), name


def test_version_names_the_installed_package() -> None:
    res = gm("--version")
    assert (res.code, res.out) == (0, f"gitmem, version {version('vibrating-memory')}\n")
