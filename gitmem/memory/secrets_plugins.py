"""The detectors gitmem runs: detect-secrets' pattern plugins and a few of gitmem's own,
written as detect-secrets plugins. Imported only when a line is worth scanning
(``secrets.NEEDS``): importing detect-secrets costs ~150 ms."""

from __future__ import annotations

import re
from collections.abc import Iterator

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
    denylist = (
        re.compile(r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}T3BlbkFJ[A-Za-z0-9_\-]{20,}"),
    )


_AWS_ID = r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}"
_AWS_SECRET = r"(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"


class AWSSecretKeyDetector(RegexBasedDetector):
    """An AWS secret access key beside its name (detect-secrets' keyword pattern misses
    one that starts with ``/`` or ``+``), or beside its access key id on one line, before
    or after it, whatever words are between."""

    secret_type = "AWS Secret Access Key"
    denylist = (
        re.compile(r"(?i)aws.{0,20}?secret.{0,20}?[=:\s'\"]+([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"),
        re.compile(rf"\b{_AWS_ID}\b.{{0,80}}?{_AWS_SECRET}"),
        re.compile(rf"{_AWS_SECRET}.{{0,80}}?\b{_AWS_ID}\b"),
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


def plugins() -> tuple[BasePlugin, ...]:
    return (
        AnthropicKeyDetector(),
        GitHubFineGrainedDetector(),
        OpenAIProjectKeyDetector(),
        AWSKeyDetector(),
        AWSSecretKeyDetector(),
        ArtifactoryDetector(),
        AzureStorageKeyDetector(),
        BasicAuthDetector(),
        DiscordBotTokenDetector(),
        GitHubTokenDetector(),
        GitLabTokenDetector(),
        JwtTokenDetector(),
        MailchimpDetector(),
        NpmDetector(),
        OpenAIDetector(),
        PrivateKeyDetector(),
        PypiTokenDetector(),
        SendGridDetector(),
        SlackDetector(),
        SquareOAuthDetector(),
        StripeDetector(),
        TelegramBotTokenDetector(),
        TwilioKeyDetector(),
        PasswordDetector(),
        KeywordDetector(),
    )


def candidates(plugin: BasePlugin, line: str) -> Iterator[str]:
    if isinstance(plugin, KeywordDetector):
        # Notes read like config (``key: value``, ``key = value``), not like code.
        yield from plugin.analyze_string(
            line, denylist_regex_to_group=CONFIG_DENYLIST_REGEX_TO_GROUP
        )
    else:
        yield from plugin.analyze_string(line)


def filtered(secret: str, line: str, plugin: BasePlugin) -> bool:
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
