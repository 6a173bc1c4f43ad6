"""A second memory of another kind: a person's notes of many sessions, in long sections.

Eight people, one card each; a card holds twelve sections, each the notes of four sessions
(a dated paragraph a session: a few lines of everyday notes around one fact). The notes
were written as prose, in other words than the questions, and the questions ask for the
fact ("What pet did Maya adopt?" of "the rescue spaniel, Biscuit, has moved in"), so a
word of the question rarely stands in the answer. Each question is labelled with the
card § section that holds its fact. This set's misses were read to find why gitmem
lost to a plain BM25 on it, so it is now a development set; ``notes_fresh.py`` holds the
held-out one (other people, facts and everyday lines, the same shape).

    .venv/bin/python benchmarks/bench_search_quality.py --notes-seed 7
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from types import ModuleType

from gitmem import IndexEntry, init_repo, open_repo, write_card

PEOPLE = ["Maya", "Jon", "Priya", "Tom", "Lena", "Sam", "Ines", "Ravi"]
SECTIONS, SESSIONS = 12, 4  # sections a card, sessions a section

# a question, then two ways the notes tell its fact ({p}: the person)
FACTS = [
    (
        "What pet did {p} adopt?",
        "Dog hair on every sleeve: the rescue spaniel, Biscuit, has moved in and sleeps on the sofa.",
        "Biscuit the spaniel came home from the shelter; {p} is up at six for walks now.",
    ),
    (
        "Where is {p} moving to?",
        "The flat in Porto is signed; {p} hands the keys back here at the end of the month.",
        "{p} has half the boxes packed for Porto, the new lease starts in three weeks.",
    ),
    (
        "Which instrument is {p} learning?",
        "{p} played four bars on the cello, slowly; lessons are on Wednesday evenings.",
        "Bow hold, scales, a first piece on the cello: {p} practises half an hour a night.",
    ),
    (
        "What injury did {p} have?",
        "{p} came in on crutches: the ankle went on the last stair, a sprain, six weeks strapped.",
        "A twisted ankle from the stairs keeps {p} off the feet; the swelling is going down.",
    ),
    (
        "What new job did {p} start?",
        "First week as a nurse on the night ward for {p}; the shifts are long, the team kind.",
        "{p} is on nights at the hospital now, nursing on the surgical ward.",
    ),
    (
        "Which language is {p} studying?",
        "{p} does Japanese on the train every morning: kanji flash cards and a podcast.",
        "Hiragana is done, katakana next; {p} wants to order dinner in Osaka next year.",
    ),
    (
        "What car did {p} buy?",
        "{p} drove up in a second-hand electric hatchback and charges it at the office.",
        "The old diesel is sold; {p} picked up a small electric hatchback, used, low mileage.",
    ),
    (
        "Where did {p} go on holiday?",
        "Back from ten days in Iceland: {p} saw the northern lights twice and swam in a hot spring.",
        "{p} showed photos of glaciers and black sand from the trip round Iceland.",
    ),
    (
        "What sport has {p} taken up?",
        "{p} joined the climbing wall near the station: bouldering on Tuesdays, sore forearms.",
        "Chalk on the hands: {p} goes bouldering twice a week and finished a first blue route.",
    ),
    (
        "Who is {p} marrying?",
        "{p} showed the ring: Alex proposed on the beach, the wedding is next spring.",
        "Engaged! Alex asked on the pier; {p} is already looking at venues.",
    ),
    (
        "What is {p} allergic to?",
        "The rash turned out to be peanuts; {p} carries an adrenaline pen everywhere now.",
        "After the reaction at the party the tests said peanuts; {p} reads every label.",
    ),
    (
        "What did {p} cook for the party?",
        "{p} made a huge pot of lamb tagine for twenty guests; nothing was left.",
        "A tagine with lamb and apricots fed the whole birthday crowd at {p}'s place.",
    ),
    (
        "Which book is {p} reading?",
        "{p} is halfway through War and Peace, a chapter a night, with a list of the names.",
        "Tolstoy at bedtime: {p} reached the battle of Borodino in War and Peace.",
    ),
    (
        "What vegetables did {p} grow?",
        "Tomatoes everywhere: {p} picked the first ripe ones on the balcony, basil to spare.",
        "The balcony pots gave {p} courgettes and cherry tomatoes all August.",
    ),
    (
        "Why did {p} see an optician?",
        "Headaches most afternoons; {p} had the eyes tested and wears glasses at the screen.",
        "{p} squinted at the menu; the test said reading glasses, and the headaches stopped.",
    ),
    (
        "Where does {p} volunteer?",
        "Saturday mornings {p} sorts donations at the food bank and drives the van.",
        "{p} spends weekends at the food bank, packing parcels for families.",
    ),
]

EVERYDAY = [
    "We started with the week: work was busy and the weather grey.",
    "The neighbours are still renovating, drills from eight in the morning.",
    "Sleep has been better since the phone stays out of the bedroom.",
    "A long chat about the family, the usual worries, nothing urgent.",
    "The commute took longer than planned because of the roadworks.",
    "Lunch was soup again; the canteen has run out of ideas.",
    "Talked through the budget for the month, on track so far.",
    "A friend's birthday drinks ran late, tired but glad to have gone.",
    "The heating broke for two days and the landlord was slow to answer.",
    "Some time on the plans for the summer, nothing booked yet.",
]


@dataclass(frozen=True)
class Question:
    text: str
    card: str
    section: str


def plan(
    seed: int, book: ModuleType | None = None
) -> tuple[dict[str, dict[str, str]], list[Question]]:
    """Each card's sections (id -> text) and the questions, labelled; ``book``: a module
    with other ``PEOPLE``, ``FACTS`` and ``EVERYDAY`` (``notes_fresh``), else this one's."""
    people, facts, everyday = (
        (book.PEOPLE, book.FACTS, book.EVERYDAY) if book else (PEOPLE, FACTS, EVERYDAY)
    )
    rng = random.Random(seed)
    cards: dict[str, dict[str, str]] = {}
    questions: list[Question] = []
    for p in people:
        slots = rng.sample(range(SECTIONS * SESSIONS), len(facts))
        told = dict(zip(slots, facts, strict=True))
        day, secs = date(2025, 1, 6) + timedelta(days=rng.randrange(20)), {}
        for s in range(SECTIONS):
            first, paras = day, []
            for k in range(SESSIONS):
                said = rng.sample(everyday, 3)
                if (fact := told.get(s * SESSIONS + k)) is not None:
                    said.insert(rng.randrange(1, 3), rng.choice(fact[1:]).format(p=p))
                paras.append(f"{day.isoformat()}. " + " ".join(said))
                day += timedelta(days=rng.randint(10, 20))
            sid = f"sessions-{first:%Y-%m}"
            secs[sid] = "\n\n".join(paras)
            for n, fact in told.items():
                if n // SESSIONS == s:
                    questions.append(Question(fact[0].format(p=p), p.lower(), sid))
        cards[p.lower()] = secs
    return cards, questions


def build(path: Path, seed: int, book: ModuleType | None = None) -> None:
    """Write the memory at ``path``: one card per person, one edit commit per section."""
    cards, _ = plan(seed, book)
    init_repo(path)
    with open_repo(path) as repo:
        for card, secs in cards.items():
            for n, (sid, text) in enumerate(secs.items()):
                head = f"# {card.title()}: session notes\n" if n == 0 else ""
                body = f"{head}\n## Sessions {sid[9:]}\n{text}\n"
                entry = IndexEntry.make(sid, ["notes", "sessions"], f"Notes from {sid[9:]}")
                write_card(repo, card, "", body, entry)
