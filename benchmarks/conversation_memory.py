"""Months of conversations between two friends, for the search quality benchmark.

Deterministic for a seed: two people talk in about 60 sessions over ten months (a few
sessions a week, 20-30 turns each): what they did (a trip, a class, a race, a move),
how it went, plans, and preferences that change. Every session goes into memory through
gitmem's own session path (``start_session``, the live transcript, ``finish_session``),
so search sees it as it sees a chat; ``build(..., cards=True)`` also keeps the same
facts as cards, one per person and one section per session.

``questions()`` asks about it as a person would, each question labelled with the turns
that answer it (and the card section that holds them), of six kinds:

- ``fact``: a detail said in a turn, asked in other words where a person would;
- ``reply``: how something went, answered by the reply to the other's question (the
  reply rarely repeats the topic's words);
- ``when``: when something happened, answered by the turn that told of it;
- ``month``: what someone did in a month, answered by the turns that told of it;
- ``now``: a preference that changed, answered by its latest statement;
- ``form``: a detail asked with another form of the verb (``buy`` for ``bought``);
- ``spread``: how something named went ("How did Maya's hike go (Mount Tam)?"): the
  name is in the turn that told of it, how it went in the reply two turns later, and
  both turns are its answers (reported apart, not in ``all``).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from conversation_lines import EVENTS, PREFERENCES, SMALL_TALK, WHEN
from generate import identity

from gitmem import (
    IndexEntry,
    MemoryRepo,
    finish_session,
    init_repo,
    open_repo,
    start_session,
    write_card,
)

PEOPLE = [("Maya", "Jon"), ("Priya", "Tom"), ("Lena", "Sam"), ("Ines", "Ravi")]
MONTHS = "January February March April May June July August September October November December"

START = datetime(2023, 1, 9, 18, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Turn:
    session: str
    turn: int  # the transcript's turn: a user message and its reply share it
    role: str  # "user" (the first person) or "assistant" (the second)
    speaker: str
    text: str
    at: str


@dataclass(frozen=True)
class Question:
    kind: str
    text: str
    answers: tuple[tuple[str, int, str], ...]  # (session, turn, role) of each answer
    sections: tuple[tuple[str, str], ...]  # the card § section of each


def _slug(name: str) -> str:
    return name.lower()


def plan(seed: int) -> tuple[list[list[Turn]], list[Question]]:
    """The sessions (turns in order) and the questions, labelled."""
    rng = random.Random(seed)
    a, b = PEOPLE[seed % len(PEOPLE)]
    when = START
    sessions: list[list[Turn]] = []
    questions: list[Question] = []
    events = [(e, who) for e in EVENTS for who in (a, b) for _twice in (0, 1)]
    rng.shuffle(events)
    prefs = [(p, who, k) for p in PREFERENCES for who in (a, b) for k in range(3)]
    used: set[tuple[str, str, str]] = set()
    month_told: dict[tuple[str, int], list[Turn]] = {}
    pref_last: dict[tuple[str, str], Turn] = {}
    n_sessions = 120
    per = [[] for _ in range(n_sessions)]  # type: list[list[tuple[str, object]]]
    for i, ev in enumerate(events):
        per[(i * n_sessions) // len(events)].append(("event", ev))
    for p, who, k in prefs:
        per[min(n_sessions - 1, k * 40 + rng.randrange(40))].append(("pref", (p, who, k)))
    for s in range(n_sessions):
        when += timedelta(days=rng.randint(3, 6), minutes=rng.randint(0, 600))
        sid = when.strftime("%Y%m%d-%H%M%S-") + f"{seed % 256:02x}{s:02x}"
        lines: list[tuple[str, str]] = []
        marks: list[tuple[int, str, object]] = []
        items = per[s]
        rng.shuffle(items)
        for kind, item in items:
            for _ in range(rng.randint(3, 7)):
                speaker = rng.choice((a, b))
                lines.append((speaker, rng.choice(SMALL_TALK)))
            if kind == "event":
                (name, said, asked, reply, options, qs), who = item  # type: ignore[misc]
                other = b if who == a else a
                x = rng.choice([o for o in options if (name, who, o) not in used])
                used.add((name, who, x))
                marks.append((len(lines), "told", (name, who, x, qs)))
                lines.append((who, said.format(x=x)))
                lines.append((other, asked))
                marks.append((len(lines), "reply", (name, who, x, qs)))
                lines.append((who, reply))
            else:
                (thing, said, values, q), who, k = item  # type: ignore[misc]
                marks.append((len(lines), "pref", (thing, who, k, q)))
                lines.append((who, said.format(v=values[k])))
        for _ in range(rng.randint(3, 6)):
            lines.append((rng.choice((a, b)), rng.choice(SMALL_TALK)))
        turns = _turns(sid, a, lines, when)
        sessions.append(turns)
        for at, mark, data in marks:
            t = turns[at]
            if mark == "pref":
                thing, who, _k, _q = data  # type: ignore[misc]
                pref_last[(thing, who)] = t
                continue
            name, who, x, qs = data  # type: ignore[misc]
            month = MONTHS.split()[when.month - 1]
            for kind, text in qs:
                if (kind == "reply") == (mark == "reply"):
                    asked = text.format(p=who).rstrip("?") + f" in {month}?"
                    questions.append(_question(kind, asked, [t]))
            if mark == "told":
                questions.append(_question("when", WHEN[name].format(p=who, x=x), [t]))
                month_told.setdefault((who, when.month), []).append(t)
                told = t
            else:
                how = next(text for kind, text in qs if kind == "reply").format(p=who)
                questions.append(_question("spread", f"{how.rstrip('?')} ({x})?", [told, t]))
    for (thing, who), t in sorted(pref_last.items()):
        q = next(q for p, _s, _v, q in PREFERENCES if p == thing)
        questions.append(_question("now", q.format(p=who), [t]))
    months = MONTHS.split()
    for (who, month), told in sorted(month_told.items()):
        asked = f"What did {who} get up to in {months[month - 1]}?"
        questions.append(_question("month", asked, told))
    return sessions, questions


def _turns(sid: str, first: str, lines: list[tuple[str, str]], start: datetime) -> list[Turn]:
    out, turn, at = [], 0, start
    for speaker, text in lines:
        role = "user" if speaker == first else "assistant"
        if role == "user" or turn == 0:
            turn += 1
        at += timedelta(seconds=40)
        out.append(
            Turn(sid, turn, role, speaker, f"{speaker}: {text}", at.strftime("%Y-%m-%dT%H:%M:%SZ"))
        )
    return out


def _question(kind: str, text: str, turns: list[Turn]) -> Question:
    return Question(
        kind,
        text,
        tuple((t.session, t.turn, t.role) for t in turns),
        tuple((_slug(t.speaker), t.session) for t in turns),
    )


def card_sections(turns: list[Turn]) -> dict[str, str]:
    """One session as cards: each person's card gets a section of what they said."""
    by: dict[str, list[str]] = {}
    for t in turns:
        by.setdefault(_slug(t.speaker), []).append(t.text.split(": ", 1)[1])
    day = turns[0].at[:10]
    return {card: f"On {day}: " + " ".join(said) for card, said in sorted(by.items())}


def build(path: Path, seed: int, *, transcripts: bool, cards: bool) -> None:
    """Write the memory at ``path``: each session through gitmem's session path, and
    (``cards``) one card per person with a section per session."""
    sessions, _ = plan(seed)
    names = {_slug(n): n for pair in PEOPLE for n in pair}
    init_repo(path)
    _write(path, sessions, names, cards=cards, transcripts=transcripts)


def _write(
    path: Path,
    sessions: list[list[Turn]],
    names: dict[str, str],
    *,
    cards: bool,
    transcripts: bool,
) -> None:
    made: set[str] = set()
    with open_repo(path) as repo:
        for turns in sessions:
            # each session's commits are dated when it was held, as a live session's are
            held = datetime.fromisoformat(turns[-1].at.replace("Z", "+00:00"))
            with identity(int(held.timestamp())):
                _session(repo, turns, names, made, cards=cards, transcripts=transcripts)


def _session(
    repo: MemoryRepo,
    turns: list[Turn],
    names: dict[str, str],
    made: set[str],
    *,
    cards: bool,
    transcripts: bool,
) -> None:
    sid = turns[0].session
    session = start_session(repo, sid)
    if transcripts:
        live = repo.private_dir("sessions") / f"{session.id}.jsonl"
        with live.open("w", encoding="utf-8") as f:
            for t in turns:
                rec = {"type": "message", "at": t.at, "role": t.role, "turn": t.turn}
                content = [{"type": "text", "text": t.text}]
                f.write(json.dumps({**rec, "content": content, "text": t.text}) + "\n")
    for card, text in card_sections(turns).items() if cards else ():
        body = f"\n## {sid}\n{text}\n"
        if card not in made:
            body = f"# {names[card]}\n{body}"
            made.add(card)
        entry = IndexEntry.make(sid, [card], f"What {names[card]} said on {turns[0].at[:10]}")
        write_card(
            repo, card, "", body, entry, session=session.id, actor="agent", branch=session.branch
        )
    finish_session(repo, session, "auto")


def questions(seed: int) -> list[Question]:
    return plan(seed)[1]
