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


# What each detector of secrets_plugins.plugins() needs in a line (its patterns, loosened):
# a line none matches skips the detect-secrets import (issue 24; test_secrets_prefilter.py).
_KEYWORDS = (  # detect-secrets' keyword.DENYLIST
    r"(?:api|auth|service|account|db|database|priv|private|client)_?key|"
    r"(?:db|database|key)_?pass|password|passwd|pwd|secret|contraseña|contrasena"
)
NEEDS = {
    "AnthropicKeyDetector": r"\bsk-ant-",
    "GitHubFineGrainedDetector": r"\bgithub_pat_",
    "OpenAIProjectKeyDetector": r"\bsk-[\w-]*T3BlbkFJ",
    "OpenAIDetector": r"sk-[\w-]*T3BlbkFJ",
    "AWSKeyDetector": r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}|"
    r"(?i:aws.*(?:key|pw|pass|token).*[0-9a-z/+]{40})",
    "AWSSecretKeyDetector": r"(?i:aws.*secret.*[0-9a-z/+]{40})|"
    r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}",
    "ArtifactoryDetector": r"AKC[a-zA-Z0-9]{10}|AP[\dA-F][a-zA-Z0-9]{8}",
    "AzureStorageKeyDetector": r"AccountKey=",
    "BasicAuthDetector": r"://[^:/?#\[\]@!$&'()*+,;=\s]+:[^:/?#\[\]@!$&'()*+,;=\s]+@",
    "DiscordBotTokenDetector": r"[MNO][\w-]{23,25}\.[\w-]{6}\.",
    "GitHubTokenDetector": r"gh[pousr]_",
    "GitLabTokenDetector": r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-|GR1348941",
    "JwtTokenDetector": r"eyJ[\w=-]+\.",
    "MailchimpDetector": r"[0-9a-z]{32}-us[0-9]",
    "NpmDetector": r"/:_authToken=",
    "PrivateKeyDetector": r"PRIVATE KEY|PuTTY-User-Key-File-2",
    "PypiTokenDetector": r"pypi-AgE",
    "SendGridDetector": r"SG\.[\w-]{22}\.",
    "SlackDetector": r"(?i:xox[abposr]-\d|hooks\.slack\.com/services/T)",
    "SquareOAuthDetector": r"sq0csp-",
    "StripeDetector": r"[rs]k_live_",
    "TelegramBotTokenDetector": r"\d{8}:[\w-]{35}",
    "TwilioKeyDetector": r"(?:AC|SK)[a-z0-9]{32}",
    "PasswordDetector": r"(?i:\b(?:password|passwd|passphrase|pwd)\b\s*(?:is|:|=|was)\s*"
    r"['\"`]?[^\s'\"`]{6})",
    # keyword.CONFIG_DENYLIST_REGEX_TO_GROUP: a keyword then `:`/`=`/`==` and a value, a
    # quoted value then `;`, or a quoted value compared with `==` to a keyword
    "KeywordDetector": rf"(?i:(?:{_KEYWORDS})\w*[]'\"]{{0,2}}\s*(?::|={{1,3}}|!==?)\s*"
    rf"['\"`]?\w|(?:{_KEYWORDS})\S*\s*['\"`]\w.*;|[!=]{{2}}\s*\w*(?:{_KEYWORDS}))",
}
_HINT = re.compile("|".join(f"(?:{p})" for p in NEEDS.values()))


@dataclass
class Scanner:
    allow: Sequence[str] = ()
    _allow: list[re.Pattern[str]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._allow = [re.compile(p) for p in self.allow]

    def scan(self, text: str, where: str = "", first: int = 1) -> list[Finding]:
        """Findings in ``text``, numbered from line ``first``."""
        found: list[Finding] = []
        for n, line in enumerate(text.split("\n"), first):
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


def changed_lines(before: str | None, after: str) -> tuple[int, str]:
    """The lines of ``after`` that differ from ``before``, with one line of context each
    side, and the number of the first: where an edit may have completed a secret."""
    if before is None:
        return 1, after
    a, b = before.split("\n"), after.split("\n")
    n = min(len(a), len(b))
    top = next((i for i in range(n) if a[i] != b[i]), n)
    bottom = next((j for j in range(n - top) if a[-1 - j] != b[-1 - j]), n - top)
    lo, hi = max(0, top - 1), min(len(b), len(b) - bottom + 1)
    return lo + 1, "\n".join(b[lo:hi])


def check_change(before: str | None, after: str, where: str, allow: Sequence[str] = ()) -> None:
    """Refuse (SecretFound) when the lines an edit leaves in a file carry a secret: two
    harmless edits can complete one (``AKIAQWERTY`` then ``QWERTY`` -> ``QWERTYUIOP...``)."""
    first, text = changed_lines(before, after)
    _refuse(scanner(tuple(allow)).scan(text, where, first))


def check(texts: Iterable[tuple[str, str]], allow: Sequence[str] = ()) -> None:
    """Refuse (SecretFound) when any ``(where, text)`` carries a secret: one line naming
    the kind and the line of the first finding, and how to make an exception."""
    _refuse(scan_texts(texts, allow))


def _refuse(found: list[Finding]) -> None:
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise SecretFound(
            f"refused: a secret ({found[0].label()}){more} must not be committed to memory; "
            "remove it and write again (a deliberate exception: put gitmem:allow-secret on "
            "the line, or a regex in [secrets] allow in gitmem.toml)"
        )
