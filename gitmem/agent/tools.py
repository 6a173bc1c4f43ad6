"""Layer B's tools: the schemas the model sees and the code that runs them.

The same ``MemoryTools`` serve chat sessions, the MCP server and scripts. A
failed call never raises: it returns ``ToolResult(is_error=True)`` with a clear
one-line reason, and changes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmem.errors import GitmemError, InvalidInput
from gitmem.features.audit import read_card
from gitmem.features.edit import write_card
from gitmem.index import build as index
from gitmem.index import provenance
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.search import passage, ranked
from gitmem.search.hits import Hit
from gitmem.search.ranked import check_query

MAX_INPUT_BYTES = 262144

TOOLS: list[dict[str, Any]] = [
    {
        "name": "read_memory_card",
        "description": (
            "Read a long-term memory card (one per project), or one section of it by id. "
            "The memory index in the system prompt lists every card and section id; on a card "
            "it folds, this lists the card's sections (id: summary [keywords]) to read one."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "project": {"type": "string", "description": "Card name, e.g. 'acme-website'."},
                "section_id": {
                    "type": "string",
                    "description": "Optional section id, e.g. 'budget'.",
                },
                "ref": {
                    "type": "string",
                    "description": (
                        "Instead of project: a search_history hit's ref, to read the whole "
                        "passage: a session turn with the turns around it "
                        "('20261130-101200-ab12#3'), or a section as a commit wrote it "
                        "('acme-website/budget@1a2b3c4d5e6f')."
                    ),
                },
            },
            "additionalProperties": False,
        },
    },
    {
        "name": "write_memory_card",
        "description": (
            "Edit a memory card surgically: replace old_text, which must occur exactly once, "
            "by new_text. An empty old_text creates the card or appends to its end. Every edit "
            "is one commit; index_entry describes the section the edit is about (it must exist "
            "after the edit) and becomes that section's line in the memory index."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "project": {"type": "string"},
                "old_text": {"type": "string"},
                "new_text": {"type": "string"},
                "index_entry": {
                    "type": "object",
                    "properties": {
                        "section_id": {"type": "string"},
                        "keywords": {"type": "array", "items": {"type": "string"}},
                        "summary": {"type": "string"},
                    },
                    "required": ["section_id", "keywords", "summary"],
                    "additionalProperties": False,
                },
            },
            "required": ["project", "old_text", "new_text", "index_entry"],
            "additionalProperties": False,
        },
    },
    {
        "name": "search_history",
        "description": (
            "Ranked search over long-term memory: the current card sections (with their index "
            "keywords and summaries), the values they held before (with dates), and past session "
            "transcripts. Use it when the index does not already point to the section: if it "
            "does, read that section with read_memory_card instead. Search with a few words: the "
            "client or project name and the topic word (e.g. 'acme budget', 'globex launch date'); "
            "add 'before' or 'previously' to rank older values first; dates ('in June', 'last "
            "week', 'in 2025') are matched against when things were said or written. Each hit "
            "names card § section (current or past, with dates) or session turn and speaker, "
            "with a snippet; a session turn's or past value's ref opens it whole with "
            "read_memory_card(ref=...)."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "A few words: names and topic; hits need not contain all.",
                },
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                "as_of": {
                    "type": "string",
                    "description": "YYYY-MM-DD: search what memory held on that day.",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
]
TOOL_NAMES = tuple(t["name"] for t in TOOLS)


@dataclass(frozen=True)
class ToolResult:
    text: str
    is_error: bool = False
    card_text: bool = False  # the text is card content (layer E) for the usage log
    commit: str | None = None


@dataclass
class MemoryTools:
    repo: MemoryRepo
    branch: str = "main"
    session: str | None = None
    actor: str = "agent"
    live_transcripts: list[Path] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)

    def call(self, name: str, args: object) -> ToolResult:
        try:
            if _input_bytes(args) > MAX_INPUT_BYTES:
                raise InvalidInput(f"tool input is over {MAX_INPUT_BYTES} bytes")
            if not isinstance(args, dict):
                raise InvalidInput("tool input must be a JSON object")
            if name == "read_memory_card":
                return self._read(args)
            if name == "write_memory_card":
                return self._write(args)
            if name == "search_history":
                return self._search(args)
            raise InvalidInput(f"unknown tool {name!r}; tools are {', '.join(TOOL_NAMES)}")
        except GitmemError as err:
            return ToolResult(f"Error: {err}", is_error=True)

    def _read(self, args: dict[str, Any]) -> ToolResult:
        _only(args, {"project", "section_id", "ref"})
        if "ref" in args:
            if set(args) != {"ref"}:
                raise InvalidInput("give either ref (a search hit's) or project, not both")
            got = passage.open_hit(self.repo, _str(args, "ref"), branch=self.branch)
            return ToolResult(got.text, card_text=True)
        if "project" not in args:
            raise InvalidInput("give project (a card name, and section_id if you like) or ref")
        project = _str(args, "project")
        section = args.get("section_id")
        if section is not None and not isinstance(section, str):
            raise InvalidInput("section_id must be a string")
        if not section:
            folded = self._section_map(project)
            if folded is not None:
                return ToolResult(folded)
        text = read_card(self.repo, project, section or None, branch=self.branch)
        found = provenance.unverified(self.repo, self.branch)
        shape = provenance.reshaped(self.repo, self.branch).get(project)
        return ToolResult(provenance.marked(text, project, found, shape), card_text=True)

    def _section_map(self, project: str) -> str | None:
        """A card folded in the I block: its sections' index lines, not its text."""
        _text, split = index.shown(self.repo, self.branch)
        if project in split.full:
            return None
        lines = index.card_lines(self.repo, self.branch, project)
        if lines is None:
            return None  # no such card: read_card says so
        return (
            f"{project} is folded in the memory index; its sections, one line each "
            "(id: summary [keywords]):\n"
            f"{lines.strip()}\n"
            f"Read one with read_memory_card({project!r}, section_id).\n"
        )

    def _write(self, args: dict[str, Any]) -> ToolResult:
        _only(args, {"project", "old_text", "new_text", "index_entry"})
        entry = args.get("index_entry")
        if not isinstance(entry, dict):
            raise InvalidInput("index_entry must be an object with section_id, keywords, summary")
        _only(entry, {"section_id", "keywords", "summary"})
        kws = entry.get("keywords")
        if not isinstance(kws, list) or not all(isinstance(k, str) for k in kws):
            raise InvalidInput("index_entry.keywords must be a list of strings")
        idx = IndexEntry.make(_str(entry, "section_id"), kws, _str(entry, "summary"))
        res = write_card(
            self.repo,
            _str(args, "project"),
            _str(args, "old_text", empty=True),
            _str(args, "new_text", empty=True),
            idx,
            session=self.session,
            actor=self.actor,
            branch=self.branch,
        )
        self.commits.append(res.commit)
        verb = "Created" if res.created else "Edited"
        return ToolResult(
            f"{verb} {res.card} § {res.section} (commit {res.commit[:7]}).", commit=res.commit
        )

    def _search(self, args: dict[str, Any]) -> ToolResult:
        _only(args, {"query", "limit", "as_of"})
        limit = args.get("limit", 10)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 50:
            raise InvalidInput("limit must be an integer from 1 to 50")
        result = ranked.search(
            self.repo,
            check_query(args.get("query")),
            limit,
            branch=self.branch,
            live=self.live_transcripts,
            as_of=_optional_str(args, "as_of"),
        )
        if not result.hits:
            return ToolResult("No matches.")
        found = provenance.unverified(self.repo, self.branch)
        lines = []
        for hit in result.hits:
            lines.append(hit_line(hit))
            got = found.get((hit.card, hit.section)) if hit.state == "current" else None
            if got is not None:
                lines.append(got.line())
        return ToolResult("\n".join(lines))


def hit_line(hit: Hit) -> str:
    """A search hit as the model reads it: what and when, then its snippet."""
    if hit.kind == "transcript":
        return f"[transcript {hit.ref} {hit.role}, {hit.date[:10]}] {hit.snippet}"
    when = hit.date[:10]
    if hit.state == "past":  # its ref opens the value as it was
        when = f"{when} to {hit.until[:10]}, {hit.ref}"
    where = f"{hit.card} § {hit.section}, {when}, {hit.commit[:7]}"
    return f"[{hit.state} {where}] {hit.snippet}"


def _input_bytes(args: object) -> int:
    try:
        return len(json.dumps(args, ensure_ascii=False).encode())
    except UnicodeEncodeError:  # JSON may carry a lone surrogate ("\ud800"): no text has one
        raise InvalidInput("tool input is not valid UTF-8 (it holds a lone surrogate)") from None


def _only(args: dict[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(args) - allowed)
    if extra:
        raise InvalidInput(f"unexpected field(s): {', '.join(extra)}")


def _optional_str(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is not None and not isinstance(value, str):
        raise InvalidInput(f"{key} must be a string when given")
    return value


def _str(args: dict[str, Any], key: str, *, empty: bool = False) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise InvalidInput(f"{key} is required and must be a string")
    if not empty and not value.strip():
        raise InvalidInput(f"{key} must not be empty")
    return value
