"""Opening a search hit: the whole passage its ``ref`` points to.

A transcript hit's ref is ``<session>#<turn>``: opening it gives that turn whole (what
the user said and the reply) with the turns around it. A section hit's ref is
``<card>/<section>`` (the value in force) or ``<card>/<section>@<commit>`` (a past
value): opening it gives the section's text as that commit wrote it. A long section's
hit points to the passage that answers: ``<card>/<section>#<n>`` opens its passage n
(``windows.passages``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gitmem.errors import InvalidInput, NotFound
from gitmem.memory import names
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.search.documents import Doc, card_sections, turn_docs
from gitmem.search.windows import passages

AROUND = 1  # turns shown before and after the one a hit points to
BUDGET = 6000  # characters of a passage; the turn itself is always whole
_TURN = re.compile(r"^(?P<session>[A-Za-z0-9][A-Za-z0-9._-]*)#(?P<turn>[1-9][0-9]{0,6})$")
_SECTION = re.compile(
    r"^(?P<card>[a-z0-9][a-z0-9._-]*)/(?P<section>[a-z0-9][a-z0-9-]*)(?:@(?P<commit>[0-9a-f]{7,40}))?"
    r"(?:#(?P<part>[1-9][0-9]{0,5}))?$"
)


def is_ref(text: str) -> bool:
    """Whether ``text`` is a hit's ref (``session#turn`` or ``card/section[@commit][#n]``)."""
    return bool(_TURN.match(text) or _SECTION.match(text))


@dataclass(frozen=True)
class Passage:
    """What a hit's ``ref`` opens to: the ``text`` (a turn with its neighbours, or a
    section), and ``date``, when a turn was said ("" for a section)."""

    ref: str
    text: str
    date: str


def open_hit(repo: MemoryRepo, ref: str, *, branch: str = MAIN) -> Passage:
    """The passage a hit's ``ref`` points to. Raises ``InvalidInput`` for a malformed ref
    and ``NotFound`` when its session, turn, card or section does not exist."""
    branch = names.branch(branch)
    if m := _SECTION.match(ref):
        got = _section(repo, ref, m["card"], m["section"], m["commit"] or branch)
        return _part(got, int(m["part"])) if m["part"] else got
    if m := _TURN.match(ref):
        return _turns(repo, ref, m["session"], int(m["turn"]), branch)
    raise InvalidInput(
        f"{ref!r} is not a search hit's ref: give <session>#<turn> or <card>/<section>[@commit][#n] "
        "as search_history printed it"
    )


def _section(repo: MemoryRepo, ref: str, card: str, section: str, rev: str) -> Passage:
    if repo.store.resolve(f"{rev}^{{commit}}") is None:  # before a path in it is read
        raise NotFound(f"no commit {rev!r} in this repo; `gitmem log` lists the edits")
    data = repo.store.read_blob(f"{rev}:cards/{card}.md")
    if data is None:
        raise NotFound(f"no card {card} at {rev}; `gitmem cards` lists the cards")
    title, secs = card_sections(data.decode("utf-8", "replace"))
    for sid, heading, text in secs:
        if sid == section:
            return Passage(ref, f"{title} § {heading}\n{text}", "")
    ids = ", ".join(s[0] for s in secs) or "none"
    raise NotFound(f"card {card} has no section {section} at {rev}; its sections: {ids}")


def _part(whole: Passage, n: int) -> Passage:
    """Passage ``n`` of a section, under the section's title line."""
    where, _, text = whole.text.partition("\n")
    parts = passages(text)
    if n > len(parts):
        raise NotFound(f"{where} has passages 1 to {len(parts)}; no passage {n}")
    return Passage(whole.ref, f"{where} (passage {n} of {len(parts)})\n{parts[n - 1]}", "")


def _turns(repo: MemoryRepo, ref: str, session: str, turn: int, branch: str) -> Passage:
    data = repo.store.read_blob(f"{branch}:sessions/{session}.jsonl")
    if data is None:
        live = repo.private_dir("sessions") / f"{session}.jsonl"
        data = live.read_bytes() if live.is_file() else None
    if data is None:
        raise NotFound(f"no session {session}; `gitmem log` lists the sessions")
    docs = turn_docs(session, data.split(b"\n"), 0, None)
    mine = [d for d in docs if int(d.section) == turn]
    if not mine:
        last = int(docs[-1].section) if docs else 0
        raise NotFound(f"session {session} has turns 1 to {last}; no turn {turn}")
    near = [d for d in docs if abs(int(d.section) - turn) <= AROUND and d not in mine]
    return Passage(ref, _fit(mine, near, turn), mine[0].date)


def _fit(mine: list[Doc], near: list[Doc], turn: int) -> str:
    """The turn whole, then its neighbours nearest first while they fit the budget."""
    chosen = list(mine)
    room = BUDGET - sum(len(d.text) for d in mine)
    for d in sorted(near, key=lambda d: abs(int(d.section) - turn)):
        if len(d.text) <= room:
            chosen.append(d)
            room -= len(d.text)
    chosen.sort(key=lambda d: (int(d.section), d.heading != "user"))
    lines = []
    for d in chosen:
        mark = "  <- this turn" if int(d.section) == turn else ""
        lines.append(f"[turn {d.section} {d.heading}, {d.date[:16]}]{mark}\n{d.text}")
    return "\n\n".join(lines)
