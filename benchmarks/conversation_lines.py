"""What the two friends of ``conversation_memory.py`` say: the events they tell of, the
preferences that change, their small talk, and how a question asks when a thing happened.
"""

from __future__ import annotations

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
