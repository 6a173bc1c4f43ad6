"""`gitmem ui`'s review page and overview as a user reads them: a running session is shown
with the reason no decision can be made on it, the session's model is named, and a
setting a sync held is on the overview as `gitmem status` says it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from test_local_settings import REVIEW, WEAKEN, push_from_other, set_toml
from test_review import OTHER, SID, agent_session, person_writes
from test_sync import make_pair, sync
from test_ui import get, post, ui

from gitmem.features import session_live
from gitmem.memory.repo import MemoryRepo

from helpers import git, gm


def _jar(url: str) -> str:
    first = get(url, f"/?token={url.split('token=')[1]}", {})
    return (first.getheader("set-cookie") or "").split(";")[0]


def test_a_running_session_is_shown_with_why_it_cannot_be_decided(client: Path) -> None:
    with MemoryRepo(client) as repo:
        person_writes(repo)
        agent_session(repo)
        fd = session_live.hold(repo, SID)  # this process runs the session
        assert fd is not None
        try:
            before = git(client, "for-each-ref")
            with ui(client) as (_, url):
                jar = _jar(url)
                res = get(url, f"/review/{SID}", {"Cookie": jar})
                page = res.read().decode()
                assert res.status == 200 and "Budget: 40k" in page  # the diff, as the CLI shows
                reason = f"session {SID} is still running (process "
                assert reason in page and "<button" not in page
                (csrf,) = re.findall(r'name="csrf" value="([^"]+)"', page)
                code, text = post(
                    url, f"/review/{SID}", jar, [("csrf", csrf), ("action", "accept")]
                )
                assert code == 409 and reason in text
                cli = gm("-C", str(client), "review", SID, "--accept")
                assert cli.code != 0 and reason in cli.err  # the same one-line reason
            assert git(client, "for-each-ref") == before
        finally:
            session_live.release(repo, SID, fd)


def test_the_review_page_names_the_model_the_session_asked(client: Path) -> None:
    with MemoryRepo(client) as repo:
        person_writes(repo)
        agent_session(repo)
        agent_session(repo, OTHER)
    line = {"session": SID, "model": "claude-test-9", "message_id": "m1", "purpose": "turn"}
    with (client / "logs/usage.jsonl").open("a") as f:
        f.write(json.dumps(line) + "\n")
    git(client, "add", "logs/usage.jsonl")
    git(client, "commit", "-qm", "usage: session " + SID)
    with ui(client) as (_, url):
        jar = _jar(url)
        page = get(url, f"/review/{SID}", {"Cookie": jar}).read().decode()
        other = get(url, f"/review/{OTHER}", {"Cookie": jar}).read().decode()
    assert "<dt>Model</dt><dd><bdi>claude-test-9</bdi></dd>" in page
    assert "<dt>Model</dt><dd>(no request logged)</dd>" in other  # written without the API


def test_the_overview_shows_a_setting_a_sync_held(tmp_path: Path) -> None:
    bare, laptop, _desktop = make_pair(tmp_path)
    set_toml(laptop, *REVIEW, "review every session")
    assert sync(laptop)[0] == 0
    push_from_other(tmp_path, bare, WEAKEN)
    assert sync(laptop)[0] == 0
    with ui(laptop) as (_, url):
        page = get(url, "/", {"Cookie": _jar(url)}).read().decode()
    text = re.sub(r"<[^>]+>", "", page).replace("&#34;", '"').replace("&#39;", "'")
    assert 'memory.review = "review" (held), held on this machine: origin\'s gitmem.toml' in text
    assert 'says "auto"; gitmem trust memory.review accepts it' in text
    assert "secrets.allow = none (held), held on this machine" in text
