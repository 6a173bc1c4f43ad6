"""Text as search sees it: folded, split into terms, stop words dropped, words stemmed.

One tokenizer for documents and queries, so both meet on the same terms:

- case, accents and punctuation are folded (``What's`` -> ``what``, ``Café`` -> ``cafe``);
- a compound (``acme-website``, ``2026-03-01``, ``v2.1``, ``40,000``) is kept whole and
  also split into its parts, so a slug or a date matches whole and ``acme`` finds
  ``acme-website`` -- but ``po`` never matches ``portal``: terms match whole, never as
  substrings;
- words are stemmed with the Snowball English stemmer (PyStemmer), numbers never are;
- common English words (and the question words people type) are dropped.

Queries may also carry a small thesaurus of project-work words (``budget`` ~ ``cost``)
at a lower weight, and words that ask for the past (``before``, ``previously``) are
taken as that request rather than as terms.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import Stemmer

_WORD = re.compile(r"[a-z0-9]+(?:[-.,:/+&_][a-z0-9]+)*")
_APOSTROPHE_S = re.compile(r"['\u2019]s\b")
_APOSTROPHE = re.compile(r"['\u2019]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*[a-z]{0,2}")
_THOUSANDS = re.compile(r"^\d{1,3}(,\d{3})+$")
_stemmer = Stemmer.Stemmer("english")

STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "arent",
        "as",
        "at",
        "be",
        "because",
        "been",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "cant",
        "could",
        "couldnt",
        "did",
        "didnt",
        "do",
        "does",
        "doesnt",
        "doing",
        "dont",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "hadnt",
        "has",
        "hasnt",
        "have",
        "havent",
        "having",
        "he",
        "hed",
        "hes",
        "her",
        "here",
        "heres",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "hows",
        "i",
        "id",
        "ill",
        "im",
        "ive",
        "if",
        "in",
        "into",
        "is",
        "isnt",
        "it",
        "its",
        "itself",
        "lets",
        "me",
        "more",
        "most",
        "mustnt",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "ought",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "shant",
        "she",
        "shed",
        "shell",
        "shes",
        "should",
        "shouldnt",
        "so",
        "some",
        "such",
        "than",
        "that",
        "thats",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "theres",
        "these",
        "they",
        "theyd",
        "theyll",
        "theyre",
        "theyve",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "wasnt",
        "we",
        "wed",
        "well",
        "were",
        "weve",
        "werent",
        "what",
        "whats",
        "when",
        "whens",
        "where",
        "wheres",
        "which",
        "while",
        "who",
        "whos",
        "whom",
        "why",
        "whys",
        "with",
        "wont",
        "would",
        "wouldnt",
        "you",
        "youd",
        "youll",
        "youre",
        "youve",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "also",
        "any",
        "anything",
        "get",
        "got",
        "just",
        "know",
        "let",
        "like",
        "many",
        "much",
        "need",
        "please",
        "really",
        "remind",
        "say",
        "said",
        "tell",
        "thing",
        "things",
        "us",
        "want",
        "wanted",
        "way",
        "whatever",
        "whether",
        "will",
        "yet",
        "again",
        "ever",
    ]
)

# Words that ask for an older value: "what was the budget before?".
PAST_WORDS = frozenset(
    [
        "before",
        "previous",
        "previously",
        "prior",
        "earlier",
        "originally",
        "original",
        "old",
        "older",
        "former",
        "formerly",
        "initially",
        "initial",
        "used",
        "history",
        "past",
        "beforehand",
    ]
)
# Words that ask for the value in force: the default, said explicitly.
NOW_WORDS = frozenset(["now", "currently", "current", "latest", "today", "still", "presently"])

# A small thesaurus of words about client work (budgets, dates, people, systems), both
# directions; query terms found here also look for their neighbours, at a lower weight.
_RELATED = [
    "budget cost costs price pricing spend spending fee fees money quote estimate amount pot "
    "worth funding funds afford allocated ceiling",
    "invoice invoicing billing bill payment pay paid",
    "rate hourly day-rate",
    "deadline due date timeline schedule milestone milestones delivery deliver eta finish",
    "launch go-live golive release live ship rollout roll-out",
    "delay delayed slip slipped postpone postponed push pushed move moved reschedule",
    "contact contacts person point owner lead manager responsible talk escalate reach liaison",
    "pm manager coordinator project-lead",
    "stakeholder sponsor decision-maker",
    "hosting host server servers deploy deployment infrastructure cloud",
    "stack technology tech framework platform tools tooling",
    "database db postgres postgresql mysql",
    "risk risks issue issues concern concerns blocker blockers problem danger worry",
    "decision decided decide agreed agreement chose choice",
    "next todo to-do action actions tasks follow-up followup plan left",
    "meeting meetings call calls sync standup check-in conversation spoke",
    "requirement requirements scope spec specification",
    "brand branding logo colours colors palette typography font fonts",
    "contract agreement sow retainer terms",
    "analytics tracking metrics kpi kpis measure measuring visitors traffic",
    "seo search ranking rankings keywords",
    "access credentials login account accounts permissions",
    "email mail newsletter",
    "design mockup mockups wireframe wireframes prototype",
    "test testing qa uat acceptance",
    "team staff people developers",
    "client customer",
    "hired hire replaced replace joined",
    "language languages translation locale localisation localization",
    "support maintenance sla",
    "goal goals objective objectives target targets",
    "website site homepage web webpage pages",
    "shop webshop store e-commerce ecommerce checkout",
    "app mobile ios android iphone",
    "booking bookings reservation reservations appointment",
    "intranet portal",
    "crm salesforce hubspot",
    "dashboard reporting bi",
    "rebrand brand identity",
    "danger threat worry worrying",
    "visitors traffic",
    "talk speak escalate escalation",
    "conversation spoke discussed discussion",
]
_RELATED_WEIGHT = 0.35


def fold(text: str) -> str:
    """Lower case without accents, apostrophes dropped (``Client's`` -> ``client``)."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    return _APOSTROPHE.sub("", _APOSTROPHE_S.sub("", text))


@lru_cache(maxsize=4096)  # a word's stem is asked for once: _terms_of keeps it
def stem(word: str) -> str:
    if _NUMBER.fullmatch(word):
        return word
    return str(_stemmer.stemWord(word))


def _parts(compound: str) -> list[str]:
    return [p for p in re.split(r"[-.,:/+&_]", compound) if p]


def words(text: str) -> list[str]:
    """The raw folded words of ``text`` in order, compounds whole (no stop words dropped)."""
    return _WORD.findall(fold(text))


# A word's terms, cached in a plain dict emptied when full: a rebuild of a large history
# meets ~100k distinct words, and an LRU's bookkeeping took as much memory as the terms.
_TERMS: dict[str, tuple[str, ...]] = {}
_TERMS_MAX = 65536


def forget() -> None:
    """Empty the word caches (a rebuild's words: what a large history's rebuild leaves)."""
    _TERMS.clear()
    stem.cache_clear()


def _terms_of(word: str) -> tuple[str, ...]:
    got = _TERMS.get(word)
    if got is None:
        got = _word_terms(word)
        if len(_TERMS) >= _TERMS_MAX:
            _TERMS.clear()
        _TERMS[word] = got
    return got


def _word_terms(word: str) -> tuple[str, ...]:
    if word in STOP_WORDS:
        return ()
    if _THOUSANDS.match(word):
        return (word.replace(",", ""),)  # 40,000 is one number
    parts = _parts(word)
    if len(parts) == 1:
        return (stem(word),)
    out = [word]
    out.extend(stem(p) for p in parts if p not in STOP_WORDS)
    return tuple(out)


def terms(text: str) -> list[str]:
    """The terms of a document's text, in order, repeated as often as they occur."""
    out: list[str] = []
    get = _TERMS.get
    for word in words(text):
        got = get(word)
        out.extend(_terms_of(word) if got is None else got)
    return out


def _related() -> dict[str, set[str]]:
    table: dict[str, set[str]] = {}
    for line in _RELATED:
        group = {t for w in line.split() for t in _terms_of(w)}
        for term in group:
            table.setdefault(term, set()).update(group - {term})
    return table


RELATED = _related()


def query_terms(query: str) -> tuple[dict[str, float], bool]:
    """The weighted terms of a query, and whether it asks for a past value.

    A query of stop words only (``who is it?``) keeps them, so it still finds something.
    """
    raw = words(query)
    past = any(w in PAST_WORDS for w in raw)
    weighted: dict[str, float] = {}
    for word in raw:
        if word in PAST_WORDS or word in NOW_WORDS:
            continue
        for term in _terms_of(word):
            weighted[term] = 1.0
    if not weighted:
        for word in raw:
            weighted[stem(word)] = 1.0
    for term in list(weighted):
        for near in RELATED.get(term, ()):
            weighted.setdefault(near, _RELATED_WEIGHT)
    return weighted, past
