"""How the simulated model uses the memory index it was sent.

gitmem puts the index in the system prompt as a ``<memory-index>`` block: ``## card``
headers, then one ``- section: summary [keywords]`` line per section. The model reads
that block back, and for a question picks the sections whose card, id, summary or
keywords share words with it -- the ones it then reads with ``read_memory_card``.
Nothing here knows any card or question in advance.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_READS = 3
_LINE = re.compile(r"^- ([^:\s]+): (?:\(unindexed\) )?(.*?)(?: \[([^\]]*)\])?$")
_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "can",
        "did",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "know",
        "me",
        "of",
        "on",
        "or",
        "our",
        "should",
        "tell",
        "the",
        "there",
        "this",
        "to",
        "us",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "with",
        "you",
        "your",
    ]
)


@dataclass(frozen=True)
class IndexLine:
    """One section as the index shows it."""

    project: str
    section_id: str
    summary: str
    keywords: tuple[str, ...]

    def words(self) -> set[str]:
        text = " ".join((self.section_id, self.summary, *self.keywords)).lower()
        return set(_WORD.findall(text))


def parse_index(system_text: str) -> list[IndexLine]:
    """The sections listed in the ``<memory-index>`` block (none without one)."""
    start, end = system_text.find("<memory-index>"), system_text.find("</memory-index>")
    if start < 0 or end < start:
        return []
    found: list[IndexLine] = []
    project = ""
    for line in system_text[start:end].splitlines():
        if line.startswith("## "):
            project = line[3:].split(":", 1)[0].strip()
        elif project and (match := _LINE.match(line.strip())):
            kws = tuple(k.strip() for k in (match.group(3) or "").split(",") if k.strip())
            found.append(IndexLine(project, match.group(1), match.group(2).strip(), kws))
    return found


def find(lines: list[IndexLine], project: str, section_id: str) -> IndexLine | None:
    return next((x for x in lines if x.project == project and x.section_id == section_id), None)


def is_question(text: str) -> bool:
    return text.rstrip().endswith("?")


def question_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOPWORDS and len(w) > 1}


def _card_match(word: str, project: str) -> bool:
    parts = project.lower().split("-")
    return word == project.lower() or word in parts


def sections_for(question: str, lines: list[IndexLine]) -> list[IndexLine]:
    """The sections a question is about, best first, at most ``MAX_READS``.

    Sections sharing words with the question win; a question naming only a card
    ("What do we know about Acme?") gets that card's sections.
    """
    words = question_words(question)
    if not words:
        return []
    scored = []
    for order, line in enumerate(lines):
        card = sum(1 for w in words if _card_match(w, line.project))
        own = len(words & line.words())
        if card or own:
            scored.append((-(own * 2 + card), order, line))
    scored.sort(key=lambda t: (t[0], t[1]))
    if not scored:
        return []
    best = scored[0][0]
    # Words that pick out sections: keep the best of them; only a card's name: its sections.
    picked = [line for score, _, line in scored if score == best]
    return picked[:MAX_READS]


def section_body(text: str) -> tuple[str, str]:
    """A read section's heading and its text on one line (the tool returns Markdown)."""
    heading, body = "", list[str]()
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#") and not heading and not body:
            heading = stripped.lstrip("#").strip()
        else:
            body.append(stripped.lstrip("-* ").strip())
    return heading, " ".join(body)
