"""A second notes memory, held out: other people, other facts, other everyday lines.

The same shape as ``notes_memory.py`` (a card a person, twelve sections of four dated
sessions, one fact at most a session), with facts, notes and questions written apart
from the first set and after gitmem's search was changed on it: the first set's misses
were read to find why gitmem lost to a plain BM25 there, so only this one is unseen.

    .venv/bin/python benchmarks/bench_search_quality.py --notes-seed 7
"""

from __future__ import annotations

PEOPLE = ["Olga", "Ben", "Chen", "Ada", "Marek", "Nora", "Kofi", "Eva"]

# a question, then two ways the notes tell its fact ({p}: the person)
FACTS = [
    (
        "What did {p} name the baby?",
        "A girl, born on Thursday night: {p} and the family call her Rosa, after a grandmother.",
        "Little Rosa is sleeping four hours at a stretch, {p} says, which feels like luxury.",
    ),
    (
        "Which team does {p} coach?",
        "{p} runs the under-twelves football on Sunday mornings; they lost 3-1 but played well.",
        "The kids' football side {p} trains won their first match, orange slices at half time.",
    ),
    (
        "What degree is {p} studying for?",
        "Evening classes in law: {p} has a contract exam in May and reads cases on the bus.",
        "{p} enrolled part-time at the law faculty, two modules a term, tired but keen.",
    ),
    (
        "Where did {p} run the marathon?",
        "{p} finished the Berlin course in four hours ten, blisters and all, medal on the fridge.",
        "Forty-two kilometres through Berlin: {p} hit the wall at thirty but kept going.",
    ),
    (
        "What house repair did {p} need?",
        "Water came through the ceiling: the roof lost tiles in the storm and {p} had a roofer in.",
        "A leak over the landing; {p} paid for the roof to be retiled before the winter rains.",
    ),
    (
        "Which band did {p} see live?",
        "{p} queued three hours to see Radiohead at the arena and lost their voice singing.",
        "Still humming after the Radiohead gig; {p} bought the tour shirt in two colours.",
    ),
    (
        "What did {p} give up?",
        "Six weeks without a cigarette: {p} chews gum and walks round the block instead.",
        "{p} threw the last pack away on New Year's Day, patches for the first month.",
    ),
    (
        "What surgery did {p} have?",
        "{p} had the knee operated on, keyhole, and is on physio twice a week.",
        "Stitches out of the knee at last; {p} walks with one stick after the operation.",
    ),
    (
        "What business did {p} open?",
        "The bakery on the corner is {p}'s now: sourdough from four a.m., queues by eight.",
        "{p} signed the lease on a little shop and bakes bread and cinnamon buns to sell.",
    ),
    (
        "Who visited {p} from abroad?",
        "{p}'s brother flew in from Canada for a fortnight, the first visit in six years.",
        "The brother from Toronto stayed in the spare room; {p} showed him the old town.",
    ),
    (
        "What did {p} win?",
        "First prize in the town's photography contest: {p}'s shot of the harbour at dawn.",
        "{p} won the photo competition, a framed print now hangs in the library.",
    ),
    (
        "What did {p} lose?",
        "The wallet went missing on the tram; {p} cancelled the cards and reported it.",
        "{p} spent an afternoon at the lost property office, no sign of the wallet.",
    ),
    (
        "Which festival did {p} celebrate?",
        "{p} lit the lamps for Diwali and brought sweets for everyone in the office.",
        "Rangoli on the doorstep and fireworks at night: Diwali at {p}'s parents' house.",
    ),
    (
        "What craft is {p} learning?",
        "{p} threw a first bowl on the potter's wheel; lopsided, but it held water.",
        "Clay under the nails: {p} glazes mugs at the pottery studio on Thursdays.",
    ),
    (
        "Why did {p} go to court?",
        "{p} was called for jury duty, two weeks on a fraud trial, not allowed to say more.",
        "Back from serving on a jury; {p} found the trial slow and the verdict hard.",
    ),
    (
        "What did {p} move into?",
        "{p} bought a narrowboat and lives on the canal now, a stove and a tiny galley.",
        "Life on the water suits {p}: the boat is moored by the lock for the winter.",
    ),
]

EVERYDAY = [
    "Opened with the usual round-up of the fortnight, nothing out of the ordinary.",
    "The washing machine is making a noise again and the repair man never called back.",
    "Rain all week; the bike stayed in the hall and the bus was packed.",
    "We went over the calendar: a dentist visit, a parcel to post, a form to fill in.",
    "Mornings are easier with the alarm ten minutes earlier and coffee made the night before.",
    "A cousin phoned about the reunion, still no date agreed by anyone.",
    "The office moved desks around and the printer is now miles away.",
    "Groceries cost more every time; we looked at where the money goes each month.",
    "Watched a documentary about whales at the weekend and stayed in otherwise.",
    "The garden fence needs paint, a job put off until the spring.",
]
