"""``gitmem consolidate``: the model proposes a compaction of memory as a session that always
waits for review, whatever ``memory.review`` says.

The model gets one user turn naming the work: merge near-duplicate sections, compact long
ones, resolve contradictions, refresh stale summaries (from ``gitmem stale``) and bring
the index under its budget. It works with the same tools as any session
(``read_memory_card``, ``write_memory_card``: surgical edits with index entries); with
``card`` it may write to that card only. Its commits wait on ``gitmem/session/<id>``
(ids end in ``-consolidate``), and ``gitmem review`` shows, per card and for the I block,
the tokens before and after. Nothing lands without ``gitmem review --accept``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from gitmem.agent import budget, usage
from gitmem.agent.session import AgentSession
from gitmem.agent.tools import MemoryTools, ToolResult
from gitmem.errors import InvalidInput, ModelError, NotFound
from gitmem.index import build as index_mod
from gitmem.index.stale import stale_report
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.review import session_branches as sessions
from gitmem.wording import count

SUFFIX = "-consolidate"

TASK = """\
Consolidate long-term memory{scope}. You are not talking to a person: a person will review
every edit you make before it lands, as one pull request.

Do, with read_memory_card and write_memory_card (surgical edits, each with its index entry):
1. Merge near-duplicate sections: keep the fact in one place, and cut the other copy down to
   what only it says (or a one-line pointer to where the fact lives).
2. Compact long sections: shorter wording, no repetition, every fact, figure, date and
   name kept.
3. Resolve contradictions: keep the newer, dated fact; say what it replaced.
4. Refresh stale summaries: read the section; write the summary of what it holds now (the
   same line as old_text and new_text when the text needs no change).
Never drop a fact you are not sure is duplicated. Stop when nothing more is worth doing and
say in one paragraph what you changed.

{work}"""


def is_consolidation(session_id: str) -> bool:
    """Whether ``session_id`` names a consolidation session."""
    return session_id.endswith(SUFFIX)


class ScopedTools(MemoryTools):
    """The session's tools, writing only to the cards being consolidated."""

    scope: frozenset[str] = frozenset()

    def call(self, name: str, args: object) -> ToolResult:
        if name == "write_memory_card" and self.scope and isinstance(args, dict):
            project = args.get("project")
            if project not in self.scope:
                return ToolResult(
                    f"Error: this consolidation may only edit {', '.join(sorted(self.scope))}",
                    is_error=True,
                )
        return super().call(name, args)


def work_list(repo: MemoryRepo, card: str | None) -> str:
    """What the model is told to look at: cards and sizes, the stale report, the budget."""
    idx = index_mod.refresh(repo, MAIN)
    rep = stale_report(repo)
    mine = [c for c in idx.cards if card is None or c.project == card]
    size = budget.measure(repo, index_mod.rendered(repo, MAIN, full=True))  # not folded
    lines = [f"The memory index is {size.line()}."]
    lines.append("Cards:")
    for c in mine:
        lines.append(f"- {c.project}: {count(len(c.sections), 'section')}")
    inside = {c.project for c in mine}
    stale = [s for s in rep.stale if s.card in inside]
    if stale:
        lines.append("Stale entries (the section changed after its summary):")
        lines += [f"- {s.card} § {s.section}: {s.summary}" for s in stale]
    nums = [n for n in rep.numbers if n.card in inside]
    if nums:
        lines.append("Summaries naming numbers or dates their section lacks:")
        lines += [f"- {n.card} § {n.section}: {', '.join(n.missing)}" for n in nums]
    dups = [
        d
        for d in rep.duplicates
        if d.first.split(" § ")[0] in inside or d.second.split(" § ")[0] in inside
    ]
    if dups:
        lines.append("Near-duplicate sections:")
        lines += [f"- {d.first} and {d.second} ({d.similarity:.0%} alike)" for d in dups]
    unindexed = [u for u in rep.unindexed if u.split(" § ")[0] in inside]
    if unindexed:
        lines.append("Sections without a summary:")
        lines += [f"- {u}" for u in unindexed]
    return "\n".join(lines)


@dataclass(frozen=True)
class ConsolidateResult:
    """A consolidation session: its id, the edits the model made, whether they wait for
    review, and the model's last reply."""

    session: str
    edits: int
    pending: bool
    reply: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def consolidate(
    repo: MemoryRepo,
    *,
    client: Any,
    card: str | None = None,
    warn: Callable[[str], None] = lambda _m: None,
    write: Callable[[str], None] = lambda _t: None,
) -> ConsolidateResult:
    """One consolidation session; its edits always wait for review."""
    if repo.tip(MAIN) is None:
        raise NotFound("no main branch")
    idx = index_mod.refresh(repo, MAIN)
    if card is not None:
        from gitmem.memory import names

        names.project(card)
        if idx.card(card) is None:
            raise NotFound(f"no card {card!r}; `gitmem cards` lists them")
    elif not idx.cards:
        raise InvalidInput("no cards to consolidate yet")
    task = TASK.format(scope=f" in the card {card}" if card else "", work=work_list(repo, card))
    session = sessions.start_session(repo, sessions.new_id() + SUFFIX)
    reply = ""
    failed: ModelError | None = None
    try:
        agent = AgentSession(repo, session, client, warn=warn)
        if card is not None:
            scoped = ScopedTools(
                repo, session.branch, session.id, "agent", agent.tools.live_transcripts
            )
            scoped.scope = frozenset({card})
            agent.tools = scoped
        try:
            reply = agent.ask(task, write)
        except ModelError as err:
            failed = err
    finally:
        fin = sessions.finish_session(repo, session, "review")
        usage.commit_session(repo, session.id)
    if failed is not None:
        kept = f"; its {count(fin.edits, 'edit')} wait for review" if fin.pending else ""
        raise ModelError(f"{failed} (consolidation session {session.id}{kept})")
    return ConsolidateResult(session.id, fin.edits, fin.pending, reply)
