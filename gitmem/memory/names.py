"""Validation of every name and single-line value that reaches a path or a trailer."""

from __future__ import annotations

import re

from gitmem.errors import InvalidInput
from gitmem.memory import path_rule

# Whole-string patterns, used with fullmatch: "$" alone would accept a final "\n".
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_SESSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_ACTOR = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")
# What splits a line, a path or a trailer block wherever it appears: refused in every name
# and single-line value before any other rule is looked at.
FORBIDDEN = ("\n", "\r", "\t", "\0", "\u2028", "\u2029")
_FORBIDDEN = re.compile("[" + "".join(FORBIDDEN) + "]")
# A git ref name part, as `git check-ref-format` allows it (and nothing that reads as an option).
_BRANCH = re.compile(r"(?![-./])(?!.*(?:\.\.|@\{|//|/\.|\.lock(?:/|\Z)))[^\x00-\x20\x7f~^:?*\[\\]+")
# A value that would read as a second trailer: "Gitmem-Card: x", "Signed-off-by: y".
_FAKE_KEY = re.compile(r"(?i)(?:\bgitmem-[a-z0-9-]*\s*:|^\s*[a-z][a-z0-9]*(?:-[a-z0-9]+)+\s*:)")
MAX_SLUG = 64
MAX_SUMMARY = 200
MAX_KEYWORD = 40
MAX_KEYWORDS = 12


def slugify(text: str) -> str:
    """The id of a heading: lowercase ASCII letters and digits joined by single dashes."""
    out = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return out[:MAX_SLUG].rstrip("-")


def is_slug(text: str) -> bool:
    """Whether ``text`` is a whole slug (what a card's file name is, less ``.md``)."""
    return _SLUG.fullmatch(text) is not None


def check_utf8(value: str, what: str) -> str:
    """Refuse text that came from non-UTF-8 bytes (click passes them as surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{what} is not valid UTF-8") from None
    return value


def check_forbidden(value: str, what: str) -> str:
    """Refuse a line break, tab or NUL anywhere in ``value`` (one line naming it)."""
    found = _FORBIDDEN.search(value)
    if found:
        raise InvalidInput(
            f"invalid {what} {value!r}: contains {found.group()!r} at position {found.start()}"
        )
    return value


def _checked(value: str, what: str) -> str:
    check_utf8(value, what)
    return check_forbidden(value, what)


def _slug(name: str, what: str, rule: str) -> str:
    _checked(name, what)
    if not _SLUG.fullmatch(name) or len(name) > MAX_SLUG:
        raise InvalidInput(f"invalid {what} {name!r}: {rule}")
    return name


def project(name: str) -> str:
    rule = (
        f"use lowercase letters, digits and single dashes (at most {MAX_SLUG} characters), "
        "e.g. 'acme-website'"
    )
    _slug(name, "project name", rule)
    problem = path_rule.part_problem(f"{name}.md")  # a slug can still be a device name
    if problem is not None:
        raise InvalidInput(f"invalid project name {name!r}: {problem}")
    return name


def section_id(name: str) -> str:
    return _slug(name, "section id", "a section id is the slug of its heading, e.g. 'next-steps'")


def client(name: str) -> str:
    try:
        return project(name)
    except InvalidInput:
        raise InvalidInput(
            f"invalid client name {name!r}: use lowercase letters, digits and single dashes"
        ) from None


def session(name: str) -> str:
    _checked(name, "session id")
    if not _SESSION.fullmatch(name):
        raise InvalidInput(f"invalid session id {name!r}: letters, digits, '.', '_' and '-' only")
    return name


def actor(name: str) -> str:
    _checked(name, "actor")
    if not _ACTOR.fullmatch(name):
        raise InvalidInput(f"invalid actor {name!r}: letters, digits, '.', '_' and '-' only")
    return name


def branch(name: str) -> str:
    """A branch name as given by a person (``--branch``): one git ref name, nothing else."""
    _checked(name, "branch name")
    if not _BRANCH.fullmatch(name) or name.endswith((".", "/")) or name == "@":
        raise InvalidInput(f"invalid branch name {name!r}: not a git branch name")
    return name


def remote(name: str) -> str:
    """A remote's name as given by a person (``gitmem sync REMOTE``)."""
    _checked(name, "remote name")
    if not name or name.startswith("-") or any(c.isspace() for c in name):
        raise InvalidInput(f"invalid remote name {name!r}")
    return name


def _one_line(value: str, what: str, limit: int) -> str:
    _checked(value, what)
    unseen = path_rule.hidden(value)  # a line break, a bidi override, a zero-width space
    if unseen is not None:
        raise InvalidInput(f"{what} must be one line of visible text; it contains {unseen!r}")
    if _FAKE_KEY.search(value):
        raise InvalidInput(f"{what} must not contain a trailer key such as 'Gitmem-Card:'")
    value = value.strip()
    if not value:
        raise InvalidInput(f"{what} is empty")
    if len(value) > limit:
        raise InvalidInput(f"{what} is longer than {limit} characters")
    return value


def summary(value: str) -> str:
    return _one_line(value, "summary", MAX_SUMMARY)


def keywords(values: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    for raw in values:
        kw = _one_line(raw, "keyword", MAX_KEYWORD)
        if "," in kw or ":" in kw:
            raise InvalidInput(f"keyword {kw!r} contains ',' or ':': pass plain words")
        if kw.lower() not in (k.lower() for k in out):
            out.append(kw)
    if not out:
        raise InvalidInput("at least one keyword is required")
    if len(out) > MAX_KEYWORDS:
        raise InvalidInput(f"at most {MAX_KEYWORDS} keywords")
    return tuple(out)


def split_keywords(text: str) -> tuple[str, ...]:
    return keywords([k for k in text.split(",") if k.strip()])
