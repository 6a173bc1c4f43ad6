"""``gitmem review ID --markdown``: a session as a pull-request description.

Meant to be pasted into a forge's pull request for the session's branch: what the
session changed per card and section, each section's index entry before the session
(as ``main`` held it at the session's base) and after it, and the diffs. Plain
CommonMark; nothing in it depends on the terminal.
"""

from __future__ import annotations

from collections.abc import Callable

from gitmem.index.build import refresh
from gitmem.index.replay import replay_at
from gitmem.memory import trailers as T
from gitmem.memory.repo import MAIN, MemoryRepo
from gitmem.review.changes import by_path
from gitmem.review.pending import ReviewCommit, SessionView
from gitmem.wording import count


def _entry(value: list[str] | None) -> str:
    if value is None:
        return "_(none)_"
    keywords = value[1] or "-"
    return f"{_inline(value[2])} — keywords: {_inline(keywords)}"


def entries_before(repo: MemoryRepo, view: SessionView) -> Callable[[str], list[str] | None]:
    """Each "card/section"'s index entry as main held it at the session's base, as
    [sha, keywords, summary]: main's cached index when the base is main's tip (the usual
    case), else a replay of the history behind the base (100k commits: seconds)."""
    if not view.base:
        return lambda key: None
    if view.base != repo.tip(MAIN):
        return replay_at(repo, view.base).current
    index = refresh(repo, MAIN)

    def current(key: str) -> list[str] | None:
        card, _, sid = key.partition("/")
        entry = index.card(card)
        s = next((s for s in entry.sections if s.id == sid), None) if entry else None
        if s is None or s.summary is None:
            return None
        return [s.commit or "", ", ".join(s.keywords), s.summary]

    return current


def _inline(text: str) -> str:
    """One line of text that cannot open a code span, a heading or an HTML tag."""
    return " ".join(text.split()).replace("`", "'").replace("<", "&lt;").replace(">", "&gt;")


def _after(c: ReviewCommit) -> list[str] | None:
    entry = c.entry()
    if entry is None:
        return None
    kws = entry.get("keywords") or []
    assert isinstance(kws, list)
    return [c.sha, ", ".join(str(k) for k in kws), str(entry.get("summary") or "")]


def _fence(lines: list[str]) -> str:
    longest = max((len(ln) - len(ln.lstrip("`")) for ln in lines), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join([f"{fence}diff", *lines, fence])


def session_markdown(repo: MemoryRepo, view: SessionView) -> str:
    """A session as a pull request's description (Markdown): its commits, index entries and diffs."""
    s = view.ref
    before = entries_before(repo, view)
    cards = view.cards()
    out = [
        f"# Memory session {s.id}",
        "",
        f"{count(len(view.edits), 'edit')} to {count(len(cards), 'card')} "
        f"({', '.join(cards) or '-'}), branch `{s.ref.removeprefix('refs/heads/')}`"
        + (f", based on `{view.base[:12]}`" if view.base else "")
        + (f", from {s.machine}" if s.machine else "")
        + ".",
    ]
    sections: dict[str, list[ReviewCommit]] = {}
    for c in view.edits:
        key = f"{c.commit.get(T.CARD) or '-'}/{c.commit.get(T.SECTION) or '-'}"
        sections.setdefault(key, []).append(c)
    out += ["", "## Sections", "", "| card | section | edits |", "|---|---|---|"]
    for key, commits in sections.items():
        card, _, section = key.partition("/")
        out.append(f"| {_inline(card)} | {_inline(section)} | {len(commits)} |")
    out += ["", "## Index entries", ""]
    for key, commits in sections.items():
        card, _, section = key.partition("/")
        out += [
            f"### {_inline(card)} § {_inline(section)}",
            "",
            f"- before: {_entry(before(key))}",
            f"- after: {_entry(_after(commits[-1]))}",
            "",
        ]
    out += ["## Files", "", "| file | change |", "|---|---|"]
    out += [f"| `{_inline(p)}` | {done} |" for p, done, _ in by_path(view.changes)]
    out += ["", "## Changes", ""]
    for path, changes in view.by_file():
        out += [f"### `{_inline(path)}`", ""]
        for c, mine in changes:
            numbers = ", ".join(str(h.number) for h in mine)
            label = "hunk" if len(mine) == 1 else "hunks"
            out += [f"**{c.sha[:7]}** {_inline(c.commit.subject)} ({label} {numbers})", ""]
            lines: list[str] = []
            for h in mine:
                lines += [h.hunk.header, *h.hunk.lines]
            out += [_fence(lines), ""]
    transcript = [c for c in view.commits if c.transcript]
    if transcript:
        out += ["## Transcript", ""]
        out += [f"- {c.sha[:7]} {_inline(c.commit.subject)}" for c in transcript]
        out.append("")
    if s.pending:
        out += [
            "---",
            "",
            f"Decide with `gitmem review {s.id} --accept` (all), `--accept --commit SHA`, "
            f"`--accept --hunks 1,3` or `--reject`.",
            "",
        ]
    return "\n".join(out).rstrip("\n") + "\n"
