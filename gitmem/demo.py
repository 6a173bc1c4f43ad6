"""``gitmem demo``: a complete session against a simulated model, with no API key.

The replies come from ``fakeapi.RuleModel``, a scripted stand-in served on
127.0.0.1 in this process; everything else -- the repo, the commits and their
trailers, the index, the prompt cache accounting and the usage report -- is real.
"""

from __future__ import annotations

import shlex
import tempfile
from collections.abc import Callable
from pathlib import Path

from . import index, usage, usage_report
from .chat import run_chat
from .create import init_repo
from .repo import MemoryRepo

SCRIPT = [
    "remember acme-website Budget: Q3 budget is 30k, agreed on the 2026-11-20 call with Dana",
    "remember acme-website Next steps: Send the revised mockups to Dana by Friday",
    "update acme-website budget: 30k => 40k",
    "recall acme-website budget",
    "search mockups",
    "update acme-website budget: 99k => 50k",
    "What do we know about Acme?",
]

BANNER = (
    "gitmem demo: SIMULATED MODEL. Replies come from a scripted stand-in served on "
    "127.0.0.1, not from Claude; no API key is used. The repo, commits, index and "
    "usage report are real."
)


def run_demo(write: Callable[[str], None], keep: Path | None = None) -> Path:
    import anthropic

    from .fakeapi import FakeAnthropicServer, RuleModel

    base = keep or Path(tempfile.mkdtemp(prefix="gitmem-demo-"))
    root = base / "demo-client"
    init_repo(root, "demo-client")
    write(BANNER + "\n\n")
    with FakeAnthropicServer(RuleModel()) as server, MemoryRepo(root) as repo:
        client = anthropic.Anthropic(api_key="simulated", base_url=server.base_url, max_retries=0)
        lines = iter(SCRIPT)

        def say() -> None:
            nxt = next(lines, None)
            if nxt is not None:
                write(f"you> {nxt}\n")
                pending.append(nxt)
            write("" if nxt is None else "model> ")

        pending: list[str] = []
        inputs = (pending.pop(0) for _ in SCRIPT)
        result = run_chat(repo, inputs, client=client, write=write,
                          warn=lambda m: write(f"warning: {m}\n"), prompt=say)
        write(f"\nSession {result.session} ended; its edits landed on main.\n\n")
        write("Memory commits (git log --format='%h %s%n%(trailers)' -- cards):\n")
        write(repo.git.out("log", "--format=%h %s%n%(trailers)", "main", "--", "cards") + "\n\n")
        write(index.refresh(repo).render() + "\n")
        write(usage_report.render(usage_report.report(usage.load(repo))))
    write(f"\nThe demo repo is at {root}; try `gitmem -C {shlex.quote(str(root))} log`.\n")
    return root
