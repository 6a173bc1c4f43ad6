"""`gitmem redact` never loses uncommitted work, replaces each secret whole (in text,
messages and file names), proves it by scanning what it wrote, and keeps gitmem's record
of its own commits, so `gitmem log` and `gitmem revert SESSION` still know them. Through
the CLI, real git throughout."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from gitmem.errors import EXIT_CONFLICT
from gitmem.features.edit import write_card
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.review import session_branches as sessions

from helpers import git, gm, snapshot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import secrets_corpus as corpus

rng = random.Random(22)
AWS = corpus.aws_access_key(rng)
SLACK = corpus.slack_token(rng).lower()  # a valid card name, as the was
GH = "ghp_" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(36))
STRIPE = "sk_live_" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(34))
PASSWORD = corpus.password_word(rng)
SID = "20261201-090000-cd34"


def person_commits(client: Path, text: str, message: str = "person: notes") -> str:
    card = client / "cards" / "acme.md"
    card.write_text(card.read_text() + text)
    git(client, "commit", "-qam", message, "--no-verify")
    return git(client, "rev-parse", "HEAD").strip()


@pytest.fixture
def leaked(client: Path) -> Path:
    r = gm(
        "-C",
        str(client),
        "write",
        "acme",
        "--old",
        "",
        "--new",
        "## Budget\n- 30k\n",
        "--section",
        "budget",
        "--keywords",
        "budget",
        "--summary",
        "Q3 budget is 30k",
    )
    assert r.code == 0, r.err
    # apart from the lines the agent edits (an edit beside a secret is refused)
    person_commits(client, f"\n- staging key {AWS}\n- rotate monthly\n")
    return client


def unchanged(client: Path) -> dict[str, str]:
    return snapshot(client)


# -- case 1: nothing uncommitted is ever lost ------------------------------------------------
@pytest.mark.parametrize(
    ("path", "staged"),
    [
        ("cards/acme.md", False),
        ("persona.md", False),
        ("gitmem.toml", True),
        ("cards/new.md", False),  # untracked, where memory lives
    ],
)
def test_redact_refuses_over_uncommitted_work_and_changes_nothing(
    leaked: Path, path: str, staged: bool
) -> None:
    f = leaked / path
    f.write_text((f.read_text() if f.exists() else "# New\n") + "\n# a person's unsaved line\n")
    if staged:
        git(leaked, "add", path)
    before = snapshot(leaked)
    r = gm("-C", str(leaked), "redact")
    assert r.code == EXIT_CONFLICT, r.out
    assert path in r.err and "git stash" in r.err and "nothing was rewritten" in r.err
    assert len(r.err.strip().splitlines()) <= 2  # the error and its hint
    assert snapshot(leaked) == before  # the edit, the index, every ref: as they were
    assert "a person's unsaved line" in f.read_text()


# -- case 2: the whole secret, for every detector, proven by a scan --------------------------
def test_redact_replaces_each_secret_whole_and_scans_what_it_wrote(leaked: Path) -> None:
    person_commits(
        leaked,
        f"- token {GH}\n- stripe {STRIPE}\n- slack {SLACK}\n- password: {PASSWORD}\n",
        f"person: tokens\n\nGitmem-Card: acme\nGitmem-Section: budget\n"
        f"Gitmem-Keywords: k\nGitmem-Summary: the token is {GH}\n",
    )
    r = gm("-C", str(leaked), "redact", "--json")
    assert r.code == 0, r.err
    history = git(leaked, "log", "--all", "-p", "--format=%B")
    for secret in (AWS, GH, STRIPE, SLACK, PASSWORD):
        assert secret not in history
    for tail in (GH[4:], STRIPE[-10:], SLACK[-10:]):  # no body left behind a replaced prefix
        assert tail not in history
    card = (leaked / "cards" / "acme.md").read_text()
    assert "- token [REDACTED:github-token]\n- stripe [REDACTED:stripe-key]\n" in card
    assert "the token is [REDACTED:github-token]" in git(leaked, "log", "-1", "--format=%B")
    assert gm("-C", str(leaked), "scan", "--history").code == 0
    assert git(leaked, "status", "--porcelain") == ""


def test_redact_leaves_nothing_of_any_detector_s_findings(leaked: Path) -> None:
    """Every form of the secrets corpus, a private key cut before its END line and a PuTTY
    key: each finding's whole value is gone from every commit."""
    gen = random.Random(5)
    keys = {form: make(gen) for make, forms in corpus.POSITIVE_FORMS.values() for form in forms}
    lines = [form.format(k=key) for form, key in keys.items()]
    putty = "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nPrivate-Lines: 1\nAAAQxyzPRIV\n"
    cut = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAcutKEY\n"
    person_commits(leaked, "\n".join(f"- {x}" for x in lines) + f"\n\n{putty}\n{cut}\nend\n")
    found = json.loads(gm("-C", str(leaked), "scan", "--history", "--json").out)["findings"]
    assert len({f["kind"] for f in found}) >= 10
    assert gm("-C", str(leaked), "redact").code == 0
    history = git(leaked, "log", "--all", "-p", "--format=%B")
    assert gm("-C", str(leaked), "scan", "--history").code == 0
    for form, key in keys.items():
        for part in key.split("\n")[1:-1] or [key[len(key) // 2 :]]:  # no body, no tail left
            assert part not in history, form
    assert "AAAQxyzPRIV" not in history and "cutKEY" not in history
    assert (leaked / "cards" / "acme.md").read_text().endswith("\nend\n")


def test_redact_fails_loudly_when_the_rewrite_would_keep_a_finding(
    leaked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan of the rewritten history is the proof: a rule that misses a secret (here
    one left out on purpose) stops the redact before any ref moves."""
    from gitmem.sync import rewrite

    real = rewrite.rules
    monkeypatch.setattr(
        rewrite, "rules", lambda hits, swap: real(hits, {s: r for s, r in swap.items() if s != AWS})
    )
    before = unchanged(leaked)
    r = gm("-C", str(leaked), "redact")
    assert r.code == EXIT_CONFLICT
    assert "would still hold 1 finding(s) (aws-access-key)" in r.err and AWS not in r.err
    after = {k: v for k, v in snapshot(leaked).items() if not k.startswith(".git/objects/")}
    assert after == {k: v for k, v in before.items() if not k.startswith(".git/objects/")}


# -- case 8: a secret in a card's name ---------------------------------------------------------
def test_a_secret_in_a_card_name_is_found_and_renamed_by_redact(leaked: Path) -> None:
    card = leaked / "cards" / f"{SLACK}.md"
    card.write_text("# Team chat\n\n## Bot\n- posts daily\n")
    git(leaked, "add", str(card))
    git(
        leaked,
        "commit",
        "-qm",
        f"{SLACK}: bot\n\nGitmem-Card: {SLACK}\nGitmem-Section: bot\nGitmem-Keywords: bot\n"
        "Gitmem-Summary: the bot posts daily\n",
        "--no-verify",
    )
    r = gm("-C", str(leaked), "scan", "--history", "--json")
    assert r.code == 1 and SLACK not in r.out
    named = [f for f in json.loads(r.out)["findings"] if f["line"] == 0]
    assert [(f["kind"], f["path"]) for f in named] == [
        ("slack-token", "cards/[REDACTED:slack-token].md")
    ]
    r = gm("-C", str(leaked), "redact")
    assert r.code == 0, r.err
    everything = git(leaked, "log", "--all", "-p", "--name-only", "--format=%B")
    assert SLACK not in everything and SLACK[-10:] not in everything
    assert sorted(p.name for p in (leaked / "cards").glob("*.md")) == [
        "acme.md",
        "redacted-slack-token-1.md",
    ]
    assert git(leaked, "status", "--porcelain") == ""
    assert "redacted-slack-token-1 § bot" in gm("-C", str(leaked), "log").out
    assert json.loads(gm("-C", str(leaked), "reindex", "--json").out)["differences"] == []
    assert gm("-C", str(leaked), "scan", "--history").code == 0


# -- case 9: gitmem's own commits keep who made them ---------------------------------------
def run_session(client: Path) -> None:
    with MemoryRepo(client) as repo:
        s = sessions.start_session(repo, SID)
        for old, new, summary in (("30k", "40k", "Budget raised to 40k"), ("", "- Ann\n", "Ann")):
            write_card(
                repo,
                "acme",
                old,
                new,
                IndexEntry.make("budget", ["budget"], summary),
                session=SID,
                actor="agent",
                branch=s.branch,
            )
        sessions.finish_session(repo, s, "auto")


def test_after_redact_log_and_revert_still_know_the_sessions_edits(leaked: Path) -> None:
    run_session(leaked)  # after the secret: its commits are rewritten

    def mine() -> list[tuple[str, str | None]]:
        entries = json.loads(gm("-C", str(leaked), "log", "--json").out)
        entries = entries["entries"] if isinstance(entries, dict) else entries
        return [(e["actor"], e["session"]) for e in entries if e["session"]]

    before = mine()
    assert before == [("agent", SID), ("agent", SID)]
    old_tip = git(leaked, "rev-parse", "main").strip()
    assert gm("-C", str(leaked), "redact").code == 0
    assert git(leaked, "rev-parse", "main").strip() != old_tip  # rewritten: new ids
    assert mine() == before
    r = gm("-C", str(leaked), "revert", SID)
    assert r.code == 0, r.err
    assert "2 edits undone" in r.out
    assert "40k" not in (leaked / "cards" / "acme.md").read_text()
