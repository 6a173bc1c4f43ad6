"""`gitmem ui`: the page over real HTTP on 127.0.0.1 — the token, Host and Origin gate,
and memory's text escaped."""

from __future__ import annotations

import html
import http.client
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

import pytest
from test_review import SID, agent_session, person_writes

from gitmem.features.audit import audit_log, card_edits
from gitmem.features.edit import write_card
from gitmem.index.build import card_created
from gitmem.index.provenance import unverified
from gitmem.memory.repo import MemoryRepo
from gitmem.memory.trailers import IndexEntry
from gitmem.setup.init import init_repo

from helpers import git, gm

SERVER = "from gitmem.cli import main; main()"
PLANT = "<script>window.pwned=1</script><img src=x onerror=alert(1)>"


@contextmanager
def ui(client: Path, *args: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, "-C", str(client), "ui", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None
        said = ""  # a note may come first ("finished an interrupted update of ...")
        while not said.endswith("\n") or "gitmem ui: serving" not in said:
            line = proc.stderr.readline().decode()
            assert line, said
            said += line
        urls = re.findall(r"http://127\.0\.0\.1:\d+/\?token=\S+", said)
        assert len(urls) == 1, said
        yield proc, urls[0]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def get(url: str, path: str, headers: dict[str, str]) -> http.client.HTTPResponse:
    port = int(url.split(":")[2].split("/")[0])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}", **headers})
    return conn.getresponse()


def test_the_token_becomes_a_cookie_and_nothing_is_served_without_it(client: Path) -> None:
    with ui(client) as (proc, url):
        token = url.split("token=")[1]
        first = get(url, f"/?token={token}", {})
        assert first.status == 303 and first.getheader("location") == "/"
        cookie = first.getheader("set-cookie") or ""
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        jar = cookie.split(";")[0]
        page = get(url, "/", {"Cookie": jar})
        assert page.status == 200 and "Pending review" in page.read().decode()
        assert "frame-ancestors 'none'" in (page.getheader("content-security-policy") or "")
        for headers in ({}, {"Cookie": "gitmem_ui=wrong"}):
            refused = get(url, "/", headers)
            assert refused.status == 401 and "Pending" not in refused.read().decode()
        assert get(url, "/", {"Cookie": jar, "Host": "evil.example:80"}).status == 403
        assert get(url, "/", {"Cookie": jar, "Origin": "http://evil.example"}).status == 403
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        assert proc.wait(timeout=30) == 0


def test_memory_text_is_escaped(client: Path) -> None:
    git(client, "remote", "add", "origin", f"file:///tmp/{PLANT}")
    with ui(client) as (_, url):
        page = get(url, f"/?token={url.split('token=')[1]}", {})
        jar = (page.getheader("set-cookie") or "").split(";")[0]
        body = get(url, "/", {"Cookie": jar}).read().decode()
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in body
    assert "<script>" not in body and "<img" not in body


def test_a_host_other_than_loopback_needs_a_token(client: Path) -> None:
    res = gm("-C", str(client), "ui", "--host", "10.9.8.7")
    assert res.code != 0 and res.code != 70
    assert "--token" in res.err and len(res.err.strip().splitlines()) == 1


def test_a_short_token_is_refused_before_anything_listens(client: Path) -> None:
    for args in (["--token", "a"], ["--host", "10.9.8.7", "--token", "x" * 31]):
        res = gm("-C", str(client), "ui", *args)
        assert res.code == 2 and "a token needs at least 32" in res.err, res.err
        assert len(res.err.strip().splitlines()) == 1


def post(url: str, path: str, jar: str, fields: list[tuple[str, str]]) -> tuple[int, str]:
    port = int(url.split(":")[2].split("/")[0])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {
        "Host": f"127.0.0.1:{port}",
        "Origin": f"http://127.0.0.1:{port}",
        "Cookie": jar,
        "Content-Type": "application/x-www-form-urlencoded",
    }
    conn.request("POST", path, body=urlencode(fields), headers=headers)
    res = conn.getresponse()
    return res.status, res.read().decode()


def test_accepting_one_hunk_from_the_page_lands_exactly_it(client: Path) -> None:
    with MemoryRepo(client) as repo:
        person_writes(repo)
        agent_session(repo)
    before = git(client, "rev-parse", "main")
    with ui(client) as (_, url):
        first = get(url, f"/?token={url.split('token=')[1]}", {})
        jar = (first.getheader("set-cookie") or "").split(";")[0]
        assert f'href="/review/{SID}"' in get(url, "/", {"Cookie": jar}).read().decode()
        page = get(url, f"/review/{SID}", {"Cookie": jar}).read().decode()
        assert "Budget: 40k" in page and "hunk 4" in page
        (csrf,) = re.findall(r'name="csrf" value="([^"]+)"', page)
        (tip,) = re.findall(r'name="tip" value="([^"]+)"', page)
        forged = [("action", "accept"), ("csrf", "wrong"), ("tip", tip)]
        assert post(url, f"/review/{SID}", jar, forged)[0] == 403
        assert git(client, "rev-parse", "main") == before
        code, text = post(
            url,
            f"/review/{SID}",
            jar,
            [("csrf", csrf), ("tip", tip), ("hunk", "1"), ("action", "accept")],
        )
        assert code == 200 and "accepted in part" in text
    card = git(client, "show", "main:cards/acme-website.md")
    assert "Budget: 40k" in card and "Owner: Ann" in card and "Call Bob on Monday" not in card
    assert SID not in gm("-C", str(client), "review").out


def test_read_only_serves_no_action(client: Path) -> None:
    with MemoryRepo(client) as repo:
        person_writes(repo)
        agent_session(repo)
    before = git(client, "for-each-ref")
    with ui(client, "--read-only") as (_, url):
        first = get(url, f"/?token={url.split('token=')[1]}", {})
        jar = (first.getheader("set-cookie") or "").split(";")[0]
        page = get(url, f"/review/{SID}", {"Cookie": jar}).read().decode()
        assert "Budget: 40k" in page and "<button" not in page and "<form" not in page
        history = get(url, "/history", {"Cookie": jar}).read().decode()
        assert "/revert/" not in history
        for path in (f"/review/{SID}", f"/revert/{SID}"):
            code, text = post(url, path, jar, [("action", "accept")])
            assert code == 403 and "read-only" in text
    assert git(client, "for-each-ref") == before


def test_open_opens_the_printed_url_with_its_token(
    client: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = tmp_path / "opened"
    browser = tmp_path / "browser"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {seen}.part && mv {seen}.part {seen}\n')
    browser.chmod(0o755)
    monkeypatch.setenv("BROWSER", str(browser))
    with ui(client, "--open") as (_, url):
        for _ in range(600):  # the browser is started after the URL is printed
            if seen.exists():
                break
            time.sleep(0.05)
        opened = seen.read_text()
        token = opened.split("token=")[1]
        first = get(url, f"/?token={token}", {})
    assert opened == url and first.status == 303


def test_the_card_blame_names_the_commit_of_each_line(client: Path) -> None:
    with MemoryRepo(client) as repo:
        person_writes(repo)
        first = git(client, "rev-parse", "main").strip()
        entry = IndexEntry.make("budget", ["budget"], "Budget raised to 55k")
        write_card(repo, "acme-website", "Budget: 30k", "Budget: 55k", entry)
        second = git(client, "rev-parse", "main").strip()
    with ui(client) as (_, url):
        page = get(url, f"/?token={url.split('token=')[1]}", {})
        jar = (page.getheader("set-cookie") or "").split(";")[0]
        body = get(url, "/cards/acme-website", {"Cookie": jar}).read().decode()
    blame = body.split('<table class="diff blame">')[1]
    found = re.findall(r"<code>(\w{7})</code></td><td class=\"code\">([^<]*)</td>", blame)
    lines = {line: sha for sha, line in found}
    assert lines["Budget: 55k"] == second[:7] and lines["Owner: Ann"] == first[:7]


def test_a_section_page_lists_its_values_with_dates_and_its_blame(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemoryRepo(client) as repo:
        person_writes(repo)  # Budget: 30k
        monkeypatch.setenv("GIT_AUTHOR_DATE", "1766000000 +0000")  # 2025-12-17
        monkeypatch.setenv("GIT_COMMITTER_DATE", "1766000000 +0000")
        entry = IndexEntry.make("budget", ["budget"], "Budget raised to 55k")
        write_card(repo, "acme-website", "Budget: 30k", "Budget: 55k", entry)
        entry = IndexEntry.make("team", ["team"], "Cy left")
        write_card(repo, "acme-website", "Cy tests\n", "", entry)  # not the budget
    raised = git(client, "rev-parse", "main~1").strip()
    with ui(client) as (_, url):
        page = get(url, f"/?token={url.split('token=')[1]}", {})
        jar = (page.getheader("set-cookie") or "").split(";")[0]
        body = get(url, "/cards/acme-website/budget", {"Cookie": jar}).read().decode()
        assert get(url, "/cards/acme-website/nope", {"Cookie": jar}).status == 404
    values = body.split("History of its values")[1].split("Blame")[0]
    assert values.count('<tr><td class="when">') == 2  # the third edit left it as it was
    assert values.index("2025-12-17") < values.index("Budget: 55k") < values.index("30k")
    blame = body.split('<table class="diff blame">')[1]
    assert f'<code>{raised[:7]}</code></td><td class="code">Budget: 55k' in blame
    assert "Bob builds" not in blame  # the section's lines only


def _pages(url: str, jar: str, path: str, links: list[str] | None = None) -> list[str]:
    """Every page of a history, following its "older edits" link from ``path``: the
    commits each lists, page after page (each link followed added to ``links``)."""
    shas: list[str] = []
    while True:
        res = get(url, path, {"Cookie": jar})
        body = res.read().decode()
        assert res.status == 200, body
        listed = body.split("History of its values")[1].split("</table>")[0]
        shas += re.findall(r"<code>(\w{7})</code>", listed)
        older = re.search(r'<a href="([^"]+)" rel="next">older edits</a>', body)
        if older is None:
            return shas
        path = html.unescape(older.group(1))
        if links is not None:
            links.append(path)


def test_a_card_s_and_a_section_s_history_page_back_to_their_first_edit(client: Path) -> None:
    budget: list[str] = []
    with MemoryRepo(client) as repo:
        person_writes(repo)  # Budget: 30k, Eve ships
        budget.append(git(client, "rev-parse", "--short=7", "main").strip())
        for n in range(12):  # a budget edit, then one elsewhere in the card
            entry = IndexEntry.make("budget", ["budget"], f"budget {n}")
            write_card(repo, "acme-website", f"Budget: {30 + n}k", f"Budget: {31 + n}k", entry)
            budget.append(git(client, "rev-parse", "--short=7", "main").strip())
            entry = IndexEntry.make("team", ["team"], f"team {n}")
            write_card(repo, "acme-website", f"Eve ships{n or ''}", f"Eve ships{n + 1}", entry)
    every = git(client, "log", "--format=%h", "--abbrev=7", "main", "--", "cards/acme-website.md")
    links: list[str] = []
    with ui(client) as (_, url):
        page = get(url, f"/?token={url.split('token=')[1]}", {})
        jar = (page.getheader("set-cookie") or "").split(";")[0]
        card = _pages(url, jar, "/cards/acme-website", links)
        section = _pages(url, jar, "/cards/acme-website/budget")
        third = get(url, "/cards/acme-website/budget?skip=20", {"Cookie": jar}).read().decode()
        by_skip = _pages(url, jar, "/cards/acme-website?skip=10")
    assert card == every.split() and len(card) == 25  # every edit once, newest first
    assert section == budget[::-1]  # the edits that changed the budget, not the others
    assert "newer edits" in third and "Blame" not in third  # the blame is the first page's
    assert [link.split("&")[0][-40:][:7] for link in links] == [card[9], card[19]]
    assert all("?before=" in link for link in links)  # each page starts at the last shown
    assert by_skip == card[10:]  # a bookmarked ?skip= page still lists from there


def test_a_walk_of_a_card_s_edits_ends_at_the_commit_that_created_it(client: Path) -> None:
    with MemoryRepo(client) as repo:
        person_writes(repo)
        for n in range(4):
            entry = IndexEntry.make("budget", ["budget"], f"budget {n}")
            write_card(repo, "acme-website", f"Budget: {30 + n}k", f"Budget: {31 + n}k", entry)
        every = [e.sha for e in audit_log(repo, "acme-website", edits_only=True)]
        created = card_created(repo, "acme-website")
        whole = card_edits(repo, "acme-website", "main", 11, created=created)
        cut = card_edits(repo, "acme-website", "main", 11, created=every[2])
        after = card_edits(repo, "acme-website", f"{every[1]}^@", 11, created=created)
    assert created == every[-1]
    assert [e.sha for e in whole.edits] == every and not whole.forked
    assert [e.sha for e in cut.edits] == every[:3]  # git stopped there
    assert [e.sha for e in after.edits] == every[2:]


def test_a_revert_of_what_cannot_be_reverted_asks_no_confirmation(client: Path) -> None:
    with MemoryRepo(client) as repo:
        person_writes(repo)
        agent_session(repo)  # pending: nothing of it on main
    side = git(client, "rev-parse", f"gitmem/session/{SID}").strip()
    root = git(client, "rev-list", "--max-parents=0", "main").strip()
    bad = {
        "%3Cscript%3E": (404, "no commit '<script>'"),
        "0" * 40: (404, "no commit '" + "0" * 40 + "'"),
        "20261207-999999-dead": (404, "no commit '20261207-999999-dead'"),
        side: (404, f"{side[:7]} is not on 'main'"),
        root: (400, f"{root[:7]} is a merge or root commit"),
        SID: (404, f"session {SID} has no edits on main left to revert"),
    }
    with ui(client) as (_, url):
        page = get(url, f"/?token={url.split('token=')[1]}", {})
        jar = (page.getheader("set-cookie") or "").split(";")[0]
        got = {}
        for target in bad:
            res = get(url, f"/revert/{target}", {"Cookie": jar})
            got[target] = (res.status, res.read().decode())
        main = git(client, "rev-parse", "main")
        good = get(url, "/revert/main", {"Cookie": jar}).read().decode()
    for target, (status, reason) in bad.items():
        code, body = got[target]
        assert code == status and reason in html.unescape(body), (target, body)
        assert "<form" not in body and "<script>" not in body
    assert "One new commit undoes 1 edit(s)" in good and "Budget set to 30k" in good
    assert git(client, "rev-parse", "main") == main  # a confirmation changes nothing


def test_a_card_page_marks_a_section_written_outside_gitmem_as_the_agent_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITMEM_SIGNING")  # signed, as a clone is by default
    client = tmp_path / "signed"
    init_repo(client)
    with MemoryRepo(client) as repo:
        person_writes(repo)
    card = client / "cards" / "acme-website.md"
    card.write_text(card.read_text().replace("Eve ships", f"Eve ships {PLANT}"))
    git(client, "commit", "-qam", "by hand", "--author=Mallory <m@example.com>", "--no-gpg-sign")
    with MemoryRepo(client) as repo:  # the line the agent reads beside the section
        marks = {key: u.line() for key, u in unverified(repo).items()}
    mark = marks[("acme-website", "team")]
    assert list(marks) == [("acme-website", "team")]
    with ui(client) as (_, url):
        page = get(url, f"/?token={url.split('token=')[1]}", {})
        jar = (page.getheader("set-cookie") or "").split(";")[0]
        body = get(url, "/cards/acme-website", {"Cookie": jar}).read().decode()
        section = get(url, "/cards/acme-website/team", {"Cookie": jar}).read().decode()
    entries = body.split("<h2>Index entries</h2>")[1].split("</table>")[0]
    rows = {r.split("</code>")[0].split(">")[-1]: r for r in entries.split("<tr>")[2:]}
    assert ">unverified</span>" in rows["team"] and "unverified" not in rows["budget"]
    assert f"§ team: {mark}" in html.unescape(re.sub("</?bdi>", "", body)) and "Mallory" in mark
    assert mark in html.unescape(section) and PLANT not in body and PLANT not in section


def test_a_bad_page_of_edits_is_refused_naming_what_is_wrong(client: Path) -> None:
    with MemoryRepo(client) as repo:
        person_writes(repo)
        agent_session(repo)  # its commits are on its branch, not on main
    side = git(client, "rev-parse", f"gitmem/session/{SID}").strip()
    tree = git(client, "rev-parse", "main^{tree}").strip()
    bad = {
        "?skip=-1": "skip must be a count of edits, not '-1'",
        "?skip=x": "skip must be a count of edits, not 'x'",
        f"?before={side}&n=x": "n must be a count of edits, not 'x'",
        f"?before={side}": f"before: {side[:7]} is not on 'main'",
        f"?before={tree}": f"before: no commit '{tree}'",
        "?before=" + "0" * 40: "before: no commit '" + "0" * 40,
        "?before=main": "before must be a commit id, not 'main'",
        "?before=%3Cscript%3Ealert(1)%3C/script%3E": "not '<script>alert(1)</script>'",
        "?before=--output=x": "before must be a commit id, not '--output=x'",
    }
    with ui(client) as (_, url):
        page = get(url, f"/?token={url.split('token=')[1]}", {})
        jar = (page.getheader("set-cookie") or "").split(";")[0]
        got = {}
        for query in bad:
            for path in ("/cards/acme-website", "/cards/acme-website/budget"):
                res = get(url, path + query, {"Cookie": jar})
                got[path + query] = (res.status, res.read().decode())
    for query, reason in bad.items():
        for path in ("/cards/acme-website", "/cards/acme-website/budget"):
            status, body = got[path + query]
            assert status == 400, (query, body)
            assert reason in html.unescape(body), (query, body)
            assert "<script>alert" not in body  # the text shown, escaped


def test_pages_after_a_merge_that_changed_the_card_go_by_count(
    client: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two lines of edits to one card, interleaved by date, then merged: a page's last
    edit is on one line only, so the pages after the merge are read by count."""
    card = client / "cards" / "acme-website.md"
    with MemoryRepo(client) as repo:
        person_writes(repo)
    git(client, "branch", "side")
    for n in range(24):  # side and main in turn, one second apart
        on, line = ("main", "Owner: Ann") if n % 2 else ("side", "Fay sells")
        git(client, "checkout", "-q", on)
        lines = card.read_text().split("\n")
        lines = [f"{line}{n}" if x.startswith(line) else x for x in lines]
        card.write_text("\n".join(lines))
        monkeypatch.setenv("GIT_COMMITTER_DATE", f"{1764498001 + n} +0000")
        git(client, "commit", "-qam", f"hand edit {n} on {on}")
    git(client, "checkout", "-q", "main")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "1764498100 +0000")
    git(client, "merge", "-q", "--no-edit", "side")
    assert "Owner: Ann23" in card.read_text() and "Fay sells22" in card.read_text()
    every = git(client, "log", "--format=%h", "--abbrev=7", "main", "--", "cards/acme-website.md")
    links: list[str] = []
    with ui(client) as (_, url):
        page = get(url, f"/?token={url.split('token=')[1]}", {})
        jar = (page.getheader("set-cookie") or "").split(";")[0]
        pages = _pages(url, jar, "/cards/acme-website", links)
    assert pages == every.split() and len(pages) == 26  # the merge, 24 edits, the first
    assert links == ["/cards/acme-website?skip=10", "/cards/acme-website?skip=20"]


def test_a_card_page_marks_a_section_whose_text_changed_after_its_summary(client: Path) -> None:
    with MemoryRepo(client) as repo:
        person_writes(repo)
    card = client / "cards" / "acme-website.md"
    card.write_text(card.read_text().replace("Owner: Ann", "Owner: Zed"))
    git(client, "commit", "-qam", "a hand edit: no trailers")
    assert "acme-website § budget" in gm("-C", str(client), "stale").out
    with ui(client) as (_, url):
        page = get(url, f"/?token={url.split('token=')[1]}", {})
        jar = (page.getheader("set-cookie") or "").split(";")[0]
        body = get(url, "/cards/acme-website", {"Cookie": jar}).read().decode()
    entries = body.split("<h2>Index entries</h2>")[1].split("</table>")[0]
    rows = {r.split("</code>")[0].split(">")[-1]: r for r in entries.split("<tr>")[2:]}
    assert ">stale</span>" in rows["budget"] and "stale" not in rows["team"]
