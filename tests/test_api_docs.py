"""docs/api.md runs as written, and `gitmem`'s public names are what it says they are."""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import gitmem

DOC = Path(__file__).resolve().parent.parent / "docs" / "api.md"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
# A name in __all__ that is a subpackage or module too would be shadowed by it (or shadow
# it) depending on what was imported first.
_MODULES = {p.stem for p in Path(gitmem.__file__).parent.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}


def examples(text: str) -> list[tuple[str, str | None]]:
    """Each ```python block with the ```text block right after it (what it prints), if any."""
    blocks = [(m.group(1), m.group(2), m.start(), m.end()) for m in _FENCE.finditer(text)]
    out: list[tuple[str, str | None]] = []
    for i, (lang, body, _start, end) in enumerate(blocks):
        if lang != "python":
            continue
        after = blocks[i + 1] if i + 1 < len(blocks) else None
        shown = after[1] if after and after[0] == "text" and not text[end : after[2]].strip() else None
        out.append((body, shown))
    return out


def test_every_example_runs_and_prints_what_the_doc_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    found = examples(DOC.read_text())
    assert len(found) >= 12
    namespace: dict[str, object] = {"__name__": "api_doc"}
    for n, (code, shown) in enumerate(found, 1):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"{DOC.name} example {n}", "exec"), namespace)
        if shown is not None:
            assert out.getvalue() == shown, f"example {n} of {DOC.name} printed:\n{out.getvalue()}"
    assert (tmp_path / "acme" / "gitmem.toml").is_file()  # they ran here, not elsewhere


def test_the_doc_shows_every_public_function() -> None:
    code = "\n".join(body for body, _ in examples(DOC.read_text()))
    functions = [n for n in gitmem.__all__ if inspect.isfunction(getattr(gitmem, n))]
    assert len(functions) >= 20
    missing = [n for n in functions if not re.search(rf"\b{n}\(", code)]
    assert missing == []
    text = DOC.read_text()
    assert [n for n in gitmem.__all__ if f"`{n}`" not in text] == []


def test_every_public_name_imports_and_says_what_it_is() -> None:
    assert sorted(gitmem.__all__) == sorted(set(gitmem.__all__))
    for name in gitmem.__all__:
        value = getattr(gitmem, name)
        assert name not in _MODULES, f"{name} is also a module of gitmem"
        doc = inspect.getdoc(value) or ""
        # a dataclass without a docstring gets its signature as __doc__
        assert doc and not doc.startswith(f"{value.__name__}("), f"{name} has no docstring"
        assert value.__module__.startswith("gitmem."), name
    assert issubclass(gitmem.NotFound, gitmem.GitmemError)
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = gitmem.no_such_name
    assert set(gitmem.__all__) <= set(dir(gitmem))


def test_the_names_carry_their_types(client: Path) -> None:
    """Typed for mypy --strict (this file is checked): a name the lazy loader served
    untyped would be ``object`` here, and these calls would not type-check."""
    from gitmem import EditResult, IndexEntry, MemoryRepo, open_repo, read_card, write_card

    with open_repo(client / "cards") as repo:
        assert isinstance(repo, MemoryRepo)
        res: EditResult = write_card(
            repo, "acme", "", "## Team\n\nAda leads.\n", IndexEntry.make("team", ["team"], "Ada leads")
        )
        text: str = read_card(repo, "acme", res.section)
    assert text == "## Team\n\nAda leads.\n"
    assert res.to_json()["card"] == "acme"
    with open_repo("~/../client") as again:  # HOME is tmp_path/home here
        assert again.root == client.resolve()
    with pytest.raises(gitmem.NotARepo):
        open_repo(client.parent)


def test_import_gitmem_loads_no_command_line_or_model_module() -> None:
    probe = (
        "import sys, json, gitmem\n"
        "before = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('click', 'anthropic', 'mcp', 'rich', 'gitmem'))\n"
        "gitmem.read_card\n"
        "after = sorted(m for m in sys.modules if m.split('.')[0] in ('click', 'anthropic', 'mcp'))\n"
        "print(json.dumps([before, after]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    before, after = json.loads(proc.stdout)
    assert before == ["gitmem"]
    assert after == []  # a name loads its own module, not the command line's


def test_the_cli_gets_the_listed_operations_from_the_public_api() -> None:
    """The commands import these operations from `gitmem`, never from the layer modules."""
    cli = Path(gitmem.__file__).parent / "cli"
    source = "\n".join(p.read_text() for p in sorted(cli.glob("*.py")))
    for internal in (
        "from gitmem.memory.edit import", "from gitmem.memory.audit import",
        "from gitmem.memory.revert import", "from gitmem.review.revert_session import",
        "from gitmem.sync import exchange", "from gitmem.setup.init import",
        "from gitmem.index import build", "from gitmem.memory.worktree import",
        "from gitmem.memory.repo import", "decide.accept(", "decide.reject(",
        "review_mod.list_sessions(", "review_mod.load(",
    ):
        assert internal not in source, internal
    for public in ("write_card", "read_card", "render_index", "read_index", "reindex",
                   "audit_log", "revert_commit", "revert_session", "list_sessions",
                   "accept_session", "reject_session", "sync_repo", "init_repo", "recover"):
        assert re.search(rf"from gitmem import [^\n]*\b{public}\b", source), public


def test_a_public_name_is_what_its_module_holds_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a copy taken on first use: patching the layer's function patches the API's."""
    from gitmem.memory import audit

    real = gitmem.read_card  # used once already: a cached copy would stay this
    assert real is audit.read_card

    def fake(*_args: object, **_kwargs: object) -> str:
        return "patched"

    monkeypatch.setattr(audit, "read_card", fake)
    from gitmem import read_card

    assert read_card is fake
    monkeypatch.undo()
    assert gitmem.read_card is real
