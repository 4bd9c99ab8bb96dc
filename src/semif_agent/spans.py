"""One source of spans, many processors: runs, turns, decisions, skill scripts and hooks all end here.

A span is opened and closed by a :class:`SpanSource` and handed, when it
starts and when it ends, to each :class:`SpanProcessor` of the process (and
to the source's own, if it has some): the SKILL.md runtime's JSONL file
(:class:`~semif_agent.catalog.JsonlTraceWriter`), a list in memory
(:class:`~semif_agent.catalog.MemoryTraceWriter`), OpenTelemetry (set up by
:mod:`semif_agent.telemetry`), or a processor of the application's own::

    from semif_agent.spans import SpanProcessor, add_span_processor

    class PrintNames(SpanProcessor):
        def on_span_end(self, span):
            print(span.name, span.attributes.get("skill.id"))

    add_span_processor(PrintNames())  # set_span_processors([...]) replaces them all

A span opened while another is current (in the same task) becomes its child
and shares its trace id. Work done for an open span elsewhere (a tool's task,
a hook run between two events of a turn) finds it by a key: the span is
opened with ``key=...`` and the work runs inside :func:`within` that key.
With no processor anywhere, a source is not :attr:`~SpanSource.enabled` and
callers skip building spans at all. This module imports only the standard
library, so every layer may emit.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TypedDict

from .errors import check_number, check_type

__all__ = [
    "EXCERPT_CHARS",
    "Span",
    "SpanProcessor",
    "SpanRecord",
    "SpanSource",
    "SpanStatus",
    "add_span_processor",
    "current_span",
    "excerpt",
    "remove_span_processor",
    "set_span_processors",
    "source",
    "span_processors",
    "use_span",
    "within",
]

log = logging.getLogger(__name__)

EXCERPT_CHARS = 2000
"""Longest text attribute kept in a span (head and tail, with a marker between)."""
SERVICE_NAME = "semif-agent"


class SpanStatus(TypedDict):
    """How a span ended: ``OK`` or ``ERROR``, and why."""

    code: str
    message: str


class SpanRecord(TypedDict):
    """A finished span as one JSON object (the shape of a line of a JSONL trace file)."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    kind: str
    start_time_unix_nano: int
    end_time_unix_nano: int | None
    status: SpanStatus
    attributes: dict[str, object]
    resource: dict[str, object]


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` cut to about ``limit`` characters, keeping its head and tail."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}…[{len(text) - limit} chars cut]…{text[-tail:]}"


def _failure_message(exc: BaseException) -> str:
    """The status message of a span its work ended by raising ``exc`` (``CancelledError`` when cancelled)."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass
class Span:
    """A span: open until :meth:`SpanSource.end_span` sets its end time and status."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    start_time_unix_nano: int
    attributes: dict[str, object] = field(default_factory=dict)
    kind: str = "internal"
    """``internal``, or ``client`` for a call to another service (a model call)."""
    resource: Mapping[str, object] = field(default_factory=dict)
    end_time_unix_nano: int | None = None
    ok: bool = True
    message: str = ""

    def to_record(self) -> SpanRecord:
        """The span as one JSON object, shaped like an OpenTelemetry span."""
        return {
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "parent_span_id": self.parent_span_id,
            "name": self.name,
            "kind": self.kind,
            "start_time_unix_nano": self.start_time_unix_nano,
            "end_time_unix_nano": self.end_time_unix_nano,
            "status": {"code": "OK" if self.ok else "ERROR", "message": self.message},
            "attributes": dict(self.attributes),
            "resource": dict(self.resource),
        }


class SpanProcessor:
    """Told of each span as it starts and ends; subclasses define what they need (each method does nothing here).

    A processor is called in the thread and task that opened or closed the
    span, so it should be quick; one that raises is logged and skipped.
    """

    def on_span_start(self, span: Span) -> None:
        """``span`` began (its attributes are those known so far)."""

    def on_span_end(self, span: Span) -> None:
        """``span`` ended: its end time, status and every attribute are set."""

    def force_flush(self) -> None:
        """Hand on every span ended so far (a processor that batches)."""

    def shutdown(self) -> None:
        """Release what the processor holds; called when it is replaced."""


_processors: tuple[SpanProcessor, ...] = ()
_processors_lock = threading.Lock()


def add_span_processor(processor: SpanProcessor) -> None:
    """Send every span of the process to ``processor`` too (after those already there; added once)."""
    global _processors
    check_type("processor", processor, SpanProcessor)
    with _processors_lock:
        if not any(p is processor for p in _processors):
            _processors = (*_processors, processor)


def remove_span_processor(processor: SpanProcessor) -> None:
    """Stop sending spans to ``processor`` (nothing if it was not there); it is not shut down."""
    global _processors
    with _processors_lock:
        _processors = tuple(p for p in _processors if p is not processor)


def set_span_processors(processors: Iterable[SpanProcessor]) -> None:
    """Replace the process's processors with ``processors`` (the ones replaced are shut down)."""
    global _processors
    chosen = tuple(processors)
    for processor in chosen:
        check_type("processor", processor, SpanProcessor)
    with _processors_lock:
        replaced, _processors = _processors, chosen
    for processor in replaced:
        if not any(p is processor for p in chosen):
            _call(processor, "shutdown")


def span_processors() -> tuple[SpanProcessor, ...]:
    """The processors every span of the process goes to, in order."""
    return _processors


def _call(processor: SpanProcessor, method: str, *args: object) -> None:
    try:
        getattr(processor, method)(*args)
    except Exception:  # a processor never breaks the work it watches
        log.exception("span processor %s.%s failed", type(processor).__name__, method)


_current: ContextVar[Span | None] = ContextVar("semif_current_span", default=None)
_within: ContextVar[tuple[str, ...]] = ContextVar("semif_span_keys", default=())
_keyed: dict[str, Span] = {}
_keyed_lock = threading.Lock()


def current_span() -> Span | None:
    """The span new spans nest under here: the current one, else the open span of the innermost :func:`within` key."""
    span = _current.get()
    if span is not None:
        return span
    for key in _within.get():
        found = _keyed.get(key)
        if found is not None:
            return found
    return None


@contextmanager
def use_span(span: Span) -> Iterator[Span]:
    """Make ``span`` current for a block (spans opened in it nest under it); it does not end it."""
    token = _current.set(span)
    try:
        yield span
    finally:
        _current.reset(token)


@contextmanager
def within(key: str) -> Iterator[None]:
    """Run a block as work of the span opened with ``key`` (when one is open): its spans nest under that one."""
    token = _within.set((key, *_within.get()))
    try:
        yield
    finally:
        _within.reset(token)


class SpanSource:
    """Opens and closes spans and hands them to its own ``processors``, then to the process's.

    ``service_name`` and ``resource`` describe who emits (each record's
    ``resource``); text attributes are cut to ``excerpt_chars``.
    """

    def __init__(
        self,
        *,
        service_name: str = SERVICE_NAME,
        resource: Mapping[str, object] | None = None,
        excerpt_chars: int = EXCERPT_CHARS,
        processors: Iterable[SpanProcessor] = (),
    ) -> None:
        check_number("excerpt_chars", excerpt_chars, minimum=1, whole=True)
        self.resource: dict[str, object] = {"service.name": service_name, **(resource or {})}
        self.excerpt_chars = excerpt_chars
        self._own = tuple(processors)

    @property
    def processors(self) -> tuple[SpanProcessor, ...]:
        """Where this source's spans go: its own processors, then the process's (each once)."""
        own = self._own
        return own + tuple(p for p in _processors if not any(p is o for o in own))

    @property
    def enabled(self) -> bool:
        """Whether spans go anywhere; when not, a caller may skip building them."""
        return bool(self._own or _processors)

    def start_span(
        self,
        name: str,
        *,
        attributes: Mapping[str, object] | None = None,
        parent: Span | None = None,
        start_ns: int | None = None,
        kind: str = "internal",
        key: str | None = None,
    ) -> Span:
        """Open a span (at ``start_ns``, else now), child of ``parent`` or of :func:`current_span`; with ``key``,
        work run :func:`within` that key nests under it until it ends."""
        parent = parent or current_span()
        span = Span(
            trace_id=parent.trace_id if parent else secrets.token_hex(16),
            span_id=secrets.token_hex(8),
            parent_span_id=parent.span_id if parent else None,
            name=name,
            start_time_unix_nano=time.time_ns() if start_ns is None else start_ns,
            attributes=dict(attributes or {}),
            kind=kind,
            resource=self.resource,
        )
        if key is not None:
            with _keyed_lock:
                _keyed[key] = span
        for processor in self.processors:
            _call(processor, "on_span_start", span)
        return span

    def end_span(
        self,
        span: Span,
        *,
        ok: bool = True,
        message: str = "",
        attributes: Mapping[str, object] | None = None,
        end_ns: int | None = None,
    ) -> SpanRecord:
        """Close ``span`` (at ``end_ns``, else now), hand it to the processors, and return its record."""
        merged = {**span.attributes, **(attributes or {})}
        span.attributes = {key: self._bounded(value) for key, value in merged.items()}
        span.end_time_unix_nano = time.time_ns() if end_ns is None else end_ns
        span.ok, span.message = ok, excerpt(message, self.excerpt_chars)
        with _keyed_lock:
            for key in [k for k, v in _keyed.items() if v is span]:
                del _keyed[key]
        for processor in self.processors:
            _call(processor, "on_span_end", span)
        return span.to_record()

    @contextmanager
    def opened(
        self, name: str, *, attributes: Mapping[str, object] | None = None, kind: str = "internal"
    ) -> Iterator[Span]:
        """Open a span for a block that ends it (with its own status and attributes) when the work is done.

        Whatever way the block leaves, the span does not stay open: if the
        block raises (a cancelled task included) before ending it, it ends
        with status ERROR naming the exception; if the block returns without
        ending it, it ends OK. Processors that hold open spans (OpenTelemetry)
        so never keep one for the life of the process.
        """
        opened = self.start_span(name, attributes=attributes, kind=kind)
        try:
            yield opened
        except BaseException as exc:
            if opened.end_time_unix_nano is None:
                self.end_span(opened, ok=False, message=_failure_message(exc))
            raise
        if opened.end_time_unix_nano is None:
            self.end_span(opened)

    @contextmanager
    def span(self, name: str, **attributes: object) -> Iterator[Span]:
        """Open a span for a block, current while it runs; it ends with status ERROR if the block raises."""
        with self.opened(name, attributes=attributes) as opened, use_span(opened):
            yield opened

    def _bounded(self, value: object) -> object:
        if isinstance(value, str):
            return excerpt(value, self.excerpt_chars)
        if isinstance(value, (list, tuple)):
            return [self._bounded(item) for item in value[:50]]
        return value


_source = SpanSource()


def source() -> SpanSource:
    """The process's span source (no processors of its own): what runs, turns and decisions emit to."""
    return _source
