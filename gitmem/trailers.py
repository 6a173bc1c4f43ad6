"""The commit trailers that carry an edit's index entry (DESIGN §3)."""

from __future__ import annotations

from dataclasses import dataclass

from . import names
from .errors import InvalidInput

CARD = "Gitmem-Card"
SECTION = "Gitmem-Section"
KEYWORDS = "Gitmem-Keywords"
SUMMARY = "Gitmem-Summary"
SESSION = "Gitmem-Session"
ACTOR = "Gitmem-Actor"
REVERTS = "Gitmem-Reverts"
LAYER = "Gitmem-Layer"
ALL_KEYS = (CARD, SECTION, KEYWORDS, SUMMARY, SESSION, ACTOR, REVERTS, LAYER)
_CANON = {k.lower(): k for k in ALL_KEYS}


@dataclass(frozen=True)
class IndexEntry:
    """What the index says about one section: supplied by whoever edits it."""

    section_id: str
    keywords: tuple[str, ...]
    summary: str

    @classmethod
    def make(
        cls, section_id: str, keywords: list[str] | tuple[str, ...], summary: str
    ) -> IndexEntry:
        return cls(
            names.section_id(section_id), names.keywords(list(keywords)), names.summary(summary)
        )


def canonical(key: str) -> str | None:
    """The canonical spelling of a gitmem trailer key (git compares keys case-insensitively)."""
    return _CANON.get(key.strip().lower())


def edit_message(
    card: str, entry: IndexEntry, *, session: str | None, actor: str, subject: str | None = None
) -> str:
    head = subject or f"{card}: {entry.summary}"
    if len(head) > 72:
        head = head[:71].rstrip() + "…"
    lines = [
        f"{CARD}: {card}",
        f"{SECTION}: {entry.section_id}",
        f"{KEYWORDS}: {', '.join(entry.keywords)}",
        f"{SUMMARY}: {entry.summary}",
    ]
    if session:
        lines.append(f"{SESSION}: {session}")
    lines.append(f"{ACTOR}: {actor}")
    return f"{head}\n\n" + "\n".join(lines) + "\n"


def gitmem_trailers(block: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """gitmem's trailers in git's ``%(trailers:only,unfold,separator=%x1e)`` output.

    Returns canonical key -> first value, and every ``Gitmem-Reverts`` value in order
    (a session revert names several commits).
    """
    trailers: dict[str, str] = {}
    reverts: list[str] = []
    if block:
        for item in block.split("\x1e"):
            key, _, value = item.partition(":")
            name = _CANON.get(key.strip().lower())
            if name:
                value = value.strip()
                if name not in trailers:
                    trailers[name] = value
                if name == REVERTS and value:
                    reverts.append(value)
    return trailers, tuple(reverts)


def validate(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """Check gitmem trailers in a hand-made commit; returns canonical key -> value.

    Raises InvalidInput naming the first problem: an unknown ``Gitmem-`` key, a key
    given twice, a malformed value, or a section/keywords/summary without a card.
    """
    found: dict[str, str] = {}
    for key, value in pairs:
        if not key.lower().startswith("gitmem-"):
            continue
        canon = canonical(key)
        if canon is None:
            raise InvalidInput(f"unknown trailer {key!r}; gitmem knows {', '.join(ALL_KEYS)}")
        if canon == REVERTS:  # a session revert undoes several commits: one trailer each
            sha = value.strip()
            if not (len(sha) in (40, 64) and all(c in "0123456789abcdef" for c in sha)):
                raise InvalidInput(f"{REVERTS} must be a full commit sha, not {value!r}")
            found[canon] = f"{found[canon]} {sha}" if canon in found else sha
            continue
        if canon in found:
            raise InvalidInput(f"trailer {canon} given more than once")
        found[canon] = value
    if not found:
        return found
    checks = {
        CARD: names.project,
        SECTION: names.section_id,
        SUMMARY: names.summary,
        SESSION: names.session,
        ACTOR: names.actor,
    }
    for key, check in checks.items():
        if key in found:
            check(found[key])
    if KEYWORDS in found:
        names.split_keywords(found[KEYWORDS])
    describes = {SECTION, KEYWORDS, SUMMARY} & found.keys()
    if describes and CARD not in found:
        raise InvalidInput(f"{', '.join(sorted(describes))} given without {CARD}")
    if SECTION in found and REVERTS not in found and KEYWORDS not in found:
        # A summary is optional: without one the section is listed as unindexed.
        raise InvalidInput(f"{SECTION} needs {KEYWORDS} beside it")
    return found
