"""A built wheel works on its own: it carries template-repo/ and hooks/, and a gitmem
installed from it (not from this checkout) can init, write and run the demo."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "gitmem", "hooks", "template-repo")


def _build_wheel(tmp: Path) -> Path:
    """A wheel from a copy of the source tree (so the checkout gets no build/ or egg-info)."""
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        item = ROOT / name
        if item.is_dir():
            shutil.copytree(item, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(item, src / name)
    out = tmp / "dist"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            str(src),
            "-w",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    (wheel,) = out.glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build_wheel(tmp_path_factory.mktemp("wheel"))


def _shipped_files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_wheel_carries_template_and_hooks(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    for folder, inside in (("template-repo", "template_repo"), ("hooks", "hooks")):
        expected = {f"gitmem/_shipped/{inside}/{rel}" for rel in _shipped_files(ROOT / folder)}
        assert expected, folder
        assert expected <= names, sorted(expected - names)
    assert "gitmem/rules.md" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith("/LICENSE") for n in names)


def test_every_package_is_listed_in_pyproject() -> None:
    """pyproject lists the packages by hand (for the mapped folders): a new one must be there."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {
        ".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "gitmem").rglob("__init__.py")
    }
    found |= {  # every folder of the template, or its files are left out of the wheel
        ".".join(("gitmem._shipped.template_repo", *p.relative_to(ROOT / "template-repo").parts))
        for p in (ROOT / "template-repo").rglob("*")
        if p.is_dir()
    }
    assert found <= listed, sorted(found - listed)


def _run(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-c", "import sys; from gitmem.cli import main; main(sys.argv[1:])", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env=dict(os.environ),
    )


@pytest.mark.slow
def test_installed_wheel_inits_writes_and_runs_the_demo(wheel: Path, tmp_path: Path) -> None:
    # A fresh venv that has the wheel's gitmem and, for its dependencies only, this venv's
    # site-packages (a path in a .pth file: its own .pth files, this checkout's editable
    # hook among them, are not read).
    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    work = tmp_path / "work"
    work.mkdir()
    where = subprocess.run(
        [str(python), "-c", "import gitmem; print(gitmem.__file__)"],
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(str(site)), where.stdout

    init = _run(python, "init", "acme", cwd=work)
    assert init.returncode == 0, init.stderr
    assert (work / "acme" / "gitmem.toml").is_file()
    hook = (work / "acme" / ".git" / "hooks" / "commit-msg").read_text()
    assert "@PYTHON@" not in hook and str(python) in hook
    wrote = _run(
        python,
        "-C",
        "acme",
        "write",
        "acme-website",
        "--old",
        "",
        "--new",
        "## Budget\nQ3 budget: 30k\n",
        "--section",
        "budget",
        "--keywords",
        "budget",
        "--summary",
        "Q3 budget is 30k",
        cwd=work,
    )
    assert wrote.returncode == 0, wrote.stderr
    assert "Q3 budget: 30k" in (work / "acme" / "cards" / "acme-website.md").read_text()
    demo = _run(python, "demo", "--keep", str(tmp_path / "demo"), cwd=work)
    assert demo.returncode == 0, demo.stderr
    assert (tmp_path / "demo" / "demo-client" / ".git").is_dir()
