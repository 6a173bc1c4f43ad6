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
- ``form``: a detail asked with another form of the verb (``buy`` for ``bought``).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

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

# An event: what the teller says of it, the friend's question, the reply, and
# questions about it (kind, text with {p}). {x} is a detail drawn from the options.
EVENTS = [
    (
        "hike",
        "I hiked up {x} on Saturday with my cousin.",
        "How was the hike?",
        "Exhausting, honestly, but the view from the ridge made up for every step.",
        ["Mount Tam", "Eagle Peak", "the Devil's Staircase", "Blue Ridge trail"],
        [("fact", "Which mountain did {p} climb?"), ("reply", "How did {p}'s hike go?")],
    ),
    (
        "pottery",
        "I started a pottery class at {x}, every Tuesday evening.",
        "Oh fun, how was the first class?",
        "Messy! My bowl came out lopsided but the teacher said it has character.",
        ["Clayworks", "the community center", "Mudroom Studio", "the art school"],
        [
            ("fact", "Where does {p} take ceramics lessons?"),
            ("reply", "How did {p}'s first pottery class go?"),
        ],
    ),
    (
        "race",
        "I ran the {x} on Sunday, my first one ever.",
        "No way! How did it go?",
        "I finished in just under two hours and could barely walk the next day.",
        ["city half marathon", "harbour 10k", "spring trail race", "charity fun run"],
        [("fact", "What race did {p} run?"), ("reply", "What was {p}'s time in the race?")],
    ),
    (
        "bike",
        "I bought a {x} so I can ride to work.",
        "Nice, how do you like it so far?",
        "Love it, except the hill by the station nearly kills me every morning.",
        ["used road bike", "folding bike", "cargo bike", "second-hand e-bike"],
        [
            ("form", "What kind of bike did {p} buy?"),
            ("reply", "How does {p} like riding to work?"),
        ],
    ),
    (
        "camping",
        "We went camping at {x} last weekend.",
        "How was it out there?",
        "Freezing at night, but we sat around the campfire until two and saw shooting stars.",
        ["Lake Tahoe", "Big Sur", "the state park", "Pine Hollow"],
        [
            ("fact", "Where did {p} go camping?"),
            ("reply", "What was the night like on {p}'s camping trip?"),
        ],
    ),
    (
        "move",
        "We finally moved to {x}, the boxes are everywhere.",
        "Congrats! How is the new place?",
        "Smaller kitchen, but the light in the mornings is lovely and the neighbours are kind.",
        ["a flat near the river", "the east side", "a house in Oakdale", "a loft downtown"],
        [("fact", "Where did {p} move to?"), ("reply", "What does {p} think of the new home?")],
    ),
    (
        "job",
        "I got an offer from {x} and I said yes.",
        "That's huge! How did the interview go?",
        "Three rounds, and the last one was a whiteboard exercise I thought I had failed.",
        ["a design agency", "the hospital", "a small startup", "the city library"],
        [("fact", "Who hired {p}?"), ("reply", "What were {p}'s job interviews like?")],
    ),
    (
        "book",
        "I chose {x} for the book club this month.",
        "Good pick? What did the group think?",
        "Half of them loved it, the other half never got past chapter three.",
        ["Piranesi", "Circe", "The Overstory", "Klara and the Sun"],
        [
            ("form", "Which book did {p} choose for book club?"),
            ("reply", "How did the book club like {p}'s pick?"),
        ],
    ),
    (
        "concert",
        "I saw {x} live last night.",
        "Jealous! Were they good?",
        "Better than the record, and they played the old songs for the encore.",
        ["Fleet Foxes", "Arcade Fire", "Phoebe Bridgers", "the symphony orchestra"],
        [
            ("fact", "Which band did {p} see in concert?"),
            ("reply", "How was the show {p} went to?"),
        ],
    ),
    (
        "dog",
        "We adopted a dog from the shelter, a {x}.",
        "Aww, how is he settling in?",
        "He chewed one shoe and sleeps on my feet, so I'd say very well.",
        ["beagle mix", "greyhound", "border collie", "three-legged terrier"],
        [
            ("fact", "What breed is {p}'s new dog?"),
            ("reply", "How is {p}'s dog getting on at home?"),
        ],
    ),
    (
        "garden",
        "I planted {x} in the garden this week.",
        "Do you think they'll make it?",
        "The snails got half of them already, so I'm putting copper tape around the beds.",
        ["tomatoes and basil", "sunflowers", "strawberries", "a row of lettuce"],
        [("fact", "What did {p} plant?"), ("reply", "What went wrong in {p}'s garden?")],
    ),
    (
        "trip",
        "We flew to {x} for a long weekend.",
        "How was the trip?",
        "We ate far too much, walked everywhere and the hotel lost our booking on day one.",
        ["Lisbon", "Kyoto", "Montreal", "Edinburgh"],
        [
            ("fact", "Which city did {p} visit?"),
            ("reply", "What happened with the hotel on {p}'s trip?"),
        ],
    ),
    (
        "lesson",
        "My brother taught me to {x} over the holidays.",
        "Ha, were you any good?",
        "Terrible at first, but by the third day I stopped falling over.",
        ["ski", "surf", "skate", "ride a motorbike"],
        [("form", "What did {p}'s brother teach {p}?"), ("reply", "How quickly did {p} learn?")],
    ),
    (
        "party",
        "We threw a surprise party for {x}.",
        "Did they suspect anything?",
        "Not a thing, she cried when everyone jumped out from behind the sofa.",
        ["my sister", "our neighbour Rosa", "my mum's sixtieth", "Ana from work"],
        [
            ("fact", "Who did {p} throw a surprise party for?"),
            ("reply", "How did {p}'s surprise party go?"),
        ],
    ),
]

# Preferences that change: the thing, three values over the months, and the question.
PREFERENCES = [
    (
        "coffee",
        "Lately I only drink {v}.",
        ["oat flat whites", "black filter coffee", "green tea"],
        "What does {p} drink these days?",
    ),
    (
        "show",
        "I'm hooked on {v} right now.",
        ["Severance", "The Bear", "Slow Horses"],
        "What series is {p} watching now?",
    ),
    (
        "food",
        "My new favourite dinner is {v}.",
        ["Thai curry", "homemade ramen", "mushroom risotto"],
        "What is {p}'s favourite dinner at the moment?",
    ),
    (
        "sport",
        "These days I mostly {v} to stay fit.",
        ["swim", "go bouldering", "play padel"],
        "How does {p} keep fit now?",
    ),
]

SMALL_TALK = [
    "Work has been busy, lots of meetings this week.",
    "Did you see the game on Sunday?",
    "I need a holiday, honestly.",
    "The weather has been strange, sun and then hail.",
    "I tried that new bakery on the corner, the croissants are great.",
    "My phone screen cracked again.",
    "We should get dinner soon.",
    "I'm reading something slow at the moment, nothing to report.",
    "How is your family doing?",
    "All good here, just tired.",
    "Mum called, she says hi.",
    "Traffic was awful this morning.",
    "I finally cleaned out the garage.",
    "Any plans for the weekend?",
    "Not really, maybe a walk if it's dry.",
    "The kids have a school play next week.",
    "I keep forgetting to water the plants.",
    "We watched a film last night, it was fine.",
]

# When something happened, asked by its detail (each event happens twice to each person).
WHEN = {
    "hike": "When did {p} hike {x}?",
    "pottery": "When did {p} start pottery at {x}?",
    "race": "When did {p} run the {x}?",
    "bike": "When did {p} get the {x}?",
    "camping": "When was {p}'s camping trip to {x}?",
    "move": "When did {p} move to {x}?",
    "job": "When did {p} accept the offer from {x}?",
    "book": "When did {p} pick {x} for book club?",
    "concert": "When did {p} go to see {x}?",
    "dog": "When did {p} adopt the {x}?",
    "garden": "When did {p} plant {x}?",
    "trip": "When did {p} travel to {x}?",
    "lesson": "When did {p} learn to {x}?",
    "party": "When did {p} throw the surprise party for {x}?",
}
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
