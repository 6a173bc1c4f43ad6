"""The Anthropic client the commands use, and what it says before each retry."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from gitmem.errors import ConfigError

STATUS_NAMES = {
    408: "timed out",
    409: "conflict",
    429: "rate limited",
    500: "server error",
    502: "bad gateway",
    503: "unavailable",
    504: "gateway timeout",
    529: "overloaded",
}


class RetryWatch:
    """Sees each HTTP attempt the SDK makes, so a UI can say that (and why) it retries.

    An error response is announced as it arrives, before the SDK's back-off sleep; a
    dropped connection only when the next attempt starts (no response to see).
    """

    def __init__(self, on_retry: Callable[[str], None], max_retries: int) -> None:
        self.on_retry, self.max_retries = on_retry, max_retries
        self.answered = False

    @staticmethod
    def _attempt(request: Any) -> int:
        return int(request.headers.get("x-stainless-retry-count", "0") or 0)

    def request(self, request: Any) -> None:
        attempt = self._attempt(request)
        if attempt and not self.answered:
            self.on_retry(f"the connection failed; retrying ({attempt} of {self.max_retries})")
        self.answered = False

    def response(self, response: Any) -> None:
        self.answered = True
        code = int(response.status_code)
        should = response.headers.get("x-should-retry")
        retried = should == "true" or (
            should != "false" and (code in (408, 409, 429) or code >= 500)
        )
        attempt = self._attempt(response.request) + 1
        if code < 400 or not retried or attempt > self.max_retries:
            return
        wait = response.headers.get("retry-after")
        when = f" in {wait}s" if wait and wait.replace(".", "", 1).isdigit() else ""
        self.on_retry(
            f"the API answered {code} {STATUS_NAMES.get(code, 'error')}; "
            f"retrying{when} ({attempt} of {self.max_retries})"
        )


def require_key() -> None:
    """A clear error without an API key, before anything is loaded."""
    if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        raise ConfigError(
            "no API key: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another endpoint); "
            "`gitmem chat --simulated` and `gitmem demo` run without one"
        )


def make_client(max_retries: int = 2, on_retry: Callable[[str], None] | None = None) -> Any:
    """``anthropic.Anthropic()`` as configured by the environment; a clear error without a key.

    ``on_retry`` hears, before each retry the SDK makes, which one it is and why.
    """
    require_key()
    import anthropic

    if on_retry is None:
        return anthropic.Anthropic(max_retries=max_retries)
    watch = RetryWatch(on_retry, max_retries)
    http = anthropic.DefaultHttpxClient(
        event_hooks={"request": [watch.request], "response": [watch.response]}
    )
    return anthropic.Anthropic(max_retries=max_retries, http_client=http)
