"""RuleModel: a deterministic simulated memory agent for demos and benchmarks.

It answers a few commands in the last user text (case-insensitive):

* ``remember <project> <section heading>: <text>`` -> ``write_memory_card``
  appending ``"\\n## <heading>\\n<text>\\n"``;
* ``update <project> <section_id>: <old> => <new>`` -> ``write_memory_card``
  replacing ``<old>`` with ``<new>``;
* ``recall <project> [<section_id>]`` -> ``read_memory_card``;
* ``search <query>`` -> ``search_history``;
* a question (it ends with "?") -> ``read_memory_card`` on each section the memory
  index in the system prompt points it to (see :mod:`.recall`), then an answer that
  cites what it read, card § section; "nothing in memory" when the index has none;
* ``summarize ...`` or the marker ``<<synthesis>>`` in the system prompt or the
  user text -> a short Markdown synthesis of the user text;
* anything else -> an acknowledgement naming how many system blocks and
  tools it saw.

An update's index summary is the section's summary from the index with the same
replacement made (what the section now says), or the new text when the index does
not list the section.

When the last message carries ``tool_result`` blocks it reports the outcome
in one text ("Saved.", what was read as the tool gave it, the first line of any
other result, or "That failed: <error>"), or answers the question the reads were
for.  Output is byte-deterministic: tool-use ids are hashes of the request, never random.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from . import recall
from .reply import ContentBlock, Reply, TextBlock, ToolUseBlock
from .tokens import canonical_json, content_blocks, system_blocks

SYNTHESIS_MARKER = "<<synthesis>>"
NOTE = "<gitmem-note>"  # a block gitmem adds to a user turn (e.g. after /undo)
SUMMARY_LIMIT = 80

_REMEMBER = re.compile(r"^remember\s+(\S+)\s+([^:\n]+?)\s*:\s*(.+)$", re.IGNORECASE | re.DOTALL)
_UPDATE = re.compile(
    r"^update\s+(\S+)\s+([^:\s]+)\s*:\s*(.+?)\s*=>\s*(.+)$", re.IGNORECASE | re.DOTALL
)
_RECALL = re.compile(r"^recall\s+(\S+)(?:\s+(\S+))?\s*$", re.IGNORECASE)
_SEARCH = re.compile(r"^search\s+(.+)$", re.IGNORECASE | re.DOTALL)
_SUMMARIZE = re.compile(r"^summari[sz]e\b[:\s]*", re.IGNORECASE)


def slug(heading: str) -> str:
    """Lowercase, runs of non-alphanumerics become ``-``, trimmed."""
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


def keywords(text: str, limit: int = 4) -> list[str]:
    """Up to ``limit`` longest distinct lowercase alphanumeric words (ties: first seen)."""
    words = list(dict.fromkeys(re.findall(r"[a-z0-9]+", text.lower())))
    return sorted(words, key=lambda word: (-len(word), words.index(word)))[:limit]


def summary(text: str, limit: int = SUMMARY_LIMIT) -> str:
    """Whitespace collapsed, cut to ``limit`` characters (with an ellipsis when cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _text_of(content: object) -> str:
    return "\n".join(
        str(block.get("text", ""))
        for block in content_blocks(content)
        if block.get("type") == "text"
    )


def _said(content: object) -> str:
    """What the person wrote: the text blocks, without notes gitmem added beside them."""
    return "\n".join(
        str(block.get("text", ""))
        for block in content_blocks(content)
        if block.get("type") == "text" and not str(block.get("text", "")).startswith(NOTE)
    )


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    return content if isinstance(content, str) else _text_of(content)


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


# What a person can type to it (``gitmem chat --simulated`` shows these; docs/chat.md).
USAGE = (
    ("remember PROJECT HEADING: TEXT", "writes a new section to the card"),
    ("update PROJECT SECTION: OLD => NEW", "replaces OLD with NEW in one section"),
    ("recall PROJECT [SECTION]", "reads a card, or one section"),
    ("search WORDS", "searches memory, past versions included"),
    ("a question ending in ?", "reads the sections the index points to and answers"),
    ("summarize TEXT", "a short synthesis"),
)
LABEL = (
    "SIMULATED MODEL: replies come from gitmem's scripted stand-in on 127.0.0.1, not from "
    "Claude; no API key is used. Memory, commits, index and review are real."
)


class RuleModel:
    """A deterministic stand-in for Claude driving gitmem's memory tools."""

    def __call__(self, request: dict[str, Any]) -> Reply:
        messages = request.get("messages") or []
        last = messages[-1] if messages else {}
        results = [b for b in content_blocks(last.get("content")) if b.get("type") == "tool_result"]
        if results:
            return self._report(results, messages)
        system_text = "\n".join(
            str(b.get("text", "")) for b in system_blocks(request.get("system"))
        )
        text = _said(last.get("content")).strip()
        if SYNTHESIS_MARKER in system_text or SYNTHESIS_MARKER in text or _SUMMARIZE.match(text):
            return Reply.text(self._synthesis(text))
        return self._command(text, request, system_text)

    def _command(self, text: str, request: dict[str, Any], system_text: str = "") -> Reply:
        tool_names = {str(t.get("name")) for t in request.get("tools") or [] if isinstance(t, dict)}
        index = recall.parse_index(system_text)
        call: tuple[str, dict[str, Any]] | None = None
        if match := _REMEMBER.match(text):
            project, heading, body = match.group(1), match.group(2).strip(), match.group(3).strip()
            entry = {
                "section_id": slug(heading),
                "keywords": keywords(body),
                "summary": summary(body),
            }
            new_text = f"\n## {heading}\n{body}\n"
            call = ("write_memory_card", _write(project, "", new_text, entry))
        elif match := _UPDATE.match(text):
            project, section_id, old, new = (match.group(i).strip() for i in range(1, 5))
            known = _written(request.get("messages") or []) + index  # newest first
            listed = recall.find(known, project, section_id)
            said = listed.summary.replace(old, new) if listed and old in listed.summary else new
            entry = {
                "section_id": section_id,
                "keywords": keywords(said),
                "summary": summary(said),
            }
            call = ("write_memory_card", _write(project, old, new, entry))
        elif match := _RECALL.match(text):
            read: dict[str, Any] = {"project": match.group(1)}
            if match.group(2):
                read["section_id"] = match.group(2)
            call = ("read_memory_card", read)
        elif match := _SEARCH.match(text):
            call = ("search_history", {"query": match.group(1).strip()})
        elif recall.is_question(text) and index and "read_memory_card" in tool_names:
            return self._look_up(text, index, request)
        if call is None:
            return Reply.text(self._acknowledge(text, request, len(tool_names)))
        name, tool_input = call
        if name not in tool_names:
            return Reply.text(f"I can't do that: the tool {name} is not available.")
        tool_id = (
            "toolu_"
            + hashlib.sha256(canonical_json([request.get("messages"), name]).encode()).hexdigest()[
                :24
            ]
        )
        return Reply.tool_use(name, tool_input, id=tool_id)

    @staticmethod
    def _look_up(text: str, index: list[recall.IndexLine], request: dict[str, Any]) -> Reply:
        """A question: read the sections the index points to (all in one reply)."""
        picked = recall.sections_for(text, index)
        if not picked:
            return Reply.text(
                "Memory has nothing on that yet: no card or section in the index matches."
            )
        where = ", ".join(f"{x.project} § {x.section_id}" for x in picked)
        content: list[ContentBlock] = [TextBlock(f"The memory index points to {where}; reading.")]
        for n, x in enumerate(picked):
            seed = canonical_json([request.get("messages"), "read_memory_card", n])
            content.append(
                ToolUseBlock(
                    "read_memory_card",
                    {"project": x.project, "section_id": x.section_id},
                    "toolu_" + hashlib.sha256(seed.encode()).hexdigest()[:24],
                )
            )
        return Reply(content, "tool_use")

    @staticmethod
    def _acknowledge(text: str, request: dict[str, Any], tools: int) -> str:
        systems = len(system_blocks(request.get("system")))
        said = summary(text, 60) if text else "(nothing)"
        block_word = "block" if systems == 1 else "blocks"
        tool_word = "tool" if tools == 1 else "tools"
        return f'Noted: "{said}" (I saw {systems} system {block_word} and {tools} {tool_word}.)'

    @staticmethod
    def _synthesis(text: str) -> str:
        text = _SUMMARIZE.sub("", text, count=1)
        lines = [line.strip() for line in text.replace(SYNTHESIS_MARKER, "").splitlines()]
        # gitmem's synthesis request lists the exchanges as "user: ..." lines: keep what the
        # person said most recently; any other text: its first lines.
        said = [line[5:].strip() for line in lines if line.lower().startswith("user:")]
        picked = said[-3:] if said else lines
        points = [line.lstrip("-*# ").strip() for line in picked if line.strip("-*# ")][:3]
        if not points:
            return "## Synthesis\n\n- (nothing to summarize)\n"
        return "## Synthesis\n\n" + "".join(f"- {point}\n" for point in points)

    @staticmethod
    def _report(results: list[dict[str, Any]], messages: list[Any]) -> Reply:
        names: dict[str, str] = {}
        inputs: dict[str, dict[str, Any]] = {}
        if len(messages) >= 2:
            for block in content_blocks(messages[-2].get("content")):
                if block.get("type") == "tool_use":
                    names[str(block.get("id"))] = str(block.get("name"))
                    inputs[str(block.get("id"))] = dict(block.get("input") or {})
        asked = _last_user_text(messages)
        reads = [r for r in results if names.get(str(r.get("tool_use_id"))) == "read_memory_card"]
        if recall.is_question(asked) and reads and len(reads) == len(results):
            return Reply.text(_answer(reads, inputs))
        parts: list[str] = []
        for result in results:
            output = _result_text(result)
            name = names.get(str(result.get("tool_use_id")), "")
            if result.get("is_error"):
                parts.append(f"That failed: {_first_line(output) or 'unknown error'}")
            elif name == "write_memory_card":
                parts.append("Saved.")
            elif name == "read_memory_card":
                parts.append(output.strip() or "(empty result)")
            else:
                parts.append(_first_line(output) or "(empty result)")
        return Reply.text(" ".join(parts))


def _written(messages: list[Any]) -> list[recall.IndexLine]:
    """Index entries of this conversation's own writes: newer than the index it was sent."""
    found: list[recall.IndexLine] = []
    for message in messages:
        for block in content_blocks(message.get("content")):
            args = block.get("input") or {}
            entry = args.get("index_entry") if isinstance(args, dict) else None
            if block.get("name") == "write_memory_card" and isinstance(entry, dict):
                found.insert(
                    0,
                    recall.IndexLine(
                        str(args.get("project")),
                        str(entry.get("section_id")),
                        str(entry.get("summary")),
                        tuple(map(str, entry.get("keywords") or ())),
                    ),
                )
    return found


def _last_user_text(messages: list[Any]) -> str:
    """What the person last said (tool results are user messages too: skipped)."""
    for message in reversed(messages):
        if message.get("role") == "user":
            text = _said(message.get("content")).strip()
            if text:
                return text
    return ""


def _answer(reads: list[dict[str, Any]], inputs: dict[str, dict[str, Any]]) -> str:
    """An answer made of what was read, each fact with the card § section it came from."""
    lines = []
    for result in reads:
        args = inputs.get(str(result.get("tool_use_id")), {})
        where = f"{args.get('project', '?')} § {args.get('section_id', '?')}"
        if result.get("is_error"):
            lines.append(f"- {where} could not be read: {_first_line(_result_text(result))}")
            continue
        heading, body = recall.section_body(_result_text(result))
        lines.append(
            f"- **{heading or args.get('section_id', '')}**: {body or '(empty)'} ({where})"
        )
    return "From memory:\n\n" + "\n".join(lines)


def _write(project: str, old: str, new: str, entry: dict[str, Any]) -> dict[str, Any]:
    return {"project": project, "old_text": old, "new_text": new, "index_entry": entry}
