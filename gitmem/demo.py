"""``gitmem demo``: why gitmem exists, in five short stages, with no API key.

1. a session writes memory (each edit one commit, its index entry in the trailers);
2. a new session, a fresh context, is asked "What do we know about Acme?": the model
   has only the index in its prompt, reads the sections it points to, and answers
   citing them;
3. a session under the review policy waits like a pull request and is accepted in part;
4. an edit that turned out wrong is reverted;
5. what it all cost, with the prompt cache and without.

The replies come from ``fakeapi.RuleModel``, a scripted stand-in served on 127.0.0.1
in this process: it reads the index it is sent and calls the tools as a model would.
Everything else -- the repo, commits, trailers, index, review, revert, cache
accounting and usage report -- is real.
"""

from __future__ import annotations

import shlex
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from gitmem.agent import usage, usage_report
from gitmem.agent.chat import ChatResult, run_chat
from gitmem.agent.chat_view import tool_line
from gitmem.agent.events import AgentEvents, ToolCall
from gitmem.features.audit import read_card
from gitmem.features.revert import revert_commit
from gitmem.index import build as index
from gitmem.memory import trailers as T
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.ops.history import read_log
from gitmem.review import decision as decide
from gitmem.review import pending as review
from gitmem.review import render as review_text
from gitmem.setup.init import init_repo

CARD = "acme-website"
FIRST = [
    f"remember {CARD} Budget: Q3 budget is 30k, agreed on the 2026-11-20 call with Dana",
    f"remember {CARD} Next steps: Send the revised mockups to Dana by Friday",
    f"update {CARD} budget: 30k => 40k",
]
QUESTION = "What do we know about Acme?"
UNDER_REVIEW = [
    f"remember {CARD} Risks: Launch may slip to January if the mockups are late",
    f"update {CARD} next-steps: by Friday => by next year",
]

BANNER = (
    "gitmem demo: SIMULATED MODEL. Replies come from a scripted stand-in served on "
    "127.0.0.1, not from Claude; no API key is used. The repo, commits, index, review, "
    "revert and usage report are real."
)

Write = Callable[[str], None]


class DemoEvents(AgentEvents):
    """The chat as plain text: replies, one line per tool call, and what a read returned."""

    def __init__(self, write: Write) -> None:
        self.write = write
        self.open = False

    def text(self, chunk: str) -> None:
        if not self.open:
            self.write("model> ")
            self.open = True
        self.write(chunk)

    def text_end(self) -> None:
        if self.open:
            self.write("\n")
            self.open = False

    def tool(self, call: ToolCall) -> None:
        self.text_end()
        self.write(f"  {tool_line(call)}\n")
        if call.name == "read_memory_card" and not call.is_error:
            for line in call.result.strip("\n").splitlines():
                self.write(f"  │ {line}\n")


def _session(
    repo: MemoryRepo, client: Any, write: Write, lines: Iterable[str], policy: str | None = None
) -> ChatResult:
    script = list(lines)
    shown = iter(script)

    def prompt() -> None:
        nxt = next(shown, None)
        if nxt is not None:
            write(f"you> {nxt}\n")

    return run_chat(
        repo,
        script,
        client=client,
        write=write,
        prompt=prompt,
        policy=policy,
        warn=lambda m: write(f"warning: {m}\n"),
        events=DemoEvents(write),
    )


def _stage(write: Write, title: str, why: str) -> None:
    write(f"\n━━ {title}\n{why}\n\n")


def _edits(repo: MemoryRepo, session: str) -> list[Any]:
    return [
        c
        for c in read_log(repo.git, MAIN, reverse=True)
        if c.get(T.SESSION) == session and c.get(T.CARD)
    ]


def run_demo(write: Write, keep: Path | None = None) -> Path:
    """A scripted session against a simulated model (no API key), narrated through
    ``write``; returns the demo repo's folder (``keep``, else a new temporary one)."""
    import anthropic

    from .fakeapi import FakeAnthropicServer, RuleModel

    base = keep or Path(tempfile.mkdtemp(prefix="gitmem-demo-"))
    root = base / "demo-client"
    init_repo(root, "demo-client")
    write(BANNER + "\n")
    with FakeAnthropicServer(RuleModel()) as server, MemoryRepo(root) as repo:
        client = anthropic.Anthropic(
            api_key=usage.SIMULATED_KEY, base_url=server.base_url, max_retries=0
        )

        _stage(
            write,
            "1. A session writes memory",
            "Each edit is one git commit; its index entry rides in the commit's trailers.",
        )
        first = _session(repo, client, write, FIRST)
        write(f"\nsession {first.session} ended; its edits landed on main:\n")
        for c in _edits(repo, first.session):
            write(f"  {c.sha[:7]} {c.subject}\n")
            for key in (T.CARD, T.SECTION, T.SUMMARY):
                write(f"          {key}: {c.get(key)}\n")

        _stage(
            write,
            "2. A new session, a fresh context: the memory is used",
            "The model is sent only this index, not the cards (the prompt stays small):",
        )
        write(index.refresh(repo).render())
        write("\n")
        _session(repo, client, write, [QUESTION])

        _stage(
            write,
            "3. A session under review, like a pull request",
            'With review policy "review", a session\'s edits wait on its branch.',
        )
        pending = _session(repo, client, write, UNDER_REVIEW, policy="review")
        write("\n$ gitmem review " + pending.session + "\n")
        view = review.load_session(repo, pending.session)
        write(review_text.plain(review_text.show_lines(view)))
        keep_sha = next(c.sha for c in view.edits if c.commit.get(T.SECTION) == "risks")
        write(f"\nThe risk is right, the new deadline is not: accept only {keep_sha[:7]}.\n")
        write(f"$ gitmem review {pending.session} --accept --commit {keep_sha[:7]}\n")
        write(
            review_text.decision_text(
                decide.accept_session(repo, pending.session, commits=[keep_sha])
            )
        )

        _stage(
            write,
            "4. A revert",
            "Dana writes that the budget is still 30k: undo the edit that raised it.",
        )
        raised = next(c for c in _edits(repo, first.session) if "40k" in (c.get(T.SUMMARY) or ""))
        done = revert_commit(repo, raised.sha)
        write(f"$ gitmem revert {raised.sha[:7]}\n")
        write(f"reverted {raised.sha[:7]} in {done.commit[:7]}; {CARD} § budget now reads:\n")
        for line in read_card(repo, CARD, "budget").strip("\n").splitlines():
            write(f"  │ {line}\n")
        write("\n" + index.refresh(repo).render())

        _stage(
            write,
            "5. What it cost",
            "Every request's tokens are logged; the stable prompt prefix is read from cache.",
        )
        reports = usage_report.usage_by_session(usage.load_usage(repo))
        write(usage_report.render(reports))
        cost = sum(r.cost_usd for r in reports)
        uncached = sum(r.uncached_cost_usd for r in reports)
        saved = 1 - cost / uncached if uncached else 0.0
        write(
            f"\nall {len(reports)} sessions: ${cost:.4f} with the prompt cache, "
            f"${uncached:.4f} without it ({saved:.0%} saved)\n"
        )
    write(f"\nThe demo repo is at {root}; try `gitmem -C {shlex.quote(str(root))} log`.\n")
    return root
