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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache

from detect_secrets.filters import heuristic
from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import CONFIG_DENYLIST_REGEX_TO_GROUP, KeywordDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from .errors import InvalidInput

ALLOW_MARKERS = ("gitmem:allow-secret", "pragma: allowlist secret")
REDACTED = "[REDACTED:"  # what `gitmem redact` leaves: never a finding itself


class SecretFound(InvalidInput):
    """A text about to be committed carries a secret; nothing was committed."""


class AnthropicKeyDetector(RegexBasedDetector):
    secret_type = "Anthropic API Key"
    denylist = (re.compile(r"\bsk-ant-[a-z0-9]+-[A-Za-z0-9_\-]{32,}"),)


class GitHubFineGrainedDetector(RegexBasedDetector):
    secret_type = "GitHub Token"
    denylist = (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{60,}"),)


class OpenAIProjectKeyDetector(RegexBasedDetector):
    """Project and service-account keys: detect-secrets' pattern misses those with a
    ``-`` or ``_`` after the ``T3BlbkFJ`` marker."""

    secret_type = "OpenAI Token"
    denylist = (re.compile(r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}T3BlbkFJ[A-Za-z0-9_\-]{20,}"),)


class AWSSecretKeyDetector(RegexBasedDetector):
    """An AWS secret access key beside its name; detect-secrets' keyword pattern misses
    one that starts with ``/`` or ``+``."""

    secret_type = "AWS Secret Access Key"
    denylist = (
        re.compile(r"(?i)aws.{0,20}?secret.{0,20}?[=:\s'\"]+([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"),
    )


class PasswordDetector(RegexBasedDetector):
    """``password: value`` / ``password is 'value'`` in prose: the value must look like a
    password (6+ characters, not only letters), so "password: ask Dana" is no finding."""

    secret_type = "Password"
    denylist = (
        re.compile(
            r"(?i)\b(?:password|passwd|passphrase|pwd)\b\s*(?:is|:|=|was)\s*"
            r"['\"`]?((?=[^\s'\"`]*[^A-Za-z\s'\"`.,;:])[^\s'\"`]{6,})"
        ),
    )


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
    return (
        AnthropicKeyDetector(), GitHubFineGrainedDetector(), OpenAIProjectKeyDetector(),
        AWSKeyDetector(), AWSSecretKeyDetector(),
        ArtifactoryDetector(), AzureStorageKeyDetector(), BasicAuthDetector(),
        DiscordBotTokenDetector(), GitHubTokenDetector(), GitLabTokenDetector(),
        JwtTokenDetector(), MailchimpDetector(), NpmDetector(), OpenAIDetector(),
        PrivateKeyDetector(), PypiTokenDetector(), SendGridDetector(), SlackDetector(),
        SquareOAuthDetector(), StripeDetector(), TelegramBotTokenDetector(),
        TwilioKeyDetector(), PasswordDetector(), KeywordDetector(),
    )


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


def _keyword(plugin: BasePlugin, line: str) -> Iterator[str]:
    if isinstance(plugin, KeywordDetector):
        # Notes read like config (``key: value``, ``key = value``), not like code.
        yield from plugin.analyze_string(line, denylist_regex_to_group=CONFIG_DENYLIST_REGEX_TO_GROUP)
    else:
        yield from plugin.analyze_string(line)


def _filtered(secret: str, line: str, plugin: BasePlugin) -> bool:
    """detect-secrets' own false-positive heuristics, for the plugins they are made for."""
    if not isinstance(plugin, KeywordDetector | PasswordDetector):
        return False
    return (
        any(c.isspace() for c in secret.strip())  # prose after "password:", not a value
        or heuristic.is_sequential_string(secret)
        or heuristic.is_potential_uuid(secret)
        or heuristic.is_likely_id_string(secret, line, plugin)
        or heuristic.is_templated_secret(secret)
        or heuristic.is_prefixed_with_dollar_sign(secret)
        or heuristic.is_indirect_reference(line)
        or heuristic.is_not_alphanumeric_string(secret)
    )


# A line that none of these can start a secret in is skipped without running the plugins
# (most lines of a note): every plugin's pattern needs one of them.
_HINT = re.compile(
    r"(?i)AKIA|ASIA|A3T|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|sk[-_]|rk_|gh[pousr]_|github_pat|glpat|"
    r"xox|-----BEGIN|PRIVATE KEY|eyJ|://[^\s/]*:[^\s/]*@|pass|pwd|secret|token|key|auth|"
    r"cred|AKC|AP[0-9A-Z]|SG\.|npm_|pypi-|AC[a-z0-9]{32}|SK[a-z0-9]{32}|sq0|[MNO][A-Za-z\d]{23}\."
    r"|[0-9]{8,10}:|[0-9a-f]{32}-us"
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
            for plugin in _plugins():
                for secret in _keyword(plugin, line):
                    if secret in seen or REDACTED in secret or _filtered(secret, line, plugin):
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
    from .errors import ConfigError

    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ConfigError(f"{source}: secrets.allow must be a list of regex strings")
    for v in values:
        try:
            re.compile(v)
        except re.error as exc:
            raise ConfigError(f"{source}: secrets.allow has an invalid regex {v!r}: {exc}") from None
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
