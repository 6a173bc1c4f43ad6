"""Secrets are refused before they become a commit: the scanner, the write paths that
call it, the allowlist, the commit hook, `gitmem scan`."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.agent import synthesis
from gitmem.errors import EXIT_CONFIG, EXIT_FINDINGS, EXIT_USAGE
from gitmem.features.edit import write_card
from gitmem.hooks import install_hooks
from gitmem.memory import secrets
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.review.decision import accept_session
from gitmem.review.pending import load_session
from gitmem.review.session_branches import Session

from helpers import git, gm, snapshot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import secrets_corpus as corpus

ENTRY = ["--section", "budget", "--keywords", "budget", "--summary", "budget noted"]


def key_of(kind: str, seed: int = 1) -> str:
    make, _forms = corpus.POSITIVE_FORMS[kind]
    return str(make(random.Random(seed)))


AWS = key_of("aws-access-key")
ANT = key_of("anthropic-key")


def make_card(client: Path) -> None:
    r = gm("-C", str(client), "write", "acme", "--old", "", "--new", "## Budget\n- 30k\n", *ENTRY)
    assert r.code == 0, r.err


# -- the scanner --------------------------------------------------------------------------
def test_every_key_format_of_the_corpus_is_found_and_no_ordinary_note_is() -> None:
    s = secrets.Scanner()
    missed = [line for kind, line in corpus.positives(n_per_form=5, seed=99) if not s.scan(line)]
    flagged = [line for kind, line in corpus.negatives(n_per_form=5, seed=98) if s.scan(line)]
    assert missed == [] and flagged == []


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    kind=st.sampled_from(sorted(corpus.POSITIVE_FORMS)),
    seed=st.integers(0, 10**6),
    before=st.text(st.characters(whitelist_categories=("L", "Zs")), max_size=30),
)
def test_a_key_in_any_prose_is_found_and_never_echoed(kind: str, seed: int, before: str) -> None:
    make, forms = corpus.POSITIVE_FORMS[kind]
    value = make(random.Random(seed))
    text = f"# notes\n\n{before.strip()}\n" + forms[seed % len(forms)].format(k=value) + "\n"
    with pytest.raises(secrets.SecretFound) as err:
        secrets.check([("new_text", text)])
    assert "line" in str(err.value)
    assert all(part not in str(err.value) for part in value.split("\n") if len(part) > 5)


@given(
    sha=st.text("0123456789abcdef", min_size=7, max_size=40),
    uid=st.uuids(),
    amount=st.integers(0, 10**7),
    version=st.tuples(st.integers(0, 99), st.integers(0, 99), st.integers(0, 99)),
    day=st.dates(),
)
def test_shas_uuids_amounts_versions_dates_and_plain_urls_are_no_findings(
    sha: str, uid: object, amount: int, version: tuple[int, int, int], day: object
) -> None:
    text = (
        f"- fixed in {sha}; ticket {uid}\n- budget ${amount:,} on {day}\n"
        f"- upgrade to v{'.'.join(map(str, version))} (https://example.com/r/{sha}?v=1)\n"
    )
    assert secrets.scan_texts([("new_text", text)]) == []


def test_allow_marker_and_allow_regexes_make_an_exception() -> None:
    line = f"- the documented example key {AWS}"
    assert secrets.scan_texts([("t", line)])
    assert secrets.scan_texts([("t", line + "  <!-- gitmem:allow-secret -->")]) == []
    assert secrets.scan_texts([("t", line)], allow=[AWS[:8]]) == []


# -- the write paths -------------------------------------------------------------------------
def test_cli_write_refuses_a_key_naming_kind_and_line_and_commits_nothing(client: Path) -> None:
    make_card(client)
    before = snapshot(client)
    r = gm(
        "-C",
        str(client),
        "write",
        "acme",
        "--old",
        "- 30k",
        "--new",
        f"- 30k\n- staging key {AWS}",
        *ENTRY,
    )
    assert r.code == EXIT_USAGE
    assert r.err.count("\n") == 1 and "aws-access-key in new_text line 2" in r.err
    assert AWS not in r.err + r.out
    assert snapshot(client) == before


def test_a_password_in_the_summary_never_reaches_the_index(client: Path) -> None:
    make_card(client)
    before = snapshot(client)
    r = gm(
        "-C",
        str(client),
        "write",
        "acme",
        "--old",
        "- 30k",
        "--new",
        "- 40k",
        "--section",
        "budget",
        "--keywords",
        "budget",
        "--summary",
        "admin password: Tr0ub4dor&3",
    )
    assert r.code == EXIT_USAGE and "password in summary line 1" in r.err
    assert "Tr0ub4dor" not in r.err
    assert snapshot(client) == before
    r = gm(
        "-C",
        str(client),
        "write",
        "acme",
        "--old",
        "- 30k",
        "--new",
        "- 40k",
        "--section",
        "budget",
        "--keywords",
        f"budget,{AWS}",
        "--summary",
        "budget",
    )
    assert r.code == EXIT_USAGE and "aws-access-key in keywords" in r.err
    assert snapshot(client) == before


def test_allowlist_in_gitmem_toml_and_marker_let_a_write_through(client: Path) -> None:
    make_card(client)
    (client / "gitmem.toml").write_text(
        (client / "gitmem.toml").read_text() + f'\n[secrets]\nallow = ["^{AWS[:10]}"]\n'
    )
    git(client, "commit", "-qam", "allow the documented key")
    r = gm(
        "-C",
        str(client),
        "write",
        "acme",
        "--old",
        "- 30k",
        "--new",
        f"- 30k\n- docs example {AWS}",
        *ENTRY,
    )
    assert r.code == 0, r.err
    r = gm(
        "-C",
        str(client),
        "write",
        "acme",
        "--old",
        "- 30k",
        "--new",
        f"- 30k\n- {ANT} gitmem:allow-secret",
        *ENTRY,
    )
    assert r.code == 0, r.err
    assert ANT in (client / "cards" / "acme.md").read_text()


def test_a_bad_allow_regex_is_a_config_error(client: Path) -> None:
    make_card(client)
    (client / "gitmem.toml").write_text(
        (client / "gitmem.toml").read_text() + '\n[secrets]\nallow = ["(unclosed"]\n'
    )
    r = gm("-C", str(client), "write", "acme", "--old", "- 30k", "--new", "- 40k", *ENTRY)
    assert r.code == EXIT_CONFIG and "secrets.allow has an invalid regex" in r.err


def test_synthesis_with_a_key_is_not_committed(repo: MemoryRepo) -> None:
    before = repo.tip("main")
    session = Session("20261201-090000-ab12", "main", repo.tip("main"))  # type: ignore[arg-type]
    with pytest.raises(secrets.SecretFound, match=r"synthesis\.md line 2"):
        synthesis.save(repo, session, f"Recent work:\n- deploy token {key_of('github-token')}\n", 3)
    assert repo.tip("main") == before


def _session_with_a_key(repo: MemoryRepo) -> str:
    """A pending session whose second commit a person made by hand with a key in it
    (write_card itself would refuse it)."""
    from gitmem.review import session_branches as sessions

    s = sessions.start_session(repo)
    write_card(
        repo,
        "acme",
        "",
        "## Budget\n- 30k\n",
        IndexEntry.make("budget", ["b"], "30k"),
        session=s.id,
        actor="agent",
        branch=s.branch,
    )
    tip = git(repo.root, "rev-parse", s.branch).strip()
    blob = git(
        repo.root,
        "hash-object",
        "-w",
        "--stdin",
        input=f"# acme\n\n## Budget\n- 30k\n\n## Keys\n- {AWS}\n".encode(),
    ).strip()
    git(repo.root, "read-tree", tip)
    git(repo.root, "update-index", "--add", "--cacheinfo", f"100644,{blob},cards/acme.md")
    tree = git(repo.root, "write-tree").strip()
    git(repo.root, "read-tree", "main")
    msg = f"acme: keys\n\nGitmem-Card: acme\nGitmem-Section: keys\nGitmem-Keywords: k\nGitmem-Session: {s.id}\n"
    c = git(repo.root, "commit-tree", tree, "-p", tip, input=msg.encode()).strip()
    git(repo.root, "update-ref", f"refs/heads/{s.branch}", c)
    sessions.finish_session(repo, s, policy="review")
    return s.id


def test_review_accept_by_hunk_refuses_a_hunk_with_a_key(repo: MemoryRepo) -> None:
    sid = _session_with_a_key(repo)
    repo = MemoryRepo(repo.root)
    view = load_session(repo, sid)
    assert view.ref.pending and len(view.edits) == 2
    before = repo.tip("main")
    n = sum(len(f.hunks) for c in view.edits for f in c.files)
    with pytest.raises(secrets.SecretFound, match=r"aws-access-key in cards/acme\.md"):
        accept_session(repo, sid, hunks=list(range(1, n + 1)))
    assert repo.tip("main") == before
    accept_session(repo, sid, hunks=[1])  # the first commit's hunk alone has no key
    assert AWS not in git(repo.root, "show", "main:cards/acme.md")


# -- the commit hook ---------------------------------------------------------------------------
def test_a_persons_commit_of_a_card_with_a_key_is_refused_by_the_hook(client: Path) -> None:
    install_hooks(client)
    make_card(client)
    card = client / "cards" / "acme.md"
    card.write_text(card.read_text() + f"- pem below\n{key_of('private-key')}\n")
    git(client, "add", "cards/acme.md")
    before = git(client, "rev-parse", "HEAD")
    proc = git(client, "commit", "-qm", "my notes", check=False)
    assert proc == ""
    assert git(client, "rev-parse", "HEAD") == before
    # `git commit -a` stages into a temporary index: scanned too
    proc2 = git(client, "commit", "-qam", "my notes", check=False)
    assert proc2 == "" and git(client, "rev-parse", "HEAD") == before
    card.write_text(card.read_text().replace("-----BEGIN", "BEGIN").replace("PRIVATE KEY", "X"))
    git(client, "commit", "-qam", "my notes, without the key")  # raises if refused
    assert git(client, "rev-parse", "HEAD") != before


def test_the_hook_message_names_kind_and_line(client: Path) -> None:
    import subprocess

    install_hooks(client)
    make_card(client)
    card = client / "cards" / "acme.md"
    card.write_text(card.read_text() + f"- slack {key_of('slack-token')}\n")
    proc = subprocess.run(
        ["git", "commit", "-qam", "x"], cwd=client, capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert "slack-token in cards/acme.md line 5" in proc.stderr
    assert key_of("slack-token") not in proc.stderr


def test_a_commit_outside_memory_is_scanned_too(client: Path) -> None:
    """sync pushes every tracked file, so the hook refuses a secret in any of them."""
    install_hooks(client)
    head = git(client, "rev-parse", "HEAD")
    (client / "notes.txt").write_text(f"{AWS}\n")
    git(client, "add", "notes.txt")
    proc = subprocess.run(
        ["git", "commit", "-qm", "outside memory"], cwd=client, capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert "aws-access-key in notes.txt line 1" in proc.stderr and AWS not in proc.stderr
    assert git(client, "rev-parse", "HEAD") == head


# -- gitmem scan ------------------------------------------------------------------------------
def test_scan_names_commit_card_section_and_kind_and_exits_1(client: Path) -> None:
    make_card(client)
    card = client / "cards" / "acme.md"
    card.write_text(card.read_text() + f"\n## Access\n- key {AWS}\n")
    git(client, "commit", "-qam", "person adds a key", "--no-verify")
    sha = git(client, "rev-parse", "HEAD").strip()
    r = gm("-C", str(client), "scan", "--json")
    assert r.code == EXIT_FINDINGS
    found = json.loads(r.out)["findings"]
    assert found == [
        {
            "kind": "aws-access-key",
            "path": "cards/acme.md",
            "line": 7,
            "section": "access",
            "commit": None,
        }
    ]
    card.write_text(card.read_text().replace(AWS, "rotated"))
    git(client, "commit", "-qam", "remove it", "--no-verify")
    assert gm("-C", str(client), "scan").code == 0
    r = gm("-C", str(client), "scan", "--history")
    assert r.code == EXIT_FINDINGS
    assert f"{sha[:7]} cards/acme.md § access line 7: aws-access-key" in r.out
    assert AWS not in r.out
    hist = json.loads(gm("-C", str(client), "scan", "--history", "--json").out)["findings"]
    assert [(h["commit"], h["section"], h["kind"]) for h in hist] == [
        (sha, "access", "aws-access-key")
    ]


def _rand(alphabet: str, n: int, seed: int = 3) -> str:
    r = random.Random(seed + n)
    return "".join(r.choice(alphabet) for _ in range(n))


HEX, AN = "0123456789abcdef", "abcdefghijklmnopqrstuvwxyz0123456789"
OTHER_FORMATS = [
    f"token {_rand('MNO', 1)}{_rand(AN.upper() + AN, 24)}.{_rand(AN, 6)}.{_rand(AN, 27)}",  # discord
    f"bot {_rand('123456789', 9)}:{_rand(AN + 'ABC_-', 35)}",  # telegram
    f"twilio AC{_rand(HEX, 32)}",
    f"sendgrid SG.{_rand(AN, 22)}.{_rand(AN, 43)}",
    f"square sq0csp-{_rand(AN, 43)}",
    f"//registry.npmjs.org/:_authToken={_rand(HEX, 8)}-{_rand(HEX, 4)}-{_rand(HEX, 4)}-{_rand(HEX, 4)}-{_rand(HEX, 12)}",
    f"pypi pypi-AgEIcHlwaS5vcmc{_rand(AN + 'ABC_-', 70)}",
    f"mailchimp {_rand(HEX, 32)}-us12",
    f"artifactory AKC{_rand(AN, 70)}",
    f"gitlab glpat-{_rand(AN + 'ABC_-', 20)}",
    f"hook https://hooks.slack.com/services/T{_rand(AN.upper(), 8)}/B{_rand(AN.upper(), 8)}/{_rand(AN, 24)}",
    f"AccountKey={_rand(AN + 'ABC+/', 86)}==",  # azure storage
]


@pytest.mark.parametrize("line", OTHER_FORMATS)
def test_the_cheap_prefilter_never_hides_what_a_detect_secrets_plugin_finds(line: str) -> None:
    from gitmem.memory.secrets_plugins import candidates, plugins

    assert any(any(True for _ in candidates(p, line)) for p in plugins())  # the library's find
    assert secrets.Scanner().scan(line)  # ... and gitmem's, behind the prefilter


def test_commit_msg_hook_refuses_an_index_entry_with_a_password(client: Path) -> None:
    import subprocess

    install_hooks(client)
    make_card(client)
    card = client / "cards" / "acme.md"
    card.write_text(card.read_text() + "- root login changed\n")
    msg = (
        "acme: root\n\nGitmem-Card: acme\nGitmem-Section: budget\nGitmem-Keywords: root\n"
        "Gitmem-Summary: root password: Xy7!pq9Lw2\n"
    )
    proc = subprocess.run(
        ["git", "commit", "-qa", "-m", msg], cwd=client, capture_output=True, text=True
    )
    assert proc.returncode == 1 and "password in Gitmem-Summary line 1" in proc.stderr
    assert "Xy7!pq9Lw2" not in proc.stderr
    assert "root login" not in git(client, "show", "HEAD:cards/acme.md")
