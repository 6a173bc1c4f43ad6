"""The official MCP conformance suite's server scenarios against ``gitmem mcp --http``.

Needs Node >= 22 and the suite from the npm registry on PATH
(``npm install @modelcontextprotocol/conformance``, then ``node_modules/.bin``)::

    .venv/bin/python benchmarks/mcp_conformance.py                 # every server scenario
    .venv/bin/python benchmarks/mcp_conformance.py tools-list ping # some

The suite sends no ``Authorization`` header, so the server this script starts adds the
token to each request just before gitmem's own check (which stays on). Each scenario
runs against a fresh client repo; the suite's own lines are printed as they come.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from starlette.types import Receive, Scope, Send

SERVER_SCENARIOS = "conformance list --server"
TOKEN = "conformance-token-0123456789-abcdefghij"


def serve(client: Path) -> None:
    """gitmem's HTTP server with the token added to every request (the suite has none)."""
    import gitmem
    from gitmem.bridges import mcp_http
    from gitmem.review.render import finish_text

    class WithToken(mcp_http.BearerToken):
        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http":
                headers = [h for h in scope["headers"] if h[0] != b"authorization"]
                scope = {**scope, "headers": [*headers, (b"authorization", self.expected)]}
            await super().__call__(scope, receive, send)

    mcp_http.BearerToken = WithToken  # type: ignore[misc]
    with gitmem.open_repo(client) as repo:
        done = gitmem.serve_mcp_http(
            repo, "127.0.0.1:0", TOKEN, say=lambda s: print(s, file=sys.stderr, flush=True)
        )
    print(finish_text(done), file=sys.stderr)


def scenarios() -> list[str]:
    out = subprocess.run(SERVER_SCENARIOS.split(), capture_output=True, text=True, check=True)
    return re.findall(r"^\s*- (\S+)", out.stdout, re.M)


def run_one(scenario: str, tmp: Path) -> int:
    import gitmem

    client = tmp / scenario
    gitmem.init_repo(client)
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(client)], stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        (url,) = re.findall(r"http://\S+/mcp", line)
        suite = subprocess.run(
            ["conformance", "server", "--url", url, "--scenario", scenario],
            timeout=300,
            check=False,
        )
        return suite.returncode
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", type=Path)
    parser.add_argument("scenario", nargs="*")
    args = parser.parse_args()
    if args.serve:
        return serve(args.serve)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("GIT_AUTHOR_NAME", "conformance")
        os.environ.setdefault("GIT_AUTHOR_EMAIL", "conformance@example.com")
        os.environ.setdefault("GIT_COMMITTER_NAME", "conformance")
        os.environ.setdefault("GIT_COMMITTER_EMAIL", "conformance@example.com")
        for scenario in args.scenario or scenarios():
            print(f"=== {scenario}", flush=True)
            results[scenario] = run_one(scenario, Path(tmp))
    print("\nscenario                          suite exit")
    for scenario, code in results.items():
        print(f"{scenario:34}{code}")


if __name__ == "__main__":
    main()
