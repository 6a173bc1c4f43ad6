"""Sessions with the simulated model, one process each, through the installed ``gitmem``:
every session's usage is counted, and ``recall`` answers with what it read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

GITMEM = str(Path(sys.executable).with_name("gitmem"))


def _run(client: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    return subprocess.run(
        [GITMEM, "-C", str(client), *args], capture_output=True, text=True, check=False,
        timeout=120, env=env,
    )  # fmt: skip


def _ask(client: Path, message: str) -> dict[str, Any]:
    proc = _run(client, "ask", "--simulated", "--json", message)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def test_each_simulated_session_has_its_usage_counted(client: Path) -> None:
    first = _ask(client, "search hello")
    second = _ask(client, "search hello")
    assert first["session"] != second["session"]
    assert first["usage"]["requests"] == second["usage"]["requests"] == 2
    logged = [json.loads(line) for line in (client / "logs/usage.jsonl").read_text().splitlines()]
    assert len(logged) == 4
    report = json.loads(_run(client, "usage", "--json").stdout)
    assert sorted(s["session"] for s in report["sessions"]) == sorted(
        [first["session"], second["session"]]
    )
    assert report["total"]["sessions"] == 2 and report["total"]["requests"] == 4
    one = _run(client, "usage", "--session", second["session"])
    assert one.returncode == 0, one.stderr
    # labelled as the scripted model's, beside the model it stood in for
    assert f"session {second['session']} (simulated model): 2 requests" in one.stdout
    assert all(s["simulated"] for s in report["sessions"])
    assert all(m["name"].endswith(" (simulated)") for m in report["models"]), report


def test_recall_answers_with_the_text_it_read(client: Path) -> None:
    _ask(client, "remember acme-website Risks: the launch may slip past June")
    _ask(client, "remember acme-website Budget: 40k agreed with Dana")
    section = _ask(client, "recall acme-website risks")["reply"]
    assert "## Risks" in section and "the launch may slip past June" in section
    assert "40k agreed" not in section
    card = _ask(client, "recall acme-website")["reply"]
    assert "the launch may slip past June" in card and "40k agreed with Dana" in card
