"""The CLI imports a command's module only when that command runs: the table in
gitmem/cli/app.py names, for every command, the module that registers it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gitmem.cli import app as cli_pkg

# Each command module in turn, in a fresh interpreter: which commands it registers.
_REGISTERED = """
import importlib, json, pkgutil, sys
import gitmem.cli as c
from gitmem.cli import app
found = {}
for info in pkgutil.iter_modules(c.__path__):
    before = set(app.cli.commands)
    importlib.import_module(f"gitmem.cli.{info.name}")
    for name in set(app.cli.commands) - before:
        found[name] = info.name
print(json.dumps(found))
"""


def test_the_table_names_the_module_of_every_command() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _REGISTERED], check=True, capture_output=True, text=True
    ).stdout
    assert json.loads(out) == cli_pkg.COMMANDS


# `gitmem index` run in-process; then the command modules that were imported.
_MODULES_AFTER = """
import sys
from gitmem.cli import main
try:
    main(["-C", sys.argv[1], sys.argv[2]])
except SystemExit as done:
    code = done.code
print(code, *sorted(m for m in sys.modules if m.startswith("gitmem.cli.") and m != "gitmem.cli.app"))
"""


def test_gitmem_index_imports_only_the_module_of_its_command(client: Path) -> None:
    for command, module in (("index", "core"), ("status", "status")):
        out = (
            subprocess.run(
                [sys.executable, "-c", _MODULES_AFTER, str(client), command],
                check=True,
                capture_output=True,
                text=True,
            )
            .stdout.splitlines()[-1]
            .split()
        )
        assert out == ["0", f"gitmem.cli.{module}"], command


def test_help_still_lists_every_command() -> None:
    from click.testing import CliRunner

    res = CliRunner().invoke(cli_pkg.cli, ["--help"])
    assert res.exit_code == 0
    listed = {
        line.split()[0] for line in res.output.split("Commands:")[1].splitlines() if line.strip()
    }
    assert listed == set(cli_pkg.COMMANDS)
