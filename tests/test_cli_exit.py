"""How the `gitmem` console script ends its process: exit handlers run and output is
flushed, the exit code and one-line message are the command's, and a program that calls
``main`` goes on after it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gitmem.setup.init import init_repo

# Run as the console script does (a file named gitmem calling main() with no argv). A
# module-level object's __del__ runs only in the interpreter's teardown; an atexit handler
# runs at any orderly exit.
_SCRIPT = """
import atexit, sys
marks = sys.argv.pop(1)
class Torn:
    def __del__(self, _open=open, _marks=marks):
        with _open(_marks, "a") as f:
            f.write("teardown\\n")
kept = Torn()
atexit.register(lambda: open(marks, "a").write("atexit\\n"))
from gitmem.cli import main
main()
"""


def _script(tmp_path: Path, text: str) -> str:
    (tmp_path / "bin").mkdir(exist_ok=True)
    path = tmp_path / "bin" / "gitmem"
    path.write_text(text)
    return str(path)


def _run(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    marks = tmp_path / "marks"
    marks.write_text("")
    proc = subprocess.run(
        [sys.executable, _script(tmp_path, _SCRIPT), str(marks), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc, marks.read_text().split()


def test_the_console_script_flushes_its_output_and_runs_the_exit_handlers(tmp_path: Path) -> None:
    init_repo(tmp_path / "c")
    proc, marks = _run(tmp_path, "-C", str(tmp_path / "c"), "index", "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("[") and proc.stdout.rstrip().endswith("]")  # all of it
    assert marks == ["atexit", "teardown"]


def test_an_error_keeps_its_exit_code_and_message(tmp_path: Path) -> None:
    proc, marks = _run(tmp_path, "-C", str(tmp_path / "nowhere"), "index")
    assert proc.returncode != 0
    assert proc.stderr.startswith("gitmem: error: ") and proc.stderr.count("\n") == 1
    assert marks == ["atexit", "teardown"]


def test_a_program_calling_main_goes_on_after_it(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.write_text("")
    script = _SCRIPT.replace(
        "from gitmem.cli import main\nmain()",
        "from gitmem.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
        "open(marks, 'a').write('after\\n')",
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(marks), "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert marks.read_text().split() == ["after", "atexit", "teardown"]
