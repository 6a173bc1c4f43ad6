"""Text as search sees it: folded, split into terms, stop words dropped, words stemmed.

One tokenizer for documents and queries, so both meet on the same terms:

- case, accents and punctuation are folded (``What's`` -> ``what``, ``Café`` -> ``cafe``);
- a compound (``acme-website``, ``2026-03-01``, ``v2.1``, ``40,000``) is kept whole and
  also split into its parts, so a slug or a date matches whole and ``acme`` finds
  ``acme-website`` -- but ``po`` never matches ``portal``: terms match whole, never as
  substrings;
- words are stemmed with the Snowball English stemmer (PyStemmer), numbers never are;
- common English words (and the question words people type) are dropped.

Irregular verb forms meet their base form (``chose`` -> ``choose``, ``bought`` ->
``buy``) before stemming. Words that ask for the past (``before``, ``previously``) are
taken as that request rather than as terms.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date
from functools import lru_cache
from typing import NamedTuple

import Stemmer

from gitmem.search import dates
from gitmem.search.dates import When
from gitmem.search.word_lists import (
    IRREGULAR_LINES,
    NOW_PHRASES,
    NOW_WORDS,
    PAST_WORDS,
    STOP_WORDS,
)

_WORD = re.compile(r"[a-z0-9]+(?:[-.,:/+&_][a-z0-9]+)*")
_APOSTROPHE_S = re.compile(r"['\u2019]s\b")
_APOSTROPHE = re.compile(r"['\u2019]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*[a-z]{0,2}")
_THOUSANDS = re.compile(r"^\d{1,3}(,\d{3})+$")
_stemmer = Stemmer.Stemmer("english")

# each irregular form -> its base ("was" and "had" are stop words, so never asked for)
_BASE = {
    form: forms.split()[0]
    for forms in IRREGULAR_LINES.replace("\n", "|").split("|")
    for form in forms.split()[1:]
}


def fold(text: str) -> str:
    """Lower case without accents, apostrophes dropped (``Client's`` -> ``client``);
    ASCII text has no accents to take off."""
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text)
        text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = text.lower()
    return _APOSTROPHE.sub("", _APOSTROPHE_S.sub("", text))


@lru_cache(maxsize=4096)  # a word's stem is asked for once: _terms_of keeps it
def stem(word: str) -> str:
    if _NUMBER.fullmatch(word):
        return word
    return str(_stemmer.stemWord(_BASE.get(word, word)))


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


class Query(NamedTuple):
    """A query as search reads it: weighted terms, whether it asks for a past value, and
    the dates it names (``dates.When``, or None), and whether it asks what holds now."""

    weighted: dict[str, float]
    past: bool
    when: When | None
    now: bool = False


def query_terms(query: str, today: date | None = None) -> Query:
    """The weighted terms of a query, whether it asks for a past value, and its dates.

    A query of stop words only (``who is it?``) keeps them, so it still finds something.
    """
    raw = words(query)
    when, used = dates.parse(raw, query, today)
    past = any(w in PAST_WORDS for i, w in enumerate(raw) if i not in used)
    said_now = {i for i, w in enumerate(raw) if w in NOW_WORDS}
    for phrase in NOW_PHRASES:
        for i in range(len(raw) - len(phrase) + 1):
            if tuple(raw[i : i + len(phrase)]) == phrase:
                said_now.update(range(i, i + len(phrase)))
    weighted: dict[str, float] = {}
    for i, word in enumerate(raw):
        if i in used or i in said_now or word in PAST_WORDS:
            continue
        for term in _terms_of(word):
            weighted[term] = 1.0
    if not weighted:
        for i, word in enumerate(raw):
            if i not in used:
                weighted[stem(word)] = 1.0
    now = bool(said_now) and not past
    return Query(weighted, past, when, now)
