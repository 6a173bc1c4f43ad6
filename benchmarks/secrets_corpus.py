"""A labelled corpus for measuring secret scanners: key formats and ordinary notes.

Every key is generated here from a seeded random source in the published format of
its issuer (prefix, alphabet, length); none of them is or was a live credential.
``positives()`` gives (kind, line) pairs that a scanner must flag; ``negatives()``
gives lines of ordinary memory notes that it must not flag.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable

UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def aws_access_key(rng: random.Random) -> str:
    return rng.choice(["AKIA", "ASIA"]) + _pick(rng, UPPER + "234567", 16)


def aws_secret(rng: random.Random) -> str:
    return _pick(rng, B64, 40)


def anthropic_key(rng: random.Random) -> str:
    return "sk-ant-api03-" + _pick(rng, URLSAFE, 93) + "AA"


def openai_key(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return "sk-" + _pick(rng, ALNUM, 20) + "T3BlbkFJ" + _pick(rng, ALNUM, 20)
    return "sk-proj-" + _pick(rng, URLSAFE, 74) + "T3BlbkFJ" + _pick(rng, URLSAFE, 74)


def github_token(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return rng.choice(["ghp_", "gho_", "ghs_", "ghu_"]) + _pick(rng, ALNUM, 36)
    return "github_pat_11" + _pick(rng, UPPER + string.digits, 20) + "_" + _pick(rng, ALNUM, 59)


def slack_token(rng: random.Random) -> str:
    kind = rng.choice(["xoxb", "xoxp", "xoxa", "xoxs"])
    return f"{kind}-{_pick(rng, string.digits, 12)}-{_pick(rng, string.digits, 13)}-" + _pick(
        rng, ALNUM, 24
    )


def stripe_key(rng: random.Random) -> str:
    return rng.choice(["sk_live_", "rk_live_"]) + _pick(rng, ALNUM, rng.choice([24, 99]))


def pem_block(rng: random.Random) -> str:
    label = rng.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY"])
    body = "\n".join(_pick(rng, B64, 64) for _ in range(4))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


def jwt(rng: random.Random) -> str:
    head = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {"sub": _pick(rng, string.digits, 8), "name": "Dana", "iat": rng.randrange(10**9)}
    return f"{head}.{_b64url(json.dumps(claims).encode())}.{_b64url(rng.randbytes(32))}"


def password_word(rng: random.Random) -> str:
    return _pick(rng, ALNUM, 6) + rng.choice("!#%&*") + _pick(rng, string.digits, 3)


# kind -> line templates; {k} is the generated value
POSITIVE_FORMS: dict[str, tuple[Callable[[random.Random], str], tuple[str, ...]]] = {
    "aws-access-key": (
        aws_access_key,
        ("- AWS key for the staging bucket: {k}", "aws_access_key_id = {k}"),
    ),
    "aws-secret-key": (aws_secret, ("aws_secret_access_key = {k}", "AWS_SECRET_ACCESS_KEY={k}")),
    "anthropic-key": (anthropic_key, ("- their Anthropic key is {k}", "ANTHROPIC_API_KEY={k}")),
    "openai-key": (openai_key, ("- OpenAI key (prod): {k}", "OPENAI_API_KEY={k}")),
    "github-token": (github_token, ("- deploy token {k} (expires in March)", "GITHUB_TOKEN={k}")),
    "slack-token": (slack_token, ("- Slack bot token: {k}", "slack_token = {k}")),
    "stripe-key": (stripe_key, ("- Stripe live key {k}", "STRIPE_SECRET_KEY={k}")),
    "private-key": (pem_block, ("{k}",)),
    "jwt": (jwt, ("- session cookie for the admin panel: {k}", "Authorization: Bearer {k}")),
    "password": (
        password_word,
        ("password: {k}", "- db password = {k}", "- admin password is '{k}'"),
    ),
    "url-credentials": (
        lambda r: _pick(r, ALNUM, 12),
        (
            "- DATABASE_URL=postgres://app:{k}@db.internal:5432/app",
            "- the FTP mirror is ftp://deploy:{k}@files.example.net/",
        ),
    ),
}


def positives(n_per_form: int = 10, seed: int = 11) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for kind, (make, forms) in POSITIVE_FORMS.items():
        for form in forms:
            for _ in range(n_per_form):
                out.append((kind, form.format(k=make(rng))))
    return out


def _sha(rng: random.Random, n: int = 40) -> str:
    return _pick(rng, "0123456789abcdef", n)


NEGATIVE_FORMS: dict[str, tuple[Callable[[random.Random], str], ...]] = {
    "commit sha": (
        lambda r: f"- fixed in {_sha(r)} (see the revert after it)",
        lambda r: f"- Gitmem-Reverts: {_sha(r)}",
        lambda r: f"- the deploy at {_sha(r, 7)} broke the footer",
    ),
    "uuid": (
        lambda r: f"- invoice id {uuid.UUID(int=r.getrandbits(128), version=4)}",
        lambda r: f"- ticket {str(uuid.UUID(int=r.getrandbits(128), version=4)).upper()} is open",
    ),
    "url without credentials": (
        lambda r: (
            f"- staging: https://staging.example.com/{_pick(r, ALNUM, 8)}?page={r.randrange(99)}"
        ),
        lambda r: f"- docs at https://docs.example.org/v{r.randrange(9)}/api#auth",
        lambda r: f"- repo git@github.com:acme/site-{r.randrange(999)}.git",
    ),
    "date": (
        lambda r: (
            f"- call on 2026-{r.randrange(1, 13):02}-{r.randrange(1, 29):02} at 10:{r.randrange(60):02}"
        ),
        lambda r: f"- Dana leaves on {r.randrange(1, 29)} January {r.randrange(2025, 2029)}",
    ),
    "amount": (
        lambda r: f"- budget raised to ${r.randrange(10, 99)},{r.randrange(1000):03} for Q3",
        lambda r: (
            f"- invoice #{r.randrange(10000)}: EUR {r.randrange(100, 9999)}.{r.randrange(100):02} paid"
        ),
    ),
    "version": (
        lambda r: (
            f"- upgrade to v{r.randrange(1, 9)}.{r.randrange(30)}.{r.randrange(30)} next sprint"
        ),
        lambda r: f"- pinned django=={r.randrange(3, 6)}.{r.randrange(3)}.{r.randrange(20)}rc1",
    ),
    "id in prose": (
        lambda r: f"- the order reference is {_pick(r, UPPER + string.digits, 12)}",
        lambda r: f"- short link slug {_pick(r, ALNUM, 10)} goes to the pricing page",
        lambda r: f"- video id {_pick(r, URLSAFE, 11)} is the onboarding walkthrough",
        lambda r: f"- the Figma file key is {_pick(r, ALNUM, 22)}",
    ),
    "ordinary prose": (
        lambda r: "- the password policy needs 12 characters; reset links expire after 1 hour",
        lambda r: "- password: ask Dana, it is in the team vault (never in memory)",
        lambda r: "- Secret Santa budget is $25 this year",
        lambda r: f"- token budget for the chat is {r.randrange(1000, 50000)} tokens",
        lambda r: "- risk-assessment and task-list are in the shared drive",
        lambda r: "- the API key is rotated monthly by ops; ask them for access",
        lambda r: "- use `export AWS_PROFILE=staging` before running the deploy script",
    ),
}


def negatives(n_per_form: int = 10, seed: int = 12) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for kind, forms in NEGATIVE_FORMS.items():
        for form in forms:
            seen = set()
            for _ in range(n_per_form):
                line = form(rng)
                if line not in seen:
                    seen.add(line)
                    out.append((kind, line))
    return out
