"""What the agent is told of text gitmem cannot vouch for (``provenance`` finds it): a
line beside each unverified section, one at the top of a card changed as a whole, one
with an unverified persona, and the I block's lines naming them, byte-stable for the
same state."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from gitmem.index.framing import one_line
from gitmem.memory.cards import sections

NAMED_IN_INDEX = 20  # unverified sections the I block names (it counts them all)

_WHY = {
    "unsigned": "not signed",
    "unknown": "signed by a key this clone does not trust",
    "bad": "its signature does not hold",
    "unchecked": "its signature cannot be checked here",
    "other": "signed for another client's memory",
}

Key = tuple[str, str]  # (card, section id)


@dataclass(frozen=True)
class Unverified:
    """A section whose current text gitmem cannot vouch for."""

    card: str
    section: str
    commit: str  # the commit that wrote the text ("" for an uncommitted change)
    author: str  # its git author's name ("" for an uncommitted change)
    date: str  # YYYY-MM-DD: the commit's author date, or when the file was saved
    state: str  # the signature's state (signing.py), or "uncommitted"

    def line(self) -> str:
        """The one line the agent sees beside the section."""
        if self.state == "uncommitted":
            return (
                f"[unverified: changed outside gitmem in the working tree on {self.date}, "
                "not committed; the text here is the last commit's]"
            )
        why = _WHY.get(self.state, self.state)
        who = one_line(self.author) or "someone"
        return (
            f"[unverified: changed outside gitmem by {who} on {self.date} "
            f"(commit {self.commit[:7]}, {why})]"
        )

    def to_json(self) -> dict[str, str]:
        return asdict(self)


def persona_line(got: Unverified | None) -> str:
    """The one line the agent sees with layer A when ``persona.md`` is unverified: by the
    commit ``got`` names, or (None) by a change in the working tree not committed."""
    if got is None:
        return "[unverified: persona.md changed outside gitmem in the working tree, not committed]"
    who = one_line(got.author) or "someone"
    return (
        f"[unverified: persona.md changed outside gitmem by {who} on {got.date} "
        f"(commit {got.commit[:7]}, {_WHY.get(got.state, got.state)})]"
    )


@dataclass(frozen=True)
class Reshaped:
    """A card an unverified commit changed as a whole: sections it removed (``removed``),
    reordered, or text before them changed (``lead``)."""

    card: str
    commit: str
    author: str
    date: str
    state: str
    removed: tuple[str, ...]
    reordered: bool
    lead: bool

    def what(self) -> str:
        """What the commit did to the card, without dates: the I block says it too."""
        said = [f"removed § {', '.join(self.removed)}"] if self.removed else []
        said += ["reordered its sections"] * self.reordered + [
            "changed its title or lead"
        ] * self.lead
        return one_line("; ".join(said))

    def line(self) -> str:
        """The one line the agent sees at the top of the card."""
        who = one_line(self.author) or "someone"
        return (
            f"[unverified card: changed outside gitmem by {who} on {self.date} (commit "
            f"{self.commit[:7]}, {_WHY.get(self.state, self.state)}): {self.what()}]"
        )


def marked(
    text: str, card: str, found: dict[Key, Unverified], shape: Reshaped | None = None
) -> str:
    """A card's text (or one section's) with each unverified section's line put right
    under its heading, and ``shape``'s line (the card's) at the top."""
    if not found and shape is None:
        return text
    lines = text.split("\n")
    for s in reversed(sections(text)):
        got = found.get((card, s.id))
        if got is not None:
            lines.insert(s.start + 1, got.line())
    top = [shape.line()] if shape is not None else []
    return "\n".join(top + lines)


def index_note(
    found: dict[Key, Unverified], lost: str | None = None, shapes: dict[str, Reshaped] | None = None
) -> str:
    """The I block's lines naming a main that lost what gitmem last wrote (``lost``), the
    cards changed as a whole (``shapes``) and the unverified sections: sorted, no dates,
    so that the same state gives the same bytes ("" when there is none)."""
    notes = []
    if lost:
        notes.append(
            f"Unverified: main no longer holds {lost[:7]}, where gitmem last left it (memory "
            "rolled back or rewritten outside gitmem): what you remember may be old"
        )
    if shapes:
        named = "; ".join(f"{c} ({shapes[c].what()})" for c in sorted(shapes)[:NAMED_IN_INDEX])
        notes.append(f"Unverified cards (changed outside gitmem as a whole): {one_line(named)}")
    rollback = "\n".join(notes)
    if not found:
        return rollback
    keys = sorted(found)
    names = ", ".join(f"{card} § {sid}" for card, sid in keys[:NAMED_IN_INDEX])
    more = len(keys) - NAMED_IN_INDEX
    rest = f", and {more} more (read a section to see its line)" if more > 0 else ""
    line = (
        f"Unverified ({len(found)}; changed outside gitmem, not signed by a trusted key, "
        f"or not committed): {one_line(names)}{rest}"
    )
    return f"{rollback}\n{line}" if rollback else line
