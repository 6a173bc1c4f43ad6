"""docs/api.md runs as written, and `gitmem`'s public names are what it says they are."""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest

import gitmem

DOC = Path(__file__).resolve().parent.parent / "docs" / "api.md"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
# A name in __all__ that is a subpackage or module too would be shadowed by it (or shadow
# it) depending on what was imported first.
_MODULES = {
    p.stem
    for p in Path(gitmem.__file__).parent.iterdir()
    if p.suffix == ".py" or (p / "__init__.py").exists()
}


def examples(text: str) -> list[tuple[str, str | None]]:
    """Each ```python block with the ```text block right after it (what it prints), if any."""
    blocks = [(m.group(1), m.group(2), m.start(), m.end()) for m in _FENCE.finditer(text)]
    out: list[tuple[str, str | None]] = []
    for i, (lang, body, _start, end) in enumerate(blocks):
        if lang != "python":
            continue
        after = blocks[i + 1] if i + 1 < len(blocks) else None
        shown = (
            after[1] if after and after[0] == "text" and not text[end : after[2]].strip() else None
        )
        out.append((body, shown))
    return out


def test_every_example_runs_and_prints_what_the_doc_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    found = examples(DOC.read_text())
    assert len(found) >= 19
    namespace: dict[str, object] = {"__name__": "api_doc"}
    for n, (code, shown) in enumerate(found, 1):
        out = io.StringIO()
        # the examples set and unset variables (EDITOR, GITMEM_HOME, the API's): kept here
        with contextlib.redirect_stdout(out), mock.patch.dict(os.environ):
            exec(compile(code, f"{DOC.name} example {n}", "exec"), namespace)
        if shown is not None:
            assert out.getvalue() == shown, f"example {n} of {DOC.name} printed:\n{out.getvalue()}"
    assert (tmp_path / "acme" / "gitmem.toml").is_file()  # they ran here, not elsewhere


# The functions no example runs: they serve MCP on the process's own stdin and stdout
# until the client disconnects, or over HTTP until stopped. The doc shows them in a ```py
# block (shown, not run) and says why; tests/test_mcp_server.py and test_mcp_http.py run
# them, as `gitmem mcp [--http]`, with the official MCP client.
NOT_RUN = {"serve_mcp", "serve_mcp_http", "serve_ui"}


def test_the_doc_shows_every_public_function() -> None:
    code = "\n".join(body for body, _ in examples(DOC.read_text()))
    functions = [n for n in gitmem.__all__ if inspect.isfunction(getattr(gitmem, n))]
    assert len(functions) >= 45
    missing = {n for n in functions if not re.search(rf"\b{n}\(", code)}
    assert missing == NOT_RUN  # an example that runs one takes it off the list
    shown = "\n".join(m.group(2) for m in _FENCE.finditer(DOC.read_text()) if m.group(1) == "py")
    assert [n for n in NOT_RUN if not re.search(rf"\b{n}\(", shown)] == []
    text = DOC.read_text()
    assert [n for n in gitmem.__all__ if f"`{n}`" not in text] == []


def test_every_public_name_imports_and_says_what_it_is() -> None:
    assert sorted(gitmem.__all__) == sorted(set(gitmem.__all__))
    for name in gitmem.__all__:
        value = getattr(gitmem, name)
        assert value.__name__ == name, f"{name} is {value.__name__} renamed on export"
        assert name not in _MODULES, f"{name} is also a module of gitmem"
        doc = inspect.getdoc(value) or ""
        # a dataclass without a docstring gets its signature as __doc__
        assert doc and not doc.startswith(f"{value.__name__}("), f"{name} has no docstring"
        assert value.__module__.startswith("gitmem."), name
    assert issubclass(gitmem.NotFound, gitmem.GitmemError)
    unknown = "no_such_name"
    with pytest.raises(AttributeError, match=unknown):
        getattr(gitmem, unknown)
    assert set(gitmem.__all__) <= set(dir(gitmem))


def test_the_names_carry_their_types(client: Path) -> None:
    """Typed for mypy --strict (this file is checked): a name the lazy loader served
    untyped would be ``object`` here, and these calls would not type-check."""
    from gitmem import EditResult, IndexEntry, MemoryRepo, open_repo, read_card, write_card

    with open_repo(client / "cards") as repo:
        assert isinstance(repo, MemoryRepo)
        res: EditResult = write_card(
            repo,
            "acme",
            "",
            "## Team\n\nAda leads.\n",
            IndexEntry.make("team", ["team"], "Ada leads"),
        )
        text: str = read_card(repo, "acme", res.section)
    assert text == "## Team\n\nAda leads.\n"
    assert res.to_json()["card"] == "acme"
    with open_repo("~/../client") as again:  # HOME is tmp_path/home here
        assert again.root == client.resolve()
    with pytest.raises(gitmem.NotARepo):
        open_repo(client.parent)


def test_the_commands_operations_carry_their_types(client: Path) -> None:
    """The same for what the other commands use: results typed as their classes."""
    from gitmem import (
        CardInfo,
        RepoStatus,
        ScanResult,
        SearchHit,
        StaleReport,
        list_cards,
        open_repo,
        repo_status,
        scan_secrets,
        search_history,
        stale_report,
    )

    with open_repo(client) as repo:
        cards: list[CardInfo] = list_cards(repo)
        st: RepoStatus = repo_status(repo)
        hits: list[SearchHit] = search_history(repo, "acme")
        rep: StaleReport = stale_report(repo)
        found: ScanResult = scan_secrets(repo)
    assert isinstance(st, gitmem.RepoStatus) and st.branch == "main"
    assert all(isinstance(c, gitmem.CardInfo) for c in cards)
    assert all(isinstance(h, gitmem.SearchHit) for h in hits)
    assert rep.to_json()["stale"] == [] and found.hits == []


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


# What a command may import from a module of gitmem other than `gitmem` itself: the
# presentation of a result (text lines, styles, the terminal chat, log columns, progress,
# crash reports, `ask --json`'s document), the checks of a command-line value made before
# any work (the operation makes them again), the steps of a terminal-only command (`gitmem
# edit` in $EDITOR), and the errors with their exit codes. Everything else, every
# operation and its result type, comes from the public API. module -> names ("*": any).
PRESENTATION: dict[str, set[str]] = {
    "gitmem.errors": {"*"},  # exceptions and exit codes (the exceptions are public too)
    "gitmem.crash": {"write_report"},  # the report a bug writes (exit 70)
    "gitmem.wording": {"count", "visible"},  # "1 card", "2 cards"; memory's text shown inert
    "gitmem.cli.log_text": {"render"},  # gitmem log's columns
    "gitmem.review.render": {
        *("plain", "entry_line", "hunk_lines", "list_lines", "show_lines"),
        *("finish_text", "decision_text", "revert_text"),  # a session ended, decided, reverted
    },
    "gitmem.search.snippets": {"lines"},  # gitmem search's text
    "gitmem.index.card_list": {"size"},  # "1.2 KiB"
    "gitmem.agent.usage_report": {"render"},  # gitmem usage's table
    "gitmem.git.progress": {"*"},  # progress lines on the terminal
    "gitmem.memory.names": {"*"},  # checks of a value before the work starts
    # the terminal chat screen: its view of a turn, its slash commands over the running
    # session, and the event types it implements (a program passes its own to run_chat)
    "gitmem.agent.chat_view": {"*"},
    "gitmem.agent.chat_commands": {"*"},
    "gitmem.agent.session": {"AgentSession"},
    "gitmem.agent.events": {"*"},
    "gitmem.agent.chat_report": {"*"},  # what `gitmem ask --json` prints
    # `gitmem edit`'s steps: the buffer, $EDITOR, the section a whole-card edit changed
    "gitmem.features.editor": {"*"},
    "gitmem.memory.cards": {"sections", "card_of", "card_path"},  # card names <-> paths
    "gitmem.status": {"lines"},  # gitmem status's text
    "gitmem.agent.client": {"require_key"},  # the key checked before the SDK loads
    # --simulated: the scripted model `gitmem demo` (public run_demo) serves, and its label
    "gitmem.fakeapi": {"FakeAnthropicServer", "RuleModel"},
    "gitmem.fakeapi.rules": {"LABEL", "USAGE"},
    "gitmem.agent.usage": {"SIMULATED_KEY"},  # its client's key: its usage is labelled so
    "gitmem.setup.clone": {"default_path"},  # where `gitmem clone URL` puts it
    "gitmem.review.revert_session": {"is_session"},  # `gitmem revert COMMIT|SESSION`
    # gitmem sync's text: the ref that keeps the remote's side, the held settings shown
    "gitmem.memory.refs": {"CONFLICT_REMOTE"},
    "gitmem.memory.trust": {"SIGNERS", "shown"},
}


def _cli_imports() -> list[tuple[str, str, str]]:
    """(cli file, module, name) for every import of gitmem's modules in gitmem/cli/*.py;
    ``from gitmem.review import decision`` is the module gitmem.review.decision."""
    cli = Path(gitmem.__file__).parent / "cli"
    found: list[tuple[str, str, str]] = []
    for path in sorted(cli.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found += [
                    (path.name, a.name, "*") for a in node.names if a.name.startswith("gitmem")
                ]
            elif isinstance(node, ast.ImportFrom):
                if node.level == 1:
                    continue  # the cli package's own modules
                base = "gitmem" if node.level == 2 else node.module or ""
                module = f"{base}.{node.module}" if node.level == 2 and node.module else base
                if module.split(".")[0] != "gitmem":
                    continue
                for a in node.names:
                    sub = f"{module}.{a.name}"
                    is_module = (
                        Path(gitmem.__file__)
                        .parent.joinpath(*sub.split(".")[1:])
                        .with_suffix(".py")
                    ).is_file()
                    found.append(
                        (path.name, sub, "*") if is_module else (path.name, module, a.name)
                    )
    return found


def test_the_cli_gets_every_operation_from_the_public_api() -> None:
    """The commands import what does the work from `gitmem`, and from a layer's module only
    what PRESENTATION allows (how a result is shown, a value checked, an error's code)."""
    imports = _cli_imports()
    assert len(imports) > 40
    internal = [
        (f, m, n)
        for f, m, n in imports
        if m != "gitmem" and not ({"*", n} & PRESENTATION.get(m, set()))
    ]
    assert internal == []
    public = {n for _f, m, n in imports if m == "gitmem"}
    assert public <= set(gitmem.__all__)
    for name in (
        "write_card",
        "read_card",
        "render_index",
        "read_index",
        "reindex",
        "audit_log",
        "revert_commit",
        "revert_session",
        "list_sessions",
        "accept_session",
        "reject_session",
        "sync_repo",
        "init_repo",
        "recover",
        "run_chat",
        "make_client",
        "load_usage",
        "run_demo",
        "serve_mcp",
        "list_cards",
        "clone_repo",
        "consolidate",
        "import_notes",
        "export_cards",
        "scan_secrets",
        "redact_secrets",
        "search_history",
        "stale_report",
        "repo_status",
        "list_clients",
        "install_hooks",
        "push_session",
        "session_markdown",
        "token_sizes",
    ):
        assert name in public, name


def test_a_public_name_is_what_its_module_holds_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a copy taken on first use: patching the layer's function patches the API's."""
    from gitmem.features import audit

    real = gitmem.read_card  # used once already: a cached copy would stay this
    assert real is audit.read_card

    def fake(*_args: object, **_kwargs: object) -> str:
        return "patched"

    monkeypatch.setattr(audit, "read_card", fake)
    from gitmem import read_card

    assert read_card is fake
    monkeypatch.undo()
    assert gitmem.read_card is real
