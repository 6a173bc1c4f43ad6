"""`gitmem stale`: stale entries, unindexed, untouched, summaries naming what the text lacks,
near-duplicate sections across cards; text and --json."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gitmem.index.stale import missing_numbers, shingles

from helpers import git, gm, snapshot, write


def report(client: Path, *args: str) -> dict[str, Any]:
    res = gm("-C", str(client), "stale", "--json", *args)
    assert res.code == 0, res.err
    return dict(json.loads(res.out))


SHARED = "The client wants the launch moved to the spring because the venue is booked until March"


def test_every_kind_is_found_and_listed(client: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(
        client,
        "acme",
        "",
        "## People\nDana is PM\n\n## Budget\n30k for Q3\n",
        "people",
        "Dana is PM",
    )
    write(client, "acme", "30k for Q3", "30k for Q3", "budget", "Budget 45k since 2026-11-28")
    card = client / "cards/acme.md"
    card.write_text(
        card.read_text().replace("Dana is PM", "Bob replaced Dana as PM") + "\n## Notes\nby hand\n"
    )
    git(client, "commit", "-qam", "Bob replaced Dana")
    write(client, "beta", "", f"## Plan\n{SHARED}.\n", "plan", "Launch in spring")
    monkeypatch.setenv("GIT_COMMITTER_DATE", f"{int(time.time())} +0000")
    write(
        client, "gamma", "", f"## Launch\n{SHARED}, says Ann.\n", "launch", "Launch moved to spring"
    )

    def state() -> dict[str, str]:  # the index caches under .git/gitmem are derived
        return {k: v for k, v in snapshot(client).items() if not k.startswith(".git/gitmem/index-")}

    before = state()
    got = report(client)
    assert state() == before  # reading only
    assert [(s["card"], s["section"]) for s in got["stale"]] == [("acme", "people")]
    assert got["unindexed"] == ["acme § notes"]
    assert [(n["card"], n["section"], n["missing"]) for n in got["numbers"]] == [
        ("acme", "budget", ["45", "2026-11-28"])
    ]
    assert [(d["first"], d["second"]) for d in got["duplicates"]] == [
        ("beta § plan", "gamma § launch")
    ]
    untouched = {(u["card"], u["section"]) for u in got["untouched"]}
    assert ("beta", "plan") in untouched and ("acme", "budget") in untouched
    assert ("gamma", "launch") not in untouched  # changed today
    assert ("acme", "people") not in untouched or got["untouched_days"] == 90
    text = gm("-C", str(client), "stale").out
    assert "acme § people: Dana is PM" in text and "beta § plan ~ gamma § launch" in text
    assert "45, 2026-11-28 not in the text" in text and "gitmem consolidate" in text


def test_untouched_follows_the_days_setting_and_the_last_change_of_the_text(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(client, "acme", "", "## Budget\n30k\n\n## Team\nAnn\n", "budget", "30k")
    monkeypatch.setenv("GIT_COMMITTER_DATE", f"{int(time.time()) - 10 * 86400} +0000")
    write(client, "acme", "Ann", "Ann and Bob", "team", "Ann and Bob")  # ten days ago
    got = {(u["card"], u["section"]): u["days"] for u in report(client, "--days", "5")["untouched"]}
    assert got[("acme", "team")] in (9, 10) and ("acme", "budget") in got
    old = {(u["card"], u["section"]) for u in report(client, "--days", "30")["untouched"]}
    assert old == {("acme", "budget")}
    toml = client / "gitmem.toml"
    toml.write_text(toml.read_text() + "\n[hygiene]\nuntouched_days = 5000\n")
    git(client, "commit", "-qam", "keep longer")
    assert report(client)["untouched"] == [] and report(client)["untouched_days"] == 5000


def test_nothing_to_report_says_so(client: Path) -> None:
    write(client, "acme", "", "## Budget\n30k in 2026\n", "budget", "30k in 2026")
    res = gm("-C", str(client), "stale", "--days", "100000")
    assert res.code == 0 and res.out.startswith("Nothing stale")


@pytest.mark.parametrize("args", [["--days", "0"], ["--days", "x"]])
def test_bad_days_is_a_usage_error(client: Path, args: list[str]) -> None:
    res = gm("-C", str(client), "stale", *args)
    assert res.code == 2 and res.err.count("\n") == 1 and "'--days'" in res.err


@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=5))
def test_a_summary_naming_only_numbers_of_the_text_is_clean(numbers: list[int]) -> None:
    text = "## S\n" + " ".join(f"{n:,}" for n in numbers) + "\n"
    assert missing_numbers(" and ".join(str(n) for n in numbers), text) == []
    absent = max(numbers) * 10 + 7
    assert missing_numbers(f"now {absent}", text) == [str(absent)] or str(absent) in text.replace(
        ",", ""
    )


def test_shingles_are_word_triples() -> None:
    assert shingles("A b, c d!") == {"a b c", "b c d"}
