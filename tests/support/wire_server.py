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
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Api = str  # "openai" | "anthropic"
APIS: tuple[Api, ...] = ("openai", "anthropic")  # the APIs the server speaks


@dataclass(frozen=True)
class WireReply:
    """What the server answers to one request.

    ``tool_calls`` are ``(name, arguments)`` pairs. ``usage`` has ``input``
    (uncached), ``output``, ``cache_read`` and ``cache_write`` counts, rendered
    in each API's own convention. ``logprobs`` is a list of ``{"token",
    "logprob", "top": {token: logprob}}`` (OpenAI only; sent when the request
    asks for logprobs). ``fault`` is ``None``, ``"drop"``, ``"cut"`` (stream
    broken off abruptly after ``cut_after`` events), ``"cut_clean"`` (stream
    ends cleanly after ``cut_after`` events, unfinished) or ``"stream_error"``
    (an error event after ``cut_after`` events). ``delay`` holds the answer
    back that many seconds (or until the server is reset).
    """

    text: str = ""
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    usage: dict[str, int] = field(default_factory=lambda: {"input": 12, "output": 5, "cache_read": 0, "cache_write": 0})
    logprobs: tuple[dict[str, Any], ...] | None = None
    stop_reason: str | None = None
    status: int = 200
    error_type: str | None = None
    message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    fault: str | None = None
    cut_after: int = 3
    delay: float = 0.0
    model: str | None = None

    @classmethod
    def tool_call(cls, name: str, arguments: dict[str, Any], *, text: str = "", **kw: Any) -> WireReply:
        return cls(text=text, tool_calls=((name, arguments),), **kw)

    @classmethod
    def error(cls, status: int, message: str = "", *, retry_after: float | None = None, error_type: str | None = None) -> WireReply:
        headers = {} if retry_after is None else {"retry-after": f"{retry_after:g}"}
        return cls(status=status, message=message or f"scripted error {status}", headers=headers, error_type=error_type)

    @classmethod
    def rate_limited(cls, retry_after: float | None = None) -> WireReply:
        return cls.error(429, "rate limit reached", retry_after=retry_after)

    @classmethod
    def server_error(cls) -> WireReply:
        return cls.error(500, "internal server error")

    @classmethod
    def overloaded(cls) -> WireReply:
        return cls.error(529, "overloaded", error_type="overloaded_error")

    @classmethod
    def unauthorized(cls) -> WireReply:
        return cls.error(401, "invalid x-api-key")

    @classmethod
    def drop(cls) -> WireReply:
        return cls(fault="drop")

    @classmethod
    def slow(cls, delay: float, then: WireReply | None = None) -> WireReply:
        return replace(then or cls(text="too late"), delay=delay)

    @classmethod
    def cut_stream(cls, text: str, *, after: int = 3, clean: bool = False) -> WireReply:
        return cls(text=text, fault="cut_clean" if clean else "cut", cut_after=after)

    @classmethod
    def stream_error(cls, text: str, *, after: int = 3, error_type: str = "overloaded_error") -> WireReply:
        return cls(text=text, fault="stream_error", cut_after=after, error_type=error_type, message="overloaded mid-stream")


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

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def do_GET(self) -> None:  # noqa: N802
        self.wire.requests.append(RecordedRequest("GET", self.path, dict(self.headers), None, None))
        if self.path.rstrip("/").endswith("/v1/models"):
            status = self.wire.models_status
            if status >= 400:
                self._json(status, {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}})
                return
            models = [{"id": "test-model", "object": "model", "type": "model", "created": 0, "owned_by": "wire",
                       "display_name": "Test model", "created_at": "2025-01-01T00:00:00Z"}]
            self._json(200, {"object": "list", "data": models, "has_more": False, "first_id": "test-model", "last_id": "test-model"})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found_error"}})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = raw.decode("utf-8", "replace")
        api = "anthropic" if self.path.rstrip("/").endswith("/v1/messages") else (
            "openai" if self.path.rstrip("/").endswith("/chat/completions") else None)
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
            self._json(reply.status, _error_body(api, reply), reply.headers)
            return
        model = reply.model or (request.body or {}).get("model", "test-model")
        if request.stream:
            self._stream(api, request, reply, model)
        elif api == "anthropic":
            self._json(200, _anthropic_message(reply, model), reply.headers)
        else:
            self._json(200, _openai_completion(reply, model, request.body), reply.headers)

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
            events = _anthropic_events(reply, model)
        else:
            events = _openai_events(reply, model, request.body)
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
                    self._chunk(_sse_error(api, reply))
                break
            self._chunk(event)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


# -- the two wire formats ------------------------------------------------------

_ANTHROPIC_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                          404: "not_found_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}
_OPENAI_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_api_key", 429: "rate_limit_exceeded", 500: "server_error"}


def _error_body(api: Api, reply: WireReply) -> dict[str, Any]:
    if api == "anthropic":
        kind = reply.error_type or _ANTHROPIC_ERROR_TYPES.get(reply.status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": reply.message}}
    kind = reply.error_type or _OPENAI_ERROR_TYPES.get(reply.status, "server_error")
    return {"error": {"message": reply.message, "type": kind, "param": None, "code": kind}}


def _sse_error(api: Api, reply: WireReply) -> bytes:
    body = _error_body(api, replace(reply, status=500))
    if api == "anthropic":
        return _sse(body, "error")
    return _sse(body)


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def _pieces(text: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text)


def _stop_reason(api: Api, reply: WireReply) -> str:
    if reply.stop_reason:
        return reply.stop_reason
    if api == "anthropic":
        return "tool_use" if reply.tool_calls else "end_turn"
    return "tool_calls" if reply.tool_calls else "stop"


def _anthropic_usage(usage: dict[str, int], output: int | None = None) -> dict[str, int]:
    return {
        "input_tokens": usage.get("input", 0),
        "output_tokens": usage.get("output", 0) if output is None else output,
        "cache_creation_input_tokens": usage.get("cache_write", 0),
        "cache_read_input_tokens": usage.get("cache_read", 0),
    }


def _anthropic_message(reply: WireReply, model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for number, (name, arguments) in enumerate(reply.tool_calls):
        content.append({"type": "tool_use", "id": f"toolu_{number:02d}", "name": name, "input": arguments})
    return {
        "id": "msg_wire", "type": "message", "role": "assistant", "model": model, "content": content,
        "stop_reason": _stop_reason("anthropic", reply), "stop_sequence": None,
        "usage": _anthropic_usage(reply.usage),
    }


def _anthropic_events(reply: WireReply, model: str) -> list[bytes]:
    start = {"id": "msg_wire", "type": "message", "role": "assistant", "model": model, "content": [],
             "stop_reason": None, "stop_sequence": None, "usage": _anthropic_usage(reply.usage, output=1)}
    events = [_sse({"type": "message_start", "message": start}, "message_start")]
    index = 0
    if reply.text:
        events.append(_sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}, "content_block_start"))
        events.append(_sse({"type": "ping"}, "ping"))
        for piece in _pieces(reply.text):
            events.append(_sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}, "content_block_delta"))
        events.append(_sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
        index = 1
    for number, (name, arguments) in enumerate(reply.tool_calls):
        block = {"type": "tool_use", "id": f"toolu_{number:02d}", "name": name, "input": {}}
        events.append(_sse({"type": "content_block_start", "index": index, "content_block": block}, "content_block_start"))
        text = json.dumps(arguments)
        for part in (text[: len(text) // 2], text[len(text) // 2 :]):
            delta = {"type": "input_json_delta", "partial_json": part}
            events.append(_sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"))
        events.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1
    delta = {"type": "message_delta", "delta": {"stop_reason": _stop_reason("anthropic", reply), "stop_sequence": None},
             "usage": {"output_tokens": reply.usage.get("output", 0)}}
    events.append(_sse(delta, "message_delta"))
    events.append(_sse({"type": "message_stop"}, "message_stop"))
    return events


def _openai_usage(usage: dict[str, int]) -> dict[str, Any]:
    cached = usage.get("cache_read", 0)
    prompt = usage.get("input", 0) + cached  # OpenAI's prompt_tokens include the cached ones
    output = usage.get("output", 0)
    return {"prompt_tokens": prompt, "completion_tokens": output, "total_tokens": prompt + output,
            "prompt_tokens_details": {"cached_tokens": cached}}


def _openai_logprob(entry: dict[str, Any], top_n: int) -> dict[str, Any]:
    top = list((entry.get("top") or {entry["token"]: entry["logprob"]}).items())[:top_n]
    return {
        "token": entry["token"], "logprob": entry["logprob"], "bytes": list(entry["token"].encode()),
        "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top],
    }


def _wants_logprobs(body: Any) -> tuple[bool, int]:
    if isinstance(body, dict) and body.get("logprobs"):
        return True, int(body.get("top_logprobs") or 0)
    return False, 0


def _logprob_entries(reply: WireReply) -> list[dict[str, Any]]:
    if reply.logprobs is not None:
        return list(reply.logprobs)
    return [{"token": piece, "logprob": -0.01} for piece in _pieces(reply.text)]


def _openai_tool_calls(reply: WireReply) -> list[dict[str, Any]]:
    return [{"id": f"call_{n:02d}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for n, (name, args) in enumerate(reply.tool_calls)]


def _openai_completion(reply: WireReply, model: str, body: Any) -> dict[str, Any]:
    wants, top_n = _wants_logprobs(body)
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = _openai_tool_calls(reply)
    logprobs = {"content": [_openai_logprob(e, top_n) for e in _logprob_entries(reply)]} if wants else None
    return {
        "id": "chatcmpl-wire", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": logprobs, "finish_reason": _stop_reason("openai", reply)}],
        "usage": _openai_usage(reply.usage),
    }


def _openai_events(reply: WireReply, model: str, body: Any) -> list[bytes]:
    wants, top_n = _wants_logprobs(body)

    def chunk(delta: dict[str, Any], finish: str | None = None, logprobs: Any = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish}
        return _sse({"id": "chatcmpl-wire", "object": "chat.completion.chunk", "created": 0, "model": model, "choices": [choice]})

    events = [chunk({"role": "assistant", "content": ""})]
    if wants:
        for entry in _logprob_entries(reply):
            events.append(chunk({"content": entry["token"]}, logprobs={"content": [_openai_logprob(entry, top_n)]}))
    else:
        for piece in _pieces(reply.text):
            events.append(chunk({"content": piece}))
    for number, call in enumerate(_openai_tool_calls(reply)):
        first = {"index": number, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"], "arguments": ""}}
        events.append(chunk({"tool_calls": [first]}))
        text = call["function"]["arguments"]
        for part in (text[: len(text) // 2], text[len(text) // 2 :]):
            events.append(chunk({"tool_calls": [{"index": number, "function": {"arguments": part}}]}))
    events.append(chunk({}, finish=_stop_reason("openai", reply)))
    if isinstance(body, dict) and (body.get("stream_options") or {}).get("include_usage"):
        events.append(_sse({"id": "chatcmpl-wire", "object": "chat.completion.chunk", "created": 0, "model": model,
                            "choices": [], "usage": _openai_usage(reply.usage)}))
    events.append(b"data: [DONE]\n\n")
    return events
