"""gitmem reads the trailer block git prints for ``%(trailers)`` exactly as git's own
``%(trailers:only,unfold)`` would: same keys, same values, same order of reverts.

The reference is git itself: every message is committed with ``git commit-tree`` and
both formats are read back from one ``git log`` each.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.git.runner import Git
from gitmem.memory import trailers as T
from gitmem.ops.history import read_log

from helpers import git

SHA = "0123456789abcdef0123456789abcdef01234567"

KEYS = [
    "Gitmem-Card",
    "gitmem-card",
    "GITMEM-SECTION",
    "Gitmem-Section",
    "Gitmem-Keywords",
    "Gitmem-Summary",
    "Gitmem-Reverts",
    "Gitmem-Layer",
    "Gitmem-Session",
    "Gitmem-Actor",
    "Gitmem-\u212aeywords",  # a Kelvin sign: lowercases to "k" but is no trailer token for git
    "Gitmem-Cards",
    "Signed-off-by",
    "Co-authored-by",
    "X",
]
VALUES = [
    "alpha",
    " budget ",
    "q3, launch",
    "",
    SHA,
    "a:b",
    "x\t",
    "é ü",
    "50%",
    "ff\x0c",
    "nb\xa0",
]
SEPARATORS = [": ", ":", " : ", "\t:", ":  ", " :"]

trailer_line = st.builds(
    lambda k, s, v: f"{k}{s}{v}",
    st.sampled_from(KEYS),
    st.sampled_from(SEPARATORS),
    st.sampled_from(VALUES),
)
other_line = st.sampled_from(
    [
        "free text",
        "# a comment",
        "(cherry picked from commit " + SHA + ")",
        "---",
        "Signed-off-by: A <a@example.com>",
        "no colon here",
        ":starts with colon",
        "Key with space: v",
        " Gitmem-Card: indented",
        "\tcontinued",
        "  more words",
        "Gitmem-Card x: y",
        "\r",
    ]
)
line = st.one_of(trailer_line, trailer_line, other_line)
paragraph = st.lists(line, min_size=1, max_size=6).map("\n".join)
message = st.builds(
    lambda subject, paras, crlf, end: _join(subject, paras, crlf, end),
    st.sampled_from(["subject", "Gitmem-Card: alpha", "two\nlines"]),
    st.lists(paragraph, max_size=3),
    st.booleans(),
    st.sampled_from(["\n", "", "\n\n", "\n# trailing comment\n"]),
)


def _join(subject: str, paras: list[str], crlf: bool, end: str) -> str:
    text = "\n\n".join([subject, *paras]) + end
    return text.replace("\n", "\r\n") if crlf else text


def reference(block: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """gitmem's trailers from git's normalized ``only,unfold,separator=%x1e`` output."""
    found: dict[str, str] = {}
    reverts: list[str] = []
    repeated: list[tuple[str, str]] = []  # a second Gitmem-Section or Gitmem-Keywords, on
    for item in block.split("\x1e") if block else []:
        key, _, value = item.partition(": ")  # git prints every trailer as "token: value"
        name = T.canonical(key)
        if name and key.isascii():
            if name in found and name in (T.SECTION, T.KEYWORDS):
                repeated.append((name, value))
            found.setdefault(name, value)
            if name == T.REVERTS and value:
                reverts.append(value)
    sections = [v for k, v in repeated if k == T.SECTION]
    keywords = [v for k, v in repeated if k == T.KEYWORDS]
    pairs = [f"{s}\t{keywords[i] if i < len(keywords) else ''}" for i, s in enumerate(sections)]
    if repeated:
        found[T.MORE_SECTIONS] = "\n".join(p for p in pairs if not p.startswith("\t"))
    return found, tuple(reverts)


def log(root: Path, fmt: str, tip: str, n: int) -> list[str]:
    out = git(root, "log", "-z", f"-n{n}", f"--format={fmt}", tip)
    return [r.lstrip("\n") for r in out.split("\0")][:n]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(messages=st.lists(message, min_size=1, max_size=6))
def test_raw_block_reads_like_git_only_unfold(tmp_path: Path, messages: list[str]) -> None:
    root = tmp_path / "r"
    if not root.exists():
        git(tmp_path, "init", "-q", str(root))
    tree = git(root, "hash-object", "-t", "tree", "-w", "--stdin", input=b"").strip()
    tip = None
    for msg in messages:
        parent: list[str] = ["-p", tip] if tip else []
        tip = git(root, "commit-tree", tree, *parent, input=msg.encode()).strip()
    assert tip is not None
    raw = log(root, "%(trailers)", tip, len(messages))
    ref = log(root, "%(trailers:only,unfold,separator=%x1e)", tip, len(messages))
    assert len(raw) == len(ref) == len(messages)
    for block, normalized in zip(raw, ref, strict=True):
        assert T.gitmem_trailers(block) == reference(normalized), (block, normalized)
    # The audit log reads the same blocks through the same parser.
    commits = read_log(Git(root), tip, max_count=len(messages))
    assert [(c.trailers, c.reverts) for c in commits] == [reference(r) for r in ref]


def test_continuations_and_foreign_lines() -> None:
    block = (
        "Signed-off-by: A <a@example.com>\n"
        "Gitmem-Summary: first line\n"
        "  folded on\n"
        "\tand on\n"
        "free text\n"
        "  not a continuation\n"
        "gitmem-card : alpha\n"
        "Gitmem-Reverts: " + SHA + "\n"
        "GITMEM-REVERTS:\t" + SHA[::-1] + "\n"
    )
    found, reverts = T.gitmem_trailers(block)
    assert found == {T.SUMMARY: "first line folded on and on", T.CARD: "alpha", T.REVERTS: SHA}
    assert reverts == (SHA, SHA[::-1])
