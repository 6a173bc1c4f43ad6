"""The chat's terminal pieces without a terminal: tool lines, the footer and its setting."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from gitmem.agent.chat_view import TurnTotals, tool_line
from gitmem.agent.events import ResponseUsage, ToolCall
from gitmem.cli.chat_screen import Screen
from gitmem.errors import ConfigError
from gitmem.memory.config import load_file as load

WRITE = {
    "project": "acme",
    "old_text": "",
    "new_text": "x",
    "index_entry": {"section_id": "budget", "keywords": [], "summary": "s"},
}


def test_each_tool_call_is_one_line_naming_what_it_did() -> None:
    assert (
        tool_line(ToolCall("write_memory_card", WRITE, False, "ok 1234567"))
        == "✎ acme § budget written"
    )
    assert tool_line(ToolCall("write_memory_card", WRITE, True, "old_text not found\nmore")) == (
        "✗ writing acme § budget failed: old_text not found"
    )
    assert (
        tool_line(ToolCall("read_memory_card", {"project": "acme"}, False, "# acme"))
        == "▸ read acme"
    )
    assert (
        tool_line(
            ToolCall(
                "read_memory_card", {"project": "acme", "section_id": "risks"}, False, "## Risks"
            )
        )
        == "▸ read acme § risks"
    )
    assert tool_line(ToolCall("search_history", {"query": "mockups"}, False, "a\nb\n")) == (
        '⌕ searched "mockups": 2 matches'
    )
    assert tool_line(ToolCall("search_history", {"query": "x"}, False, "No matches.")) == (
        '⌕ searched "x": no match'
    )


def _turn(footer: bool) -> str:
    out = io.StringIO()
    screen = Screen(Console(file=out, width=100, force_terminal=False), footer=footer)
    screen.waiting("claude-x")
    for chunk in ("Saving", " that."):
        screen.text(chunk)
    screen.text_end()
    screen.tool(ToolCall("write_memory_card", WRITE, False, "ok"))
    screen.response(ResponseUsage(1000, 900, 10, 0.001, 0.003))
    screen.text("Done.")
    screen.text_end()
    screen.response(ResponseUsage(1100, 1000, 5, 0.0005, 0.0033))
    screen.turn_end()
    return out.getvalue()


def test_a_turn_ends_with_its_footer_unless_turned_off() -> None:
    # (how the blocks look on a real screen: tests/test_chat_terminal.py)
    shown = _turn(footer=True)
    assert "Saving that." in shown and "Done." in shown and "✎ acme § budget written" in shown
    assert shown.rstrip().endswith("2,100 in (90% cached) · 15 out · $0.0015 (uncached $0.0063)")
    quiet = _turn(footer=False)
    assert "Done." in quiet and "cached" not in quiet


def test_footer_setting_in_gitmem_toml(tmp_path: Path) -> None:
    assert load(tmp_path).chat_footer is True
    (tmp_path / "gitmem.toml").write_text("[chat]\nfooter = false\n")
    assert load(tmp_path).chat_footer is False
    (tmp_path / "gitmem.toml").write_text('[chat]\nfooter = "no"\n')
    with pytest.raises(ConfigError, match=r"chat\.footer must be bool"):
        load(tmp_path)


def test_totals_add_up_every_response() -> None:
    t = TurnTotals()
    t.add(ResponseUsage(10, 0, 1, 0.5, 1.0))
    t.add(ResponseUsage(30, 20, 2, 0.25, 1.0))
    assert (t.requests, t.input_tokens, t.cache_read_tokens, t.output_tokens) == (2, 40, 20, 3)
    assert t.footer() == "40 in (50% cached) · 3 out · $0.7500 (uncached $2.0000)"
