"""What ``gitmem log`` prints for people: a header and one line per commit, in columns.

Piped, every column is as wide as its longest value, so the same history gives the
same bytes. In a terminal (``width`` given) the line is fitted to it: the least
needed columns go first, then the summary is shortened with an ellipsis.
"""

from __future__ import annotations

from gitmem import LogEntry

# The name a commit gets when git knows no identity (``MemoryRepo.signature``): it says
# nothing about who made the edit, so it is not shown.
GITMEM_AUTHOR = "gitmem"
MIN_SUMMARY = 20
# Dropped in this order when a terminal is too narrow for every column.
_OPTIONAL = ("SESSION", "AUTHOR", "ACTOR")


def _actor(e: LogEntry) -> str:
    # No Gitmem-Actor trailer: a commit made with plain git (its author is in AUTHOR).
    return "-" if e.actor == e.author and e.layer is None and e.card is None else e.actor


def _author(e: LogEntry) -> str:
    return "-" if not e.author or e.author == GITMEM_AUTHOR else e.author


def _where(e: LogEntry) -> str:
    if e.card and e.section:
        return f"{e.card} § {e.section}"
    return e.card or "-"


def _summary(e: LogEntry) -> str:
    return f"{e.summary} (reverts {e.reverts[:7]})" if e.reverts else e.summary


def _cells(e: LogEntry) -> dict[str, str]:
    return {
        "COMMIT": e.sha[:7],
        "DATE": e.date[:16].replace("T", " "),
        "ACTOR": _actor(e),
        "AUTHOR": _author(e),
        "SESSION": e.session or "-",
        "CARD § SECTION": _where(e),
        "SUMMARY": _summary(e),
    }


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def render(entries: list[LogEntry], width: int | None = None) -> list[str]:
    """The header and one line per entry; ``width``: the terminal's, or None when piped."""
    rows = [_cells(e) for e in entries]
    columns = list(rows[0]) if rows else []
    if rows and all(r["AUTHOR"] == "-" for r in rows):
        columns.remove("AUTHOR")
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in columns}

    def fixed(cols: list[str]) -> int:  # everything but the summary, with the gaps
        return sum(widths[c] + 2 for c in cols if c != "SUMMARY")

    if width is not None:
        for name in _OPTIONAL:
            if fixed(columns) + MIN_SUMMARY <= width:
                break
            if name in columns:
                columns.remove(name)
    room = None if width is None else max(MIN_SUMMARY, width - fixed(columns))

    def line(cells: dict[str, str]) -> str:
        parts = []
        for c in columns:
            if c == "SUMMARY":
                parts.append(cells[c] if room is None else _fit(cells[c], room))
            else:
                parts.append(f"{cells[c]:<{widths[c]}}")
        text = "  ".join(parts).rstrip()
        return text if width is None else _fit(text, width)  # narrower than the fixed columns

    return [line({c: c for c in columns}), *(line(r) for r in rows)] if rows else []
