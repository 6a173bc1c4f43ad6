"""A `git daemon` on 127.0.0.1 for the sync benchmarks: a free port, pushes allowed, stopped
when the block ends."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def git_daemon(base: Path, env: Mapping[str, str]) -> Iterator[int]:
    """Serve every repo under ``base``; yields the port once it accepts connections."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    proc = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            f"--base-path={base}",
            "--export-all",
            "--enable=receive-pack",
            "--listen=127.0.0.1",
            f"--port={port}",
            str(base),
        ],
        env=dict(env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit("git daemon did not start")
            time.sleep(0.02)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)
