"""A log of model calls: every request and answer (or error) as one JSON line.

:class:`LoggedProvider` wraps any provider and implements the same protocol,
appending one row per call: the messages, the tool names, the answer (text,
tool calls, stop reason), usage with cost, latency and the error if the call
failed. With the decision log, it makes every model call a training row too.
The file is written like the decision log (append-only, crash-safe); turn it
off with ``[log] model_calls = false``.

A conversation is logged as it grows, not again whole at every call: when a
call's messages begin with all the messages of a call logged shortly before
(the loop's next round), its row holds only the new ones, with
``"continues"`` naming that row's ``call_id`` and ``"earlier_messages"``
counting the messages it leaves out; its ``"tools"`` are left out too when
they are the same as that row's. :func:`read_calls` gives the rows back
whole.
"""

from __future__ import annotations

import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from ..records import DecisionLog, ModelCallRow
from .messages import Message, message_to_dict
from .protocol import LLMProvider, ModelRequest, ProviderWrapper, closing_stream
from .responses import Response, StopChunk, StreamChunk

RECENT_CALLS = 8  # conversations a logger follows at once (agents sharing one provider)


class LoggedProvider(ProviderWrapper):
    """``inner``, with one row appended to ``log`` per call; ``context`` is added to every row."""

    def __init__(self, inner: LLMProvider, log: DecisionLog, *, context: Mapping[str, object] | None = None) -> None:
        super().__init__(inner)
        self.log = log
        self.context = dict(context or {})
        self._recent: deque[tuple[str, ModelRequest]] = deque(maxlen=RECENT_CALLS)

    def with_context(self, **context: object) -> LoggedProvider:
        """The same provider and log, with ``context`` added to every row (e.g. the ``run_id`` a call belongs to)."""
        return LoggedProvider(self.next, self.log, context={**self.context, **context})

    async def request(self, request: ModelRequest) -> Response:
        start = time.perf_counter()
        try:
            response = await self.next.request(request)
        except BaseException as exc:
            self._write(request, None, start, exc)
            raise
        self._write(request, response, start)
        return response

    async def request_stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        start = time.perf_counter()
        response: Response | None = None
        try:
            async with closing_stream(self.next.request_stream(request)) as chunks:
                async for chunk in chunks:
                    if isinstance(chunk, StopChunk):
                        response = chunk.response
                    yield chunk
        except BaseException as exc:
            self._write(request, response, start, exc)
            raise
        self._write(request, response, start)

    def _write(
        self, request: ModelRequest, response: Response | None, start: float, error: BaseException | None = None
    ) -> None:
        call_id = uuid.uuid4().hex
        messages = request.messages
        earlier = self._continues(messages)
        if earlier is not None:
            messages = messages[len(earlier[1].messages) :]
        answer = response.to_dict() if response is not None else None
        usage = answer.pop("usage") if answer is not None else None
        row = ModelCallRow(
            call_id=call_id,
            provider=self.provider_name,
            model=self.model_id,
            messages=[message_to_dict(m) for m in messages],
            tool_choice=request.tool_choice,
            latency_ms=round((time.perf_counter() - start) * 1000, 3),
            tools=[t.name for t in request.tools] if earlier is None or request.tools != earlier[1].tools else None,
            continues=earlier[0] if earlier is not None else None,
            earlier_messages=len(earlier[1].messages) if earlier is not None else None,
            options=dict(request.options) if request.options else None,
            response=answer,
            usage=usage,
            error=f"{type(error).__name__}: {error}"[:500] if error is not None else None,
            context=self.context,
        )
        try:
            self.log.append(row)
        except Exception:  # noqa: BLE001 - a log that cannot be written never breaks the call
            return
        self._recent.append((call_id, request))

    def _continues(self, messages: tuple[Message, ...]) -> tuple[str, ModelRequest] | None:
        """The latest recent call whose messages begin ``messages``: its id and request."""
        for call_id, earlier in reversed(self._recent):
            before = earlier.messages
            count = len(before)
            # the last message first (one comparison rules out most), then all (identical objects compare at C speed)
            if 0 < count <= len(messages) and messages[count - 1] == before[-1] and messages[:count] == before:
                return call_id, earlier
        return None

    def __repr__(self) -> str:
        return f"<LoggedProvider {self.inner!r} -> {self.log.path}>"


def read_calls(log: DecisionLog) -> Iterator[dict[str, Any]]:
    """The log's model-call rows, each with its messages whole (a continuing row's earlier ones put back).

    A row continuing one that is not in the file (cut off, or lost to a torn
    line), and any row continuing that one, is given as it was written.
    """
    whole: dict[str, dict[str, Any]] = {}
    for row in log.read():
        if "continues" in row:
            earlier = whole.get(row["continues"])
            if earlier is None or not isinstance(row.get("earlier_messages"), int):
                yield row  # its beginning is lost: so is the beginning of any row continuing it
                continue
            row = {**row, "messages": earlier["messages"][: row["earlier_messages"]] + list(row.get("messages") or ())}
            row.setdefault("tools", earlier["tools"])
            del row["continues"], row["earlier_messages"]
        if isinstance(row.get("call_id"), str):
            whole[row["call_id"]] = {"messages": row.get("messages") or [], "tools": row.get("tools", [])}
        yield row


def logged(provider: LLMProvider, workspace: Any, **context: object) -> LLMProvider:
    """``provider`` wrapped to log its calls in ``workspace``'s model-call log, unless that log is off."""
    settings = workspace.settings.get("log", {})
    if not settings.get("enabled", True) or not settings.get("model_calls", True):
        return provider
    return LoggedProvider(
        provider, DecisionLog(workspace.model_calls_path, fsync=bool(settings.get("fsync"))), context=context
    )
