"""`gitmem ui` speed over real HTTP on 127.0.0.1, beside issue 31's budgets.

A scratch copy of a cached generated memory (1,000 cards; ``generate.py`` via
``common.history``) gets one pending session of 200 edits; then ``gitmem ui`` is started
as a user starts it (the time to its printed URL is the start budget) and each page is
fetched with its cookie: once to warm the caches, then the median of ``--rounds``. The
baseline in the same run is the server's static stylesheet (no memory read at all).

    .venv/bin/python benchmarks/bench_ui.py [--sizes 10000,100000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import common

import gitmem
from gitmem.review import session_branches as sessions

PAGE_BUDGET_S = 0.300
REVIEW_BUDGET_S = 1.0
START_BUDGET_S = 1.0
SID = "20261201-090000-be01"
EDITS = 200


def pending_session(repo: gitmem.MemoryRepo, edits: int) -> None:
    """A session of ``edits`` edits, each to one section of a card, left for review."""
    s = sessions.start_session(repo, SID)
    cards = gitmem.list_cards(repo)
    for n in range(edits):
        card = cards[n % len(cards)]
        section = card.sections[n // len(cards) % len(card.sections)]
        text = gitmem.read_card(repo, card.project, section.id)
        body = text.rstrip("\n").split("\n")[-1]
        entry = gitmem.IndexEntry.make(section.id, ["bench"], f"edit {n}")
        gitmem.write_card(
            repo, card.project, body, f"{body} (edit {n})", entry,
            session=SID, actor="agent", branch=s.branch,
        )  # fmt: skip
    sessions.finish_session(repo, s, "review")


def start(copy: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str, float]:
    began = time.perf_counter()
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("gitmem")), "-C", str(copy), "ui"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stderr is not None
    line = proc.stderr.readline().decode()
    took = time.perf_counter() - began
    (url,) = re.findall(r"http://127\.0\.0\.1:\d+/\?token=\S+", line)
    return proc, url, took


def fetcher(url: str) -> tuple[http.client.HTTPConnection, dict[str, str]]:
    port = int(url.split(":")[2].split("/")[0])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("GET", f"/?token={url.split('token=')[1]}", headers={"Host": f"127.0.0.1:{port}"})
    res = conn.getresponse()
    res.read()
    cookie = (res.getheader("set-cookie") or "").split(";")[0]
    return conn, {"Host": f"127.0.0.1:{port}", "Cookie": cookie}


def timed(conn: http.client.HTTPConnection, headers: dict[str, str], path: str) -> float:
    began = time.perf_counter()
    conn.request("GET", path, headers=headers)
    res = conn.getresponse()
    body = res.read()
    took = time.perf_counter() - began
    assert res.status == 200, (path, res.status, body[:300])
    return took


def measure(commits: int, rounds: int) -> None:
    src = common.history(commits)
    with common.scratch() as tmp:
        copy = common.copy_of(src, Path(tmp) / "copy")
        home = Path(tmp) / "home"
        home.mkdir()
        env = common.bench_env(home)
        os.environ.update(env)
        with gitmem.open_repo(copy) as repo:
            pending_session(repo, EDITS)
            first = gitmem.list_cards(repo)[0]
            card, section = first.project, first.sections[0].id
            log = gitmem.audit_log(repo, card, edits_only=True)
            edits, last = len(log), (len(log) - 1) // 10 * 10  # the last page's first edit
            cursor = f"?before={log[last - 1].sha}&n={last}"  # its "older edits" link
        proc, url, start_s = start(copy, env)
        try:
            conn, headers = fetcher(url)
            pages = {
                "stylesheet (baseline)": "/static/ui.css",
                "overview": "/",
                "review list": "/review",
                "history": "/history",
                "cards": "/cards",
                f"card {card}": f"/cards/{card}",
                f"section {card} § {section}": f"/cards/{card}/{section}",
                f"card {card}, last page ({edits} edits)": f"/cards/{card}{cursor}",
                f"section {section}, last page": f"/cards/{card}/{section}{cursor}",
                f"card {card}, last page by count": f"/cards/{card}?skip={last}",
                "index": "/index",
                "search": "/search?q=budget+hosting",
                "search as of": "/search?q=budget+hosting&as_of=2025-06-01",
                "costs": "/costs",
                f"review of a {EDITS}-edit session": f"/review/{SID}",
            }
            cases = {name: (lambda p=path: timed(conn, headers, p)) for name, path in pages.items()}
            got = common.interleaved(cases, rounds)
        finally:
            proc.terminate()
            proc.wait()
    print(f"\n{commits:,} commits, {common.cards_at(commits):,} cards (warm, median of {rounds})")
    common.row(
        "server start, until its URL is printed",
        common.ms(start_s),
        "1 s",
        start_s <= START_BUDGET_S,
    )
    for name, took in got.items():
        if name.startswith("stylesheet"):
            common.row(name, common.ms(took), "")
        else:
            budget = REVIEW_BUDGET_S if name.startswith("review of") else PAGE_BUDGET_S
            common.row(name, common.ms(took), common.ms(budget), took <= budget)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common.add_sizes(ap, "10000,100000", "10000")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    common.machine()
    for commits in common.sizes(args):
        measure(commits, args.rounds)


if __name__ == "__main__":
    main()
