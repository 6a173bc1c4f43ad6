"""HTTP plumbing: a threaded loopback server and low-level response writing.

Responses use HTTP/1.1 keep-alive; streamed bodies use chunked transfer
encoding, so a connection cut mid-stream is seen by the client as an
incomplete body rather than a normal end.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol


class RequestSink(Protocol):
    """What handles each request (the fake API server)."""

    def handle_request(self, handler: Handler) -> None: ...


class LoopbackServer(ThreadingHTTPServer):
    """One thread per connection; open connections are tracked so stop() can cut them."""

    daemon_threads = True

    def __init__(self, port: int, sink: RequestSink) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.sink = sink
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Cut every open keep-alive connection (their handler threads then end)."""
        with self.connections_lock:
            open_connections = list(self.connections)
        for connection in open_connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30
    server: LoopbackServer

    def do_POST(self) -> None:
        self._serve()

    def do_GET(self) -> None:
        self._serve()

    def _serve(self) -> None:
        try:
            self.server.sink.handle_request(self)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away; nothing left to answer

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""


def send_head(
    handler: Handler, status: int, request_id: str, content_type: str, headers: dict[str, str]
) -> None:
    """Status line and headers (always with ``request-id``)."""
    handler.send_response(status)
    handler.send_header("content-type", content_type)
    handler.send_header("request-id", request_id)
    for key, value in headers.items():
        handler.send_header(key, value)
    handler.end_headers()


def write(handler: Handler, data: bytes) -> bool:
    """Write to the client; ``False`` (and the connection closed) if it has gone away."""
    try:
        handler.wfile.write(data)
        handler.wfile.flush()
        return True
    except (BrokenPipeError, ConnectionResetError):
        handler.close_connection = True
        return False


def abort(handler: Handler) -> None:
    """Close the connection at once, leaving any response unfinished."""
    handler.close_connection = True
    try:
        handler.wfile.flush()
        handler.connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
