"""``gitmem chat`` and ``gitmem ask`` as plain functions over values."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

from gitmem.agent import usage
from gitmem.agent.events import AgentEvents
from gitmem.agent.session import AgentSession
from gitmem.errors import ModelError
from gitmem.memory.repo import MemoryRepo
from gitmem.review import session_branches as sessions


@dataclass(frozen=True)
class ChatResult:
    """How a chat ended: its session id, the turns taken, the turns the model failed to
    answer, ``finish`` (the session's ``FinishResult``: landed or waiting for review), and
    ``pending``: the transcript's last message still awaits the model."""

    session: str
    turns: int
    failed_turns: int
    finish: sessions.FinishResult
    pending: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def run_chat(
    repo: MemoryRepo,
    inputs: Iterable[str],
    *,
    client: Any,
    write: Callable[[str], None],
    warn: Callable[[str], None],
    resume: str | None = None,
    session_id: str | None = None,
    prompt: Callable[[], None] | None = None,
    clock: Callable[[], float] | None = None,
    events: AgentEvents | None = None,
    command: Callable[[str, AgentSession], bool] | None = None,
    on_start: Callable[[AgentSession], None] | None = None,
    policy: str | None = None,
    keep_failed: bool = True,
) -> ChatResult:
    """One session: each input line is a user turn; the reply streams through ``write``.

    A failed model call is reported through ``warn`` and the session goes on; the
    user's turn stays in the transcript and is answered with the next one. The
    session ends (transcript committed, review policy applied) however the loop ends.

    A UI passes ``events`` to see each turn as it happens (then ``write`` gets nothing),
    ``command`` to take lines starting with "/" (it returns False to end the session)
    and ``on_start`` to show the session before the first turn. ``policy`` overrides
    gitmem.toml's review policy for this session.

    With ``keep_failed`` False (`gitmem ask`) a turn the model never answered is taken
    back: the transcript forgets it, and a session this run left as it found it ends
    with nothing written, so the repo is as it was (what the model did before failing
    is kept).
    """
    session = sessions.start_session(repo, resume or session_id, resume=bool(resume))
    kwargs = {"clock": clock} if clock else {}
    try:
        agent = AgentSession(repo, session, client, warn=warn, **kwargs)
    except BaseException:  # its layers could not be read (persona.md, ...): no session left
        sessions.finish_session(repo, session, policy)
        raise
    turns = failed = 0
    started = agent.transcript.mark()
    end = (lambda: None) if events else (lambda: write("\n"))

    def answer(text: str | None) -> bool:
        if events:
            run = (
                (lambda: agent.ask(text, events=events))
                if text
                else (lambda: agent.answer(events=events))
            )
        else:
            run = (lambda: agent.ask(text, write)) if text else (lambda: agent.answer(write))
        mark, tip = agent.transcript.mark(), repo.tip(session.branch)
        err = _turn(run, end)
        if err is None:
            return True
        if keep_failed or not text or not _unanswered(agent, mark, tip):
            warn(
                f"{err} (your message is kept: it is answered with the next one, or by `--resume`)"
            )
        else:
            agent.transcript.drop_since(mark)
            warn(f"{err} (your message was not kept)")
        return False

    try:
        if on_start:
            on_start(agent)
        if agent.transcript.pending():
            failed += not answer(None)
        if prompt:
            prompt()
        for line in inputs:
            text = line.rstrip("\r\n")
            if command and text.startswith("/"):
                if not command(text.strip(), agent):
                    break
            elif text.strip():
                turns += 1
                failed += not answer(text)
            if prompt:
                prompt()
    finally:
        nothing = not keep_failed and agent.transcript.mark() == started
        waiting = agent.transcript.pending()
        fin = sessions.finish_session(repo, session, policy, drop=nothing)
        usage.commit_session(repo, session.id)
    return ChatResult(session.id, turns, failed, fin, waiting)


def _turn(run: Callable[[], str], end: Callable[[], None]) -> ModelError | None:
    try:
        run()
    except ModelError as err:
        end()
        return err
    end()
    return None


def _unanswered(agent: AgentSession, mark: tuple[int, int], tip: str | None) -> bool:
    """Nothing but the user's own message was recorded since ``mark`` (no reply, no tool
    call) and the session's branch is still at ``tip``."""
    records = agent.transcript.records[mark[0] :]
    return agent.repo.tip(agent.session.branch) == tip and all(
        r.get("role") == "user" for r in records
    )
