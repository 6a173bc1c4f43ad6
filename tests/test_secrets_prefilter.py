"""The secret scan's pre-filter: a line it skips is a line no detector finds anything
in, and ordinary words do not start detect-secrets."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from gitmem.memory import secrets

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import secrets_corpus as corpus


def _corpus_values() -> list[str]:
    rng = random.Random(7)
    return [ln for make, _ in corpus.POSITIVE_FORMS.values() for ln in make(rng).split("\n")]


WORDS = [
    *("password", "Password:", "passwd", "passphrase", "pwd=", "pw", "secret", "SECRET_KEY"),
    *("api_key", "API key", "apikey", "auth_key", "db_pass", "key_pass", "contraseña", "token"),
    *("aws", "AWS_", "key", "paper", "author", "passed", "credentials", " is ", " was "),
    *(":", "=", "==", "!=", ":=", "'", '"', "`", ";", "@", "://", "/", "-", "_", ".", " "),
    *("AKIA", "ASIA", "A3TX", "AKC", "APE", "AccountKey=", "ghp_", "github_pat_", "glpat-"),
    *("GR1348941", "xoxb-1-", "hooks.slack.com/services/T", "sk-", "sk-ant-", "T3BlbkFJ"),
    *("sk_live_", "rk_live_", "sq0csp-", "SG.", "eyJ", "pypi-AgE", "/:_authToken=", "-us1"),
    *("-----BEGIN ", "PRIVATE KEY", "PuTTY-User-Key-File-2", "12345678:", "M", "AC", "SK"),
    *("ghr_", "gho_", "glagent-", "glcbt-", "sk-proj-", "pypi-AgEIcHlwaS5vcmc"),
    *("\u212a", "\u017f", "\u0130", "\u0131", "é", "١٢٣"),
]
RUNS = st.builds(
    lambda alphabet, n, seed: "".join(random.Random(seed).choice(alphabet) for _ in range(n)),
    st.sampled_from([corpus.ALNUM, corpus.B64, corpus.URLSAFE, "0123456789abcdef", "0123456789"]),
    st.sampled_from([6, 8, 10, 16, 20, 22, 24, 27, 32, 35, 36, 40, 43, 64, 88]),
    st.integers(0, 10**6),
)
FRAGMENT = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from(_corpus_values()),
    RUNS,
    st.text(st.characters(codec="utf-8", exclude_characters="\n"), max_size=10),
)
# a random mix, or a name, an assignment and a value as detectors look for them
LINES = st.one_of(
    st.lists(FRAGMENT, max_size=10).map("".join),
    st.tuples(
        *(FRAGMENT, st.sampled_from(WORDS), st.sampled_from(WORDS), st.sampled_from(WORDS)),
        *(st.sampled_from(["", "'", '"', "`"]), st.one_of(RUNS, FRAGMENT), FRAGMENT),
    ).map("".join),
)


@settings(max_examples=1000, deadline=None)
@given(line=LINES)
def test_the_prefilter_never_skips_a_line_a_detector_finds_something_in(line: str) -> None:
    from gitmem.memory.secrets_plugins import candidates, plugins

    for plugin in plugins():
        if any(True for _ in candidates(plugin, line)):
            need = secrets.NEEDS[type(plugin).__name__]
            assert re.search(need, line), (type(plugin).__name__, line)


def test_every_detector_has_its_entry_in_the_prefilter() -> None:
    from gitmem.memory.secrets_plugins import plugins

    assert sorted(secrets.NEEDS) == sorted(type(p).__name__ for p in plugins())


def test_ordinary_words_near_a_keyword_are_skipped_by_the_prefilter() -> None:
    ordinary = [ln for _, ln in corpus.negatives(n_per_form=5, seed=3) if "password:" not in ln]
    ordinary += ["- the paper's author passed the key to Dana", "- API key rotation is monthly"]
    assert [ln for ln in ordinary if secrets._HINT.search(ln)] == []
