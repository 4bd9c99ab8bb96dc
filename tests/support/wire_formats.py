"""What the wire server says: replies (:class:`WireReply`) in each API's own format.

The Anthropic Messages API and the OpenAI Chat Completions API, whole or as
server-sent events, with tool calls, usage (in each API's counting
convention), logprobs and error bodies.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
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
    back that many seconds (or until the server is reset). ``compaction`` is
    a compaction block the Anthropic API puts first in its answer (streamed as
    its start, then one ``compaction_delta`` with its ``content`` and
    ``encrypted_content``). ``billed_cost`` is sent as ``usage.cost`` (US
    dollars, as OpenRouter bills), in either API.
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
    compaction: dict[str, Any] | None = None
    billed_cost: float | None = None

    @classmethod
    def tool_call(cls, name: str, arguments: dict[str, Any], *, text: str = "", **kw: Any) -> WireReply:
        return cls(text=text, tool_calls=((name, arguments),), **kw)

    @classmethod
    def error(
        cls, status: int, message: str = "", *, retry_after: float | None = None, error_type: str | None = None
    ) -> WireReply:
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
        return cls(
            text=text, fault="stream_error", cut_after=after, error_type=error_type, message="overloaded mid-stream"
        )


_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_OPENAI_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_api_key",
    429: "rate_limit_exceeded",
    500: "server_error",
}


def error_body(api: Api, reply: WireReply) -> dict[str, Any]:
    if api == "anthropic":
        kind = reply.error_type or _ANTHROPIC_ERROR_TYPES.get(reply.status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": reply.message}}
    kind = reply.error_type or _OPENAI_ERROR_TYPES.get(reply.status, "server_error")
    return {"error": {"message": reply.message, "type": kind, "param": None, "code": kind}}


def sse_error(api: Api, reply: WireReply) -> bytes:
    body = error_body(api, replace(reply, status=500))
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


def _billed(reply: WireReply) -> dict[str, float]:
    return {} if reply.billed_cost is None else {"cost": reply.billed_cost}


def _anthropic_usage(reply: WireReply, output: int | None = None) -> dict[str, Any]:
    usage = reply.usage
    return {
        "input_tokens": usage.get("input", 0),
        "output_tokens": usage.get("output", 0) if output is None else output,
        "cache_creation_input_tokens": usage.get("cache_write", 0),
        "cache_read_input_tokens": usage.get("cache_read", 0),
        **_billed(reply),
    }


_COMPACTION_DELTA_FIELDS = ("content", "encrypted_content")


def _compaction_events(block: dict[str, Any]) -> list[bytes]:
    start = {k: v for k, v in block.items() if k not in _COMPACTION_DELTA_FIELDS}
    delta = {"type": "compaction_delta", **{k: block[k] for k in _COMPACTION_DELTA_FIELDS if k in block}}
    return [
        _sse({"type": "content_block_start", "index": 0, "content_block": start}, "content_block_start"),
        _sse({"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta"),
        _sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
    ]


def anthropic_message(reply: WireReply, model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = [reply.compaction] if reply.compaction else []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for number, (name, arguments) in enumerate(reply.tool_calls):
        content.append({"type": "tool_use", "id": f"toolu_{number:02d}", "name": name, "input": arguments})
    return {
        "id": "msg_wire",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _stop_reason("anthropic", reply),
        "stop_sequence": None,
        "usage": _anthropic_usage(reply),
    }


def anthropic_events(reply: WireReply, model: str) -> list[bytes]:
    start = {
        "id": "msg_wire",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": _anthropic_usage(reply, output=1),
    }
    events = [_sse({"type": "message_start", "message": start}, "message_start")]
    index = 0
    if reply.compaction:
        events += _compaction_events(reply.compaction)
        index = 1
    if reply.text:
        events.append(
            _sse(
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                "content_block_start",
            )
        )
        events.append(_sse({"type": "ping"}, "ping"))
        for piece in _pieces(reply.text):
            events.append(
                _sse(
                    {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}},
                    "content_block_delta",
                )
            )
        events.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1
    for number, (name, arguments) in enumerate(reply.tool_calls):
        block = {"type": "tool_use", "id": f"toolu_{number:02d}", "name": name, "input": {}}
        events.append(
            _sse({"type": "content_block_start", "index": index, "content_block": block}, "content_block_start")
        )
        text = json.dumps(arguments)
        for part in (text[: len(text) // 2], text[len(text) // 2 :]):
            delta = {"type": "input_json_delta", "partial_json": part}
            events.append(_sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"))
        events.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": _stop_reason("anthropic", reply), "stop_sequence": None},
        "usage": {"output_tokens": reply.usage.get("output", 0), **_billed(reply)},
    }
    events.append(_sse(delta, "message_delta"))
    events.append(_sse({"type": "message_stop"}, "message_stop"))
    return events


def _openai_usage(reply: WireReply) -> dict[str, Any]:
    usage = reply.usage
    cached = usage.get("cache_read", 0)
    prompt = usage.get("input", 0) + cached  # OpenAI's prompt_tokens include the cached ones
    output = usage.get("output", 0)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": output,
        "total_tokens": prompt + output,
        "prompt_tokens_details": {"cached_tokens": cached},
        **_billed(reply),
    }


def _openai_logprob(entry: dict[str, Any], top_n: int) -> dict[str, Any]:
    top = list((entry.get("top") or {entry["token"]: entry["logprob"]}).items())[:top_n]
    return {
        "token": entry["token"],
        "logprob": entry["logprob"],
        "bytes": list(entry["token"].encode()),
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
    return [
        {"id": f"call_{n:02d}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for n, (name, args) in enumerate(reply.tool_calls)
    ]


def openai_completion(reply: WireReply, model: str, body: Any) -> dict[str, Any]:
    wants, top_n = _wants_logprobs(body)
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = _openai_tool_calls(reply)
    logprobs = {"content": [_openai_logprob(e, top_n) for e in _logprob_entries(reply)]} if wants else None
    return {
        "id": "chatcmpl-wire",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "logprobs": logprobs, "finish_reason": _stop_reason("openai", reply)}
        ],
        "usage": _openai_usage(reply),
    }


def openai_events(reply: WireReply, model: str, body: Any) -> list[bytes]:
    wants, top_n = _wants_logprobs(body)

    def chunk(delta: dict[str, Any], finish: str | None = None, logprobs: Any = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish}
        return _sse(
            {
                "id": "chatcmpl-wire",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [choice],
            }
        )

    events = [chunk({"role": "assistant", "content": ""})]
    if wants:
        for entry in _logprob_entries(reply):
            events.append(chunk({"content": entry["token"]}, logprobs={"content": [_openai_logprob(entry, top_n)]}))
    else:
        for piece in _pieces(reply.text):
            events.append(chunk({"content": piece}))
    for number, call in enumerate(_openai_tool_calls(reply)):
        first = {
            "index": number,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        events.append(chunk({"tool_calls": [first]}))
        text = call["function"]["arguments"]
        for part in (text[: len(text) // 2], text[len(text) // 2 :]):
            events.append(chunk({"tool_calls": [{"index": number, "function": {"arguments": part}}]}))
    events.append(chunk({}, finish=_stop_reason("openai", reply)))
    if isinstance(body, dict) and (body.get("stream_options") or {}).get("include_usage"):
        events.append(
            _sse(
                {
                    "id": "chatcmpl-wire",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": model,
                    "choices": [],
                    "usage": _openai_usage(reply),
                }
            )
        )
    events.append(b"data: [DONE]\n\n")
    return events
