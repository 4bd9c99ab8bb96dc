"""A loopback HTTP server that speaks two model APIs, scripted per test.

It answers the Anthropic Messages API (``POST /v1/messages``) and the OpenAI
Chat Completions API (``POST /v1/chat/completions``), streamed (SSE) or not,
plus ``GET /v1/models``. The real SDKs talk to it through their base URL
(:meth:`WireServer.base_url`). Each POST takes the next :class:`WireReply`
from the queue (or asks the responder function); every request is recorded.

Replies can inject faults: an HTTP error with ``retry-after`` (429, 500, 529
overloaded, 401), a dropped connection, a slow answer (client timeouts), a
stream cut mid-way (abruptly, or cleanly but incomplete), and an error event
inside a stream. Nothing here listens beyond 127.0.0.1.

::

    with WireServer() as server:
        server.queue(WireReply.rate_limited(retry_after=0.01), WireReply(text="Hello"))
        provider = create_provider("openai/test-model", api_key="k", base_url=server.base_url("openai"))
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .wire_formats import (
    APIS,
    Api,
    WireReply,
    anthropic_events,
    anthropic_message,
    error_body,
    openai_completion,
    openai_events,
    sse_error,
)

__all__ = ["APIS", "RecordedRequest", "WireReply", "WireServer"]


@dataclass
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    api: Api | None

    @property
    def stream(self) -> bool:
        return bool(isinstance(self.body, dict) and self.body.get("stream"))


Responder = Callable[[RecordedRequest], WireReply]


class WireServer:
    """The server: start it (or use it as a context manager), queue replies, read ``requests``."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.models_status = 200
        self.open_connections = 0  # client connections currently open
        self.connections_made = 0  # client connections accepted since the start
        self._replies: deque[WireReply] = deque()
        self._responder: Responder | None = None
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------

    def start(self) -> WireServer:
        handler = type("Handler", (_Handler,), {"wire": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="wire-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._wake.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> WireServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reset(self) -> None:
        """Forget replies and requests; release any answer still being held back."""
        with self._lock:
            self._replies.clear()
            self.requests.clear()
            self._responder = None
            self.models_status = 200
            self._wake.set()
            self._wake = threading.Event()

    # -- scripting ----------------------------------------------------------

    @property
    def url(self) -> str:
        assert self._httpd is not None, "the server is not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def base_url(self, api: Api) -> str:
        """The base URL to give the SDK: OpenAI's includes ``/v1``, Anthropic's does not."""
        return f"{self.url}/v1" if api == "openai" else self.url

    def queue(self, *replies: WireReply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def respond_with(self, responder: Responder | None) -> None:
        """Answer every request with ``responder(request)`` (queued replies go first)."""
        self._responder = responder

    @property
    def pending(self) -> int:
        return len(self._replies)

    def wait_for_connections(self, at_most: int = 0, timeout: float = 5.0) -> bool:
        """Wait until at most ``at_most`` client connections are open; False if that never happened."""
        deadline = time.monotonic() + timeout
        while self.open_connections > at_most:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def posts(self) -> list[RecordedRequest]:
        """The model calls received (POST requests), in order."""
        return [r for r in self.requests if r.method == "POST"]

    def _next(self, request: RecordedRequest) -> tuple[WireReply, threading.Event]:
        with self._lock:
            self.requests.append(request)
            wake = self._wake
            if self._replies:
                return self._replies.popleft(), wake
        if self._responder is not None:
            return self._responder(request), wake
        return WireReply.error(500, "wire server: no scripted reply left"), wake


class _Handler(BaseHTTPRequestHandler):
    wire: WireServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the name http.server gives it
        pass

    def setup(self) -> None:
        super().setup()
        with self.wire._lock:
            self.wire.open_connections += 1
            self.wire.connections_made += 1

    def finish(self) -> None:
        with self.wire._lock:
            self.wire.open_connections -= 1
        try:
            super().finish()
        except OSError:
            pass

    def do_GET(self) -> None:
        self.wire.requests.append(RecordedRequest("GET", self.path, dict(self.headers), None, None))
        if self.path.rstrip("/").endswith("/v1/models"):
            status = self.wire.models_status
            if status >= 400:
                self._json(status, {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}})
                return
            models = [
                {
                    "id": "test-model",
                    "object": "model",
                    "type": "model",
                    "created": 0,
                    "owned_by": "wire",
                    "display_name": "Test model",
                    "created_at": "2025-01-01T00:00:00Z",
                }
            ]
            self._json(
                200,
                {
                    "object": "list",
                    "data": models,
                    "has_more": False,
                    "first_id": "test-model",
                    "last_id": "test-model",
                },
            )
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found_error"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = raw.decode("utf-8", "replace")
        api = (
            "anthropic"
            if self.path.rstrip("/").endswith("/v1/messages")
            else ("openai" if self.path.rstrip("/").endswith("/chat/completions") else None)
        )
        request = RecordedRequest("POST", self.path, dict(self.headers), body, api)
        reply, wake = self.wire._next(request)
        if api is None:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found_error"}})
            return
        try:
            self._answer(api, request, reply, wake)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    # -- answering ----------------------------------------------------------

    def _answer(self, api: Api, request: RecordedRequest, reply: WireReply, wake: threading.Event) -> None:
        if reply.delay:
            wake.wait(reply.delay)
        if reply.fault == "drop":
            self._drop()
            return
        if reply.status >= 400:
            self._json(reply.status, error_body(api, reply), reply.headers)
            return
        model = reply.model or (request.body or {}).get("model", "test-model")
        if request.stream:
            self._stream(api, request, reply, model)
        elif api == "anthropic":
            self._json(200, anthropic_message(reply, model), reply.headers)
        else:
            self._json(200, openai_completion(reply, model, request.body), reply.headers)

    def _json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _stream(self, api: Api, request: RecordedRequest, reply: WireReply, model: str) -> None:
        if api == "anthropic":
            events = anthropic_events(reply, model)
        else:
            events = openai_events(reply, model, request.body)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        for number, event in enumerate(events):
            if reply.fault in ("cut", "cut_clean", "stream_error") and number == reply.cut_after:
                if reply.fault == "cut":
                    self.wfile.flush()
                    time.sleep(0.01)  # let the client read what came, then break off mid-body
                    self._drop()
                    return
                if reply.fault == "stream_error":
                    self._chunk(sse_error(api, reply))
                break
            self._chunk(event)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()
