"""Secrets are refused before they become a commit (DESIGN §8).

``check(texts, allow=...)`` is the one function every write path calls: it raises
``SecretFound`` naming the kind and the line of the first finding, never the secret.
Detection is detect-secrets' (Yelp) pattern plugins, called line by line without its
entropy plugins (they flag every commit sha) and without its verifiers (they call the
issuers' servers), plus detectors for formats it lacks (Anthropic keys, fine-grained
GitHub tokens, a bare ``password: value``) written as detect-secrets plugins. Which
library and which plugins: measured in docs/benchmarks.md ("secrets").

A line is a deliberate exception when it carries ``gitmem:allow-secret`` (or
detect-secrets' own ``pragma: allowlist secret``); ``[secrets] allow`` in gitmem.toml
lists regexes, and a finding whose value matches one is no finding.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from gitmem.errors import InvalidInput

if TYPE_CHECKING:
    from detect_secrets.plugins.base import BasePlugin

ALLOW_MARKERS = ("gitmem:allow-secret", "pragma: allowlist secret")
REDACTED = "[REDACTED:"  # what `gitmem redact` leaves: never a finding itself


class SecretFound(InvalidInput):
    """A text about to be committed carries a secret; nothing was committed."""


# kind (what a finding and [REDACTED:<kind>] are called) per detector's secret_type
KINDS = {
    "AWS Access Key": "aws-access-key",
    "AWS Secret Access Key": "aws-secret-key",
    "Anthropic API Key": "anthropic-key",
    "OpenAI Token": "openai-key",
    "GitHub Token": "github-token",
    "GitLab Token": "gitlab-token",
    "Slack Token": "slack-token",
    "Stripe Access Key": "stripe-key",
    "Private Key": "private-key",
    "JSON Web Token": "jwt",
    "Basic Auth Credentials": "url-credentials",
    "Secret Keyword": "secret-keyword",
    "Password": "password",
}


@cache
def _plugins() -> tuple[BasePlugin, ...]:
    # Imported on the first line worth scanning: detect-secrets (with requests, for its
    # verifiers) costs ~150 ms to import, and most edits never need it.
    from gitmem.memory.secrets_plugins import plugins

    return plugins()


def kind_of(secret_type: str) -> str:
    return KINDS.get(secret_type) or re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


@dataclass(frozen=True)
class Finding:
    kind: str
    line: int  # 1-based, within the text scanned
    where: str = ""  # what was scanned: "new_text", "summary", "cards/x.md", ...
    secret: str = field(default="", repr=False, compare=False)  # never printed

    def label(self) -> str:
        place = f"{self.where} " if self.where else ""
        return f"{self.kind} in {place}line {self.line}"

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "line": self.line, "where": self.where}


# A line that none of these can start a secret in is skipped without running the plugins
# (most lines of a note): every plugin's pattern needs one of them.
_HINT = re.compile(
    r"(?i)A3T|ABIA|ACCA|AKIA|ASIA|AKC|AP[0-9A-F]|sk[-_]|rk_|gh[pousr]_|github_pat|"
    r"gl[a-z]{1,6}-|GR1348941|xox|hooks\.slack\.com|PRIVATE KEY|eyJ|://[^\s/]*:[^\s/]*@|"
    r"pass|pwd|secret|token|key|auth|cred|contrase|SG\.|npm_|pypi-|AC[a-z0-9]{32}|"
    r"SK[a-z0-9]{32}|sq0|[MNO][\w-]{23,25}\.|[0-9]{8,10}:|[0-9a-z]{32}-us[0-9]"
)


@dataclass
class Scanner:
    allow: Sequence[str] = ()
    _allow: list[re.Pattern[str]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._allow = [re.compile(p) for p in self.allow]

    def scan(self, text: str, where: str = "") -> list[Finding]:
        found: list[Finding] = []
        for n, line in enumerate(text.split("\n"), 1):
            if not _HINT.search(line) or any(m in line for m in ALLOW_MARKERS):
                continue
            seen: set[str] = set()
            from gitmem.memory.secrets_plugins import candidates, filtered

            for plugin in _plugins():
                for secret in candidates(plugin, line):
                    if secret in seen or REDACTED in secret or filtered(secret, line, plugin):
                        continue
                    if any(p.search(secret) for p in self._allow):
                        continue
                    seen.add(secret)
                    found.append(Finding(kind_of(plugin.secret_type), n, where, secret))
        return found


@cache
def scanner(allow: tuple[str, ...] = ()) -> Scanner:
    return Scanner(allow)


def allow_patterns(values: object, source: str) -> tuple[str, ...]:
    """``[secrets] allow`` checked: a list of valid regexes (ConfigError otherwise)."""
    from gitmem.errors import ConfigError

    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ConfigError(f"{source}: secrets.allow must be a list of regex strings")
    for v in values:
        try:
            re.compile(v)
        except re.error as exc:
            raise ConfigError(
                f"{source}: secrets.allow has an invalid regex {v!r}: {exc}"
            ) from None
    return tuple(values)


def scan_texts(texts: Iterable[tuple[str, str]], allow: Sequence[str] = ()) -> list[Finding]:
    s = scanner(tuple(allow))
    return [f for where, text in texts if text for f in s.scan(text, where)]


def check(texts: Iterable[tuple[str, str]], allow: Sequence[str] = ()) -> None:
    """Refuse (SecretFound) when any ``(where, text)`` carries a secret: one line naming
    the kind and the line of the first finding, and how to make an exception."""
    found = scan_texts(texts, allow)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise SecretFound(
            f"refused: a secret ({found[0].label()}){more} must not be committed to memory; "
            "remove it and write again (a deliberate exception: put gitmem:allow-secret on "
            "the line, or a regex in [secrets] allow in gitmem.toml)"
        )
