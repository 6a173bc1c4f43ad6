"""The commit trailers that carry an edit's index entry (DESIGN §3)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gitmem.errors import InvalidInput
from gitmem.memory import names

CARD = "Gitmem-Card"
SECTION = "Gitmem-Section"
KEYWORDS = "Gitmem-Keywords"
SUMMARY = "Gitmem-Summary"
SESSION = "Gitmem-Session"
ACTOR = "Gitmem-Actor"
REVERTS = "Gitmem-Reverts"
LAYER = "Gitmem-Layer"
# The client a signed commit was written for: one machine key signs every client's repo,
# so this binds a commit to its memory (`gitmem verify` checks it).
CLIENT = "Gitmem-Client"
# The digest of the described section's text as the edit left it (``cards.digests``):
# the index marks the entry stale when the section's text now differs, without reading
# the card as it was then.
DIGEST = "Gitmem-Digest"
ALL_KEYS = (CARD, SECTION, KEYWORDS, SUMMARY, DIGEST, SESSION, ACTOR, REVERTS, LAYER, CLIENT)
# The actors gitmem's agents write as (chat, MCP, the memory tool): never a person's.
AGENT_ACTORS = ("agent", "mcp", "memory-tool")
_CANON = {k.lower(): k for k in ALL_KEYS}
# Not a trailer: where ``gitmem_trailers`` puts the sections a commit describes after its
# first one. A commit that creates a card of several sections (``gitmem import``) repeats
# the pair ``Gitmem-Section`` / ``Gitmem-Keywords`` once per section, in order; the value
# is one "section<TAB>keywords" line per repeated section.
MORE_SECTIONS = "Gitmem-Section+"


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
        """An entry checked for the trailers: ``InvalidInput`` for a bad section id,
        keyword or summary (empty, too long, a line break)."""
        return cls(
            names.section_id(section_id), names.keywords(list(keywords)), names.summary(summary)
        )

    @classmethod
    def unsummarised(cls, section_id: str, keywords: list[str] | tuple[str, ...]) -> IndexEntry:
        """An entry with keywords and no summary: the index lists the section as unindexed,
        with these keywords, until an edit with a summary describes it."""
        return cls(names.section_id(section_id), names.keywords(list(keywords)), "")


def canonical(key: str) -> str | None:
    """The canonical spelling of a gitmem trailer key (git compares keys case-insensitively)."""
    return _CANON.get(key.strip().lower())


def edit_message(
    card: str,
    entry: IndexEntry,
    *,
    session: str | None,
    actor: str,
    subject: str | None = None,
    more: tuple[IndexEntry, ...] = (),
    digest: str | None = None,
) -> str:
    """The commit message of one edit; ``more``: further sections it describes (no summary);
    ``digest``: the described section's digest after the edit (kept with a summary only:
    an entry without one is never stale)."""
    head = subject or f"{card}: {entry.summary}"
    if len(head) > 72:
        head = head[:71].rstrip() + "…"
    lines = [
        f"{CARD}: {card}",
        f"{SECTION}: {entry.section_id}",
        f"{KEYWORDS}: {', '.join(entry.keywords)}",
    ]
    if entry.summary:
        lines.append(f"{SUMMARY}: {entry.summary}")
        if digest:
            lines.append(f"{DIGEST}: {digest}")
    for other in more:
        if other.summary:
            raise InvalidInput("only a commit's first section entry can carry a summary")
        lines += [f"{SECTION}: {other.section_id}", f"{KEYWORDS}: {', '.join(other.keywords)}"]
    if session:
        lines.append(f"{SESSION}: {session}")
    lines.append(f"{ACTOR}: {actor}")
    return f"{head}\n\n" + "\n".join(lines) + "\n"


def with_client(message: str, client: str) -> str:
    """``message`` with one ``Gitmem-Client: client`` trailer: added to its trailer block
    (its last paragraph, when that holds a ``Key: value`` line), else as a block of its
    own; a client trailer it had is replaced."""
    kept = message.rstrip("\n").split("\n")
    lines = [ln for ln in kept if canonical(ln.partition(":")[0]) != CLIENT]
    while lines and not lines[-1].strip():
        lines.pop()
    start = len(lines)
    while start and lines[start - 1].strip():
        start -= 1
    block = start > 0 and any(_TOKEN.match(ln) for ln in lines[start:])
    tail = [f"{CLIENT}: {' '.join(client.split())}"]
    return "\n".join([*lines, *([] if block else [""]), *tail]) + "\n"


# Options that make git find trailer blocks with its default separator, whatever someone
# configured: the index must be the same on every machine.
DEFAULT_BLOCKS = ("-c", "trailer.separators=:")

# git's isspace(): what it trims from keys and values and what starts a continuation line.
_SPACE = " \t\n\r"
_HEX16 = re.compile(r"[0-9a-f]{16}")
_TOKEN = re.compile(r"[A-Za-z0-9-]+[ \t]*:")  # a trailer line: token, blanks, separator


def gitmem_trailers(block: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """gitmem's trailers in a trailer block as git's ``%(trailers)`` prints it.

    git finds the block (the message's last paragraph, by its own rules; run it with
    ``DEFAULT_BLOCKS``); this reads its lines as ``%(trailers:only,unfold)`` would,
    without git's per-trailer formatting, so a token alias someone configured in git
    never renames what gitmem reads. (Configured tokens still count as git's
    "recognized" trailers when it decides whether a last paragraph that mixes trailers
    and prose is a trailer block.) Lines that are not ``Key: value`` are skipped; a
    line starting with a blank continues the trailer above it. Returns canonical key -> first value, and every ``Gitmem-Reverts`` value
    in order (a session revert names several commits).
    """
    if "\n " in block or "\n\t" in block or "\n\r" in block:
        lines = _unfolded(block)
    else:
        lines = block.split("\n")
    found = []
    for line in lines:
        key, sep, value = line.partition(":")
        name = _CANON.get(key.rstrip(" \t").lower()) if sep else None
        if name and key.isascii():
            found.append((name, value.strip(_SPACE)))
    return _gathered(found)


def _gathered(found: list[tuple[str, str]]) -> tuple[dict[str, str], tuple[str, ...]]:
    """Canonical key -> first value (repeated sections and keywords as ``MORE_SECTIONS``),
    and every ``Gitmem-Reverts`` value in order."""
    trailers: dict[str, str] = {}
    reverts: list[str] = []
    more: list[tuple[str, str]] = []
    for name, value in found:
        if name not in trailers:
            trailers[name] = value
        elif name in (SECTION, KEYWORDS):
            more.append((name, value))
        if name == REVERTS and value:
            reverts.append(value)
    if more:
        trailers[MORE_SECTIONS] = more_sections(more)
    return trailers, tuple(reverts)


# The trailers the index replays (the others a replay reads past).
REPLAYED_KEYS = (CARD, SECTION, KEYWORDS, SUMMARY, DIGEST, REVERTS, LAYER)


def without_digest(message: str) -> str:
    """``message`` without its ``Gitmem-Digest`` line: the text it names did not land
    whole (a commit accepted in part), so the index reads the card as it landed."""
    lines = message.split("\n")
    return "\n".join(ln for ln in lines if canonical(ln.partition(":")[0]) != DIGEST)


def more_sections(repeated: list[tuple[str, str]]) -> str:
    """The ``MORE_SECTIONS`` value of the repeated (key, value) pairs after the first, in
    order: the n-th repeated section goes with the n-th repeated keywords."""
    secs = [v for k, v in repeated if k == SECTION]
    kws = [v for k, v in repeated if k == KEYWORDS]
    kws += [""] * (len(secs) - len(kws))
    return "\n".join(f"{s}\t{k}" for s, k in zip(secs, kws, strict=False) if s)


def _unfolded(block: str) -> list[str]:
    """The block's entries with continuation lines joined onto their trailer, as git does:
    a blank-led line continues the entry above only when that entry is a trailer."""
    entries: list[str] = []
    joinable = False
    for line in block.split("\n"):
        if joinable and line and line[0] in _SPACE:
            entries[-1] += "\n" + line
            continue
        entries.append(line)
        joinable = _TOKEN.match(line) is not None
    return [_unfold(e) if "\n" in e else e for e in entries]


_FOLD = re.compile(r"\n[ \t\n\r]*")


def _unfold(entry: str) -> str:
    key, _, value = entry.partition(":")
    return key + ":" + _FOLD.sub(" ", value.strip(_SPACE))


def validate(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """Check gitmem trailers in a hand-made commit; returns canonical key -> value.

    Raises InvalidInput naming the first problem: an unknown ``Gitmem-`` key, a key
    given twice, a malformed value, or a section/keywords/summary without a card.
    """
    found: dict[str, str] = {}
    repeated: list[tuple[str, str]] = []  # Section/Keywords pairs after the first (an import)
    for key, value in pairs:
        if not key.lower().startswith("gitmem-"):
            continue
        canon = canonical(key)
        if canon is None:
            raise InvalidInput(f"unknown trailer {key!r}; gitmem knows {', '.join(ALL_KEYS)}")
        if canon in (SECTION, KEYWORDS) and canon in found and SUMMARY not in found:
            repeated.append((canon, value))
        elif canon == REVERTS:  # a session revert undoes several commits: one trailer each
            sha = _full_sha(value)
            found[canon] = f"{found[canon]} {sha}" if canon in found else sha
        elif canon in found:
            raise InvalidInput(f"trailer {canon} given more than once")
        else:
            found[canon] = value
    if found:
        _check_values(found)
    if repeated:
        found[MORE_SECTIONS] = _checked_repeats(repeated)
    return found


def _full_sha(value: str) -> str:
    sha = value.strip()
    if not (len(sha) in (40, 64) and all(c in "0123456789abcdef" for c in sha)):
        raise InvalidInput(f"{REVERTS} must be a full commit sha, not {value!r}")
    return sha


def _check_values(found: dict[str, str]) -> None:
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
    if DIGEST in found and not _HEX16.fullmatch(found[DIGEST]):
        raise InvalidInput(f"{DIGEST} must be 16 hex digits, not {found[DIGEST]!r}")
    describes = {SECTION, KEYWORDS, SUMMARY, DIGEST} & found.keys()
    if describes and CARD not in found:
        raise InvalidInput(f"{', '.join(sorted(describes))} given without {CARD}")
    if SECTION in found and REVERTS not in found and KEYWORDS not in found:
        # A summary is optional: without one the section is listed as unindexed.
        raise InvalidInput(f"{SECTION} needs {KEYWORDS} beside it")


def _checked_repeats(repeated: list[tuple[str, str]]) -> str:
    secs = [v for k, v in repeated if k == SECTION]
    kws = [v for k, v in repeated if k == KEYWORDS]
    if len(secs) != len(kws):
        raise InvalidInput(f"each repeated {SECTION} needs its own {KEYWORDS}")
    for sec, kw in zip(secs, kws, strict=True):
        names.section_id(sec)
        names.split_keywords(kw)
    return more_sections(repeated)
