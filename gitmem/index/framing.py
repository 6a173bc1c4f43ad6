"""Memory content is data, not instructions: what goes into the prompt from cards,
index entries, the synthesis or the persona cannot close or open a layer's frame.

The system prompt frames layers in tags (``<memory-index>``, ``<synthesis>``). A
heading, keyword or summary is written by whoever edits memory, a remote included,
so every tag-like sequence naming a layer -- opening or closing, in any case, with
blanks, dashes or underscores inside -- has its angle bracket replaced by a look-alike
that no reader takes for markup. Line separators become spaces: one entry stays one line.
"""

from __future__ import annotations

import re

INDEX_TAG = "memory-index"
SYNTHESIS_TAG = "synthesis"
LAYER_TAGS = (INDEX_TAG, SYNTHESIS_TAG)


def _spelled(tag: str) -> str:
    """``memory-index`` as any reader might still take it: ``Memory_Index``, ``memory index``."""
    return r"[\s_-]*".join(re.escape(part) for part in tag.split("-"))


# "<", then blanks and any number of slashes, then a layer's name: how a tag starts.
TAG_LIKE = re.compile(
    r"[<\uff1c\u2329\u3008\u27e8]\s*(?:/\s*)*(?:" + "|".join(map(_spelled, LAYER_TAGS)) + r")",
    re.IGNORECASE,
)
_LINE_SEPARATORS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029]")


def neutral(text: str) -> str:
    """``text`` with every layer tag defused (the ``<`` becomes U+2039); lines kept."""
    return TAG_LIKE.sub(lambda m: "\u2039" + m.group()[1:], text)


def one_line(text: str) -> str:
    """A single-line value for the prompt: tags defused, line separators made spaces."""
    return neutral(_LINE_SEPARATORS.sub(" ", text))


def framed(tag: str, body: str) -> str:
    """``body`` between ``<tag>`` and ``</tag>``, its own layer tags defused."""
    return f"<{tag}>\n{neutral(body.strip())}\n</{tag}>\n"
