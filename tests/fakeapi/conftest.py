"""Fixtures: a fake API server on 127.0.0.1 (port 0) and real SDK clients pointed at it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import pytest

from gitmem.fakeapi import FakeAnthropicServer, ManualClock, QueueModel


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(1000.0)


@pytest.fixture
def model() -> QueueModel:
    return QueueModel()


@pytest.fixture
def server(model: QueueModel, clock: ManualClock) -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(model, clock=clock) as running:
        yield running


@pytest.fixture
def make_sdk(server: FakeAnthropicServer) -> Iterator[Callable[..., anthropic.Anthropic]]:
    clients: list[anthropic.Anthropic] = []

    def make(max_retries: int = 2, **kwargs: Any) -> anthropic.Anthropic:
        made = anthropic.Anthropic(
            api_key="test", base_url=server.base_url, max_retries=max_retries, **kwargs
        )
        clients.append(made)
        return made

    yield make
    for made in clients:
        made.close()


@pytest.fixture
def sdk(make_sdk: Callable[..., anthropic.Anthropic]) -> anthropic.Anthropic:
    """A real SDK client without retries (fault tests make their own)."""
    return make_sdk(max_retries=0)
