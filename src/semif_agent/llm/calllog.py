"""A log of model calls: every request and answer (or error) as one JSON line.

:class:`LoggedProvider` wraps any provider and implements the same protocol,
appending one row per call: the messages, the tool names, the answer (text,
tool calls, stop reason), usage with cost, latency and the error if the call
failed. With the decision log, it makes every model call a training row too.
The file is written like the decision log (append-only, crash-safe); turn it
off with ``[log] model_calls = false``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from ..engine.log import DecisionLog
from .protocol import BaseProvider, LLMProvider, ModelRequest
from .responses import Response, StopChunk, StreamChunk


class LoggedProvider(BaseProvider):
    """``inner``, with one row appended to ``log`` per call; ``context`` is added to every row."""

    def __init__(self, inner: LLMProvider, log: DecisionLog, *, context: Mapping[str, Any] | None = None) -> None:
        self.inner = inner
        self.log = log
        self.context = dict(context or {})
        self.model_id = inner.model_id
        self.provider_name = inner.provider_name
        self.supports_logprobs = bool(getattr(inner, "supports_logprobs", False))
        self.pricing = getattr(inner, "pricing", {})

    async def _ainvoke(self, request: ModelRequest) -> Response:
        start = time.perf_counter()
        try:
            response = await self.inner.ainvoke(list(request.messages), **request.kwargs())
        except BaseException as exc:
            self._write(request, None, start, exc)
            raise
        self._write(request, response, start)
        return response

    async def _astream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        start = time.perf_counter()
        response: Response | None = None
        try:
            async for chunk in self.inner.astream(list(request.messages), **request.kwargs()):
                if isinstance(chunk, StopChunk):
                    response = chunk.response
                yield chunk
        except BaseException as exc:
            self._write(request, response, start, exc)
            raise
        self._write(request, response, start)

    def _write(self, request: ModelRequest, response: Response | None, start: float, error: BaseException | None = None) -> None:
        row: dict[str, Any] = {
            **self.context,
            "kind": "model_call",
            "provider": self.provider_name,
            "model": self.model_id,
            "messages": [dataclasses.asdict(m) for m in request.messages],
            "tools": [t.name for t in request.tools],
            "tool_choice": request.tool_choice,
            "response": None,
            "latency_ms": round((time.perf_counter() - start) * 1000, 3),
        }
        if response is not None:
            answer = response.to_dict()
            row["usage"] = answer.pop("usage")
            row["response"] = answer
        if error is not None:
            row["error"] = f"{type(error).__name__}: {error}"[:500]
        try:
            self.log.append(row)
        except Exception:  # noqa: BLE001 - a log that cannot be written never breaks the call
            pass

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()

    def __repr__(self) -> str:
        return f"<LoggedProvider {self.inner!r} -> {self.log.path}>"


def logged(provider: LLMProvider, workspace: Any, **context: Any) -> LLMProvider:
    """``provider`` wrapped to log its calls in ``workspace``'s model-call log, unless that log is off."""
    settings = workspace.settings.get("log", {})
    if not settings.get("enabled", True) or not settings.get("model_calls", True):
        return provider
    return LoggedProvider(provider, DecisionLog(workspace.model_calls_path, fsync=bool(settings.get("fsync"))),
                          context=context)
