"""A log of model calls: every request and answer (or error) as one JSON line.

:class:`LoggedProvider` wraps any provider and implements the same protocol,
keeping one row per call: the messages, the tool names, the answer (text,
tool calls, stop reason), usage with cost, latency and the error if the call
failed. With the decision log, it makes every model call a training row too.
The file is written like the decision log (append-only, crash-safe); turn it
off with ``[log] model_calls = false``.

Rows are written as each call ends, except inside :meth:`LoggedProvider.batching`
(the agent holds it for a turn): there they are kept and written together,
one write for many rows, when the block ends however it ends (an error, a
cancelled turn), when a call fails, when :data:`BATCH_ROWS` rows are waiting
or the first of them has waited :data:`BATCH_SECONDS` (a timer on the
caller's event loop, so a long tool run does not hold them), and at the
interpreter's exit. Only a process killed outright (``SIGKILL``,
``os._exit``) can lose rows: those of the batch in flight.

A conversation is logged as it grows, not again whole at every call: when a
call's messages begin with all the messages of a call logged shortly before
(the loop's next round), its row holds only the new ones, with
``"continues"`` naming that row's ``call_id`` and ``"earlier_messages"``
counting the messages it leaves out; its ``"tools"`` are left out too when
they are the same as that row's. :func:`read_calls` gives the rows back
whole.
"""

from __future__ import annotations

import asyncio
import atexit
import itertools
import os
import threading
import time
import uuid
import weakref
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

from ..records import DecisionLog, ModelCallRow
from ..records.kind_names import MODEL_CALL_KIND
from .messages import Message, message_to_dict
from .protocol import LLMProvider, ModelRequest, ProviderWrapper, batched, closing_stream
from .responses import Response, StopChunk, StreamChunk

if TYPE_CHECKING:
    from ..workspace import Workspace

RECENT_CALLS = 8  # conversations a logger follows at once (agents sharing one provider)
BATCH_ROWS = 64  # rows held inside batching() before they are written anyway
BATCH_SECONDS = 1.0  # how long the first held row may wait for others


class LoggedProvider(ProviderWrapper):
    """``inner``, with one row appended to ``log`` per call; ``context`` is added to every row."""

    def __init__(self, inner: LLMProvider, log: DecisionLog, *, context: Mapping[str, object] | None = None) -> None:
        super().__init__(inner)
        self.log = log
        self.context = dict(context or {})
        self._recent: deque[tuple[str, ModelRequest]] = deque(maxlen=RECENT_CALLS)
        self._pending: list[_Call] = []
        self._pending_since = 0.0
        self._timer: asyncio.TimerHandle | None = None  # writes the held rows BATCH_SECONDS after the first
        self._holds = 0
        self._lock = threading.Lock()

    def with_context(self, **context: object) -> LoggedProvider:
        """The same provider and log, with ``context`` added to every row (e.g. the ``run_id`` a call belongs to)."""
        return LoggedProvider(self.next, self.log, context={**self.context, **context})

    def batching(self) -> _Batch:
        """A block within which rows are held and written together (see the module's description)."""
        return _Batch(self)

    def flush(self) -> None:
        """Write the rows held so far."""
        with self._lock:
            calls, self._pending = self._pending, []
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        if not calls:
            return
        rows = [call.row() for call in calls]
        try:
            self.log.extend(rows)
        except Exception:  # noqa: BLE001 - a log that cannot be written never breaks the call
            self._write_apart(rows)

    def _write_apart(self, rows: list[ModelCallRow]) -> None:
        """Each row alone, so that one that cannot be written loses only itself; the next call's row is whole."""
        for row in rows:
            try:
                self.log.append(row)
            except Exception:  # noqa: BLE001 - a log that cannot be written never breaks the call
                self._recent.clear()

    async def request(self, request: ModelRequest) -> Response:
        start = time.perf_counter()
        try:
            response = await self.next.request(request)
        except BaseException as exc:
            self._keep(request, None, start, exc)
            raise
        self._keep(request, response, start)
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
            self._keep(request, response, start, exc)
            raise
        self._keep(request, response, start)

    def _keep(
        self, request: ModelRequest, response: Response | None, start: float, error: BaseException | None = None
    ) -> None:
        """Hold this call's row, or write it now (outside a batch, on an error, when the batch is due)."""
        now = time.perf_counter()
        call = _Call(
            call_id=_call_ids.next(),
            request=request,
            response=response,
            latency_ms=round((now - start) * 1000, 3),
            error=error,
            earlier=self._continues(request.messages),
            provider=self.provider_name,
            model=self.model_id,
            context=dict(self.context),
        )
        self._recent.append((call.call_id, request))
        with self._lock:
            first = not self._pending
            if first:
                self._pending_since = now
            self._pending.append(call)
            due = (
                not self._holds
                or error is not None
                or len(self._pending) >= BATCH_ROWS
                or now - self._pending_since >= BATCH_SECONDS
            )
            if first and not due:
                _holding.add(self)
                # on the caller's loop: the rows are written even if no other call comes (a long tool run)
                self._timer = asyncio.get_running_loop().call_later(BATCH_SECONDS, self.flush)
        if due:
            self.flush()

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


@dataclass(slots=True, kw_only=True)
class _Call:
    """One call as it ended: its row is built when it is written."""

    call_id: str
    request: ModelRequest
    response: Response | None
    latency_ms: float
    error: BaseException | None
    earlier: tuple[str, ModelRequest] | None  # the recent call it continues: its id and request
    provider: str
    model: str
    context: Mapping[str, object]

    def row(self) -> ModelCallRow:
        request, earlier = self.request, self.earlier
        messages = request.messages if earlier is None else request.messages[len(earlier[1].messages) :]
        answer = self.response.to_dict() if self.response is not None else None
        error = self.error
        return ModelCallRow(
            call_id=self.call_id,
            provider=self.provider,
            model=self.model,
            messages=[message_to_dict(m) for m in messages],
            tool_choice=request.tool_choice,
            latency_ms=self.latency_ms,
            tools=[t.name for t in request.tools] if earlier is None or request.tools != earlier[1].tools else None,
            continues=earlier[0] if earlier is not None else None,
            earlier_messages=len(earlier[1].messages) if earlier is not None else None,
            options=dict(request.options) if request.options else None,
            response=answer,
            usage=answer.pop("usage") if answer is not None else None,
            error=f"{type(error).__name__}: {error}"[:500] if error is not None else None,
            context=dict(self.context),
        )


class _Batch:
    """:meth:`LoggedProvider.batching`'s block (and its inner provider's): the rows held are written when it ends."""

    def __init__(self, provider: LoggedProvider) -> None:
        self._provider = provider
        self._inner = batched(provider.inner)

    def __enter__(self) -> None:
        provider = self._provider
        with provider._lock:
            provider._holds += 1
        self._inner.__enter__()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        provider = self._provider
        try:
            self._inner.__exit__(kind, error, trace)
        finally:
            with provider._lock:
                provider._holds -= 1
            provider.flush()


class _CallIds:
    """Unique call ids, cheaply: a random prefix per process and a counter (32 hex digits, as a uuid4's)."""

    def __init__(self) -> None:
        self._renew()
        os.register_at_fork(after_in_child=self._renew)

    def _renew(self) -> None:
        self._prefix = uuid.uuid4().hex[:20]
        self._counter = itertools.count()

    def next(self) -> str:
        return f"{self._prefix}{next(self._counter):012x}"


_call_ids = _CallIds()
_holding: weakref.WeakSet[LoggedProvider] = weakref.WeakSet()  # loggers that held rows (flushed at exit)


@atexit.register
def _flush_all() -> None:
    for provider in list(_holding):
        provider.flush()


def _forget_held_rows() -> None:
    """In a forked child: the parent writes the rows it held, the child must not write them again."""
    for provider in list(_holding):
        provider._pending, provider._lock, provider._timer = [], threading.Lock(), None


os.register_at_fork(after_in_child=_forget_held_rows)


def read_calls(log: DecisionLog) -> Iterator[ModelCallRow]:
    """The log's model-call rows, each with its messages whole (a continuing row's earlier ones put back).

    A row continuing one that is not in the file (cut off, or lost to a torn
    line), and any row continuing that one, is given as it was written.
    """
    whole: dict[str, ModelCallRow] = {}
    for row in log.read(kinds=(MODEL_CALL_KIND,)):
        if not isinstance(row, ModelCallRow):
            continue
        if row.continues is not None:
            earlier = whole.get(row.continues)
            if earlier is None or row.earlier_messages is None:
                yield row  # its beginning is lost: so is the beginning of any row continuing it
                continue
            row = row.model_copy(
                update={
                    "messages": earlier.messages[: row.earlier_messages] + row.messages,
                    "tools": row.tools if row.tools is not None else (earlier.tools or []),
                    "continues": None,
                    "earlier_messages": None,
                }
            )
        if row.call_id:
            whole[row.call_id] = row
        yield row


def logged(provider: LLMProvider, workspace: Workspace, **context: object) -> LLMProvider:
    """``provider`` wrapped to log its calls in ``workspace``'s model-call log, unless that log is off."""
    settings = workspace.settings.log
    if not settings.enabled or not settings.model_calls:
        return provider
    return LoggedProvider(provider, DecisionLog(workspace.model_calls_path, fsync=settings.fsync), context=context)
