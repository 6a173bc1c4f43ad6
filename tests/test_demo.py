"""`gitmem demo` end to end: every stage shows, from real git state, in under a minute."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

from helpers import git

GITMEM = str(Path(sys.executable).with_name("gitmem"))


def _stage(out: str, n: int) -> str:
    start = out.index(f"━━ {n}. ")
    end = out.find(f"━━ {n + 1}. ", start)
    return out[start : end if end > 0 else len(out)]


def test_the_demo_shows_memory_written_used_reviewed_reverted_and_its_cost(tmp_path: Path) -> None:
    started = time.monotonic()
    proc = subprocess.run(
        [GITMEM, "demo", "--keep", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert took < 60, f"the demo took {took:.1f}s"
    out, root = proc.stdout, tmp_path / "demo-client"
    assert out.startswith("gitmem demo: SIMULATED MODEL.")
    assert "→" not in out  # summaries say what a section holds, not what changed

    written = _stage(out, 1)
    assert written.count("✎ acme-website § budget written") == 2
    assert "Gitmem-Summary: Q3 budget is 40k, agreed on the 2026-11-20 call with Dana" in written

    used = _stage(out, 2)
    assert "\n## acme-website\n" in used and "## acme-website:" not in used
    reads = used.index("▸ read acme-website § budget")
    assert used.index("│ Q3 budget is 40k, agreed on the 2026-11-20 call with Dana") > reads
    answer = used[used.index("model> From memory:") :]
    assert (
        "Q3 budget is 40k, agreed on the 2026-11-20 call with Dana (acme-website § budget)"
        in answer
    )
    assert "Send the revised mockups to Dana by Friday (acme-website § next-steps)" in answer
    # The session started from the question alone (a fresh context): the model read the
    # sections the index named, and answered from what the reads returned.
    files = git(root, "ls-tree", "--name-only", "main", "sessions/").split()
    transcripts = [
        [json.loads(ln) for ln in git(root, "show", f"main:{f}").splitlines()]
        for f in files
        if f.endswith(".jsonl")
    ]
    assert len(transcripts) == 3
    asked = [t for t in transcripts if t[0]["text"] == "What do we know about Acme?"]
    assert len(asked) == 1
    transcript = asked[0]
    calls = [b["input"] for b in transcript[1]["content"] if b["type"] == "tool_use"]
    assert calls == [
        {"project": "acme-website", "section_id": "budget"},
        {"project": "acme-website", "section_id": "next-steps"},
    ]
    assert "Q3 budget is 40k" in transcript[2]["content"][0]["content"]
    assert transcript[3]["text"].startswith("From memory:") and len(transcript) == 4

    reviewed = _stage(out, 3)
    assert (
        "(pending): 2 edits to 1 card" in reviewed and "[1] @@" in reviewed and "[2] @@" in reviewed
    )
    assert "accepted in part" in reviewed
    card = git(root, "show", "main:cards/acme-website.md")
    assert "## Risks\nLaunch may slip to January" in card
    assert "by Friday" in card and "by next year" not in card

    reverted = _stage(out, 4)
    assert "│ Q3 budget is 30k, agreed on the 2026-11-20 call with Dana" in reverted
    assert "Q3 budget is 30k" in card and "40k" not in card
    assert "- budget: Q3 budget is 30k, agreed" in reverted  # the index follows the revert
    assert git(root, "log", "-1", "--format=%s", "--", "cards").startswith(
        'Revert "acme-website: Q3 budget is 40k'
    )

    cost = _stage(out, 5)
    match = re.search(
        r"all 3 sessions: \$([\d.]+) with the prompt cache, \$([\d.]+) without it", cost
    )
    assert match, cost
    assert 0 < float(match.group(1)) < float(match.group(2))
    assert git(root, "status", "--porcelain") == ""
