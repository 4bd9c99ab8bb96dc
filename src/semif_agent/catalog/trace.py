"""Spans of skill activity, one JSON line each, shaped like OpenTelemetry spans.

Each record::

    {"trace_id": "<32 hex>", "span_id": "<16 hex>", "parent_span_id": "<16 hex>" | null,
     "name": "skill.script", "kind": "internal",
     "start_time_unix_nano": 1700000000000000000, "end_time_unix_nano": ...,
     "status": {"code": "OK" | "ERROR", "message": "..."},
     "attributes": {"skill.id": "custom@x", ...},
     "resource": {"service.name": "semif-agent", "agent.id": "..."}}

A span opened while another of the same writer is open (in the same task)
becomes its child and shares its trace id. Long text attributes are cut to a
bounded excerpt (:func:`excerpt`). :class:`JsonlTraceWriter` appends each
record with one ``write`` on an ``O_APPEND`` descriptor, so concurrent writers
never interleave lines; :class:`MemoryTraceWriter` keeps records in memory.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import check_number, check_type

EXCERPT_CHARS = 2000
"""Longest text attribute kept in a span (head and tail, with a marker between)."""


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` cut to about ``limit`` characters, keeping its head and tail."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}…[{len(text) - limit} chars cut]…{text[-tail:]}"


@dataclass
class Span:
    """An open span; end it with :meth:`TraceWriter.end_span`."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    start_time_unix_nano: int
    attributes: dict[str, object] = field(default_factory=dict)


class TraceWriter:
    """Builds spans and hands each finished record to :meth:`emit` (which subclasses define)."""

    _keeps_spans = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._keeps_spans = any(
            getattr(cls, name) is not getattr(TraceWriter, name) for name in ("emit", "end_span", "start_span")
        )

    def __init__(
        self,
        *,
        service_name: str = "semif-agent",
        resource: dict[str, Any] | None = None,
        excerpt_chars: int = EXCERPT_CHARS,
    ) -> None:
        check_number("excerpt_chars", excerpt_chars, minimum=1, whole=True)
        self.resource = {"service.name": service_name, **(resource or {})}
        self.excerpt_chars = excerpt_chars
        self._current: ContextVar[Span | None] = ContextVar(f"semif_span_{id(self)}", default=None)

    @property
    def enabled(self) -> bool:
        """Whether finished spans go anywhere: False when :meth:`emit` drops them (and neither
        :meth:`start_span` nor :meth:`end_span` is overridden), so a caller may skip building them."""
        return self._keeps_spans

    def start_span(
        self, name: str, *, attributes: Mapping[str, object] | None = None, parent: Span | None = None
    ) -> Span:
        """Open a span, child of ``parent`` or of the span open in this context."""
        parent = parent or self._current.get()
        return Span(
            trace_id=parent.trace_id if parent else secrets.token_hex(16),
            span_id=secrets.token_hex(8),
            parent_span_id=parent.span_id if parent else None,
            name=name,
            start_time_unix_nano=time.time_ns(),
            attributes=dict(attributes or {}),
        )

    def end_span(
        self, span: Span, *, ok: bool = True, message: str = "", attributes: dict[str, object] | None = None
    ) -> dict[str, Any]:
        """Close ``span`` and emit its record; returns the record."""
        merged = {**span.attributes, **(attributes or {})}
        record = {
            "trace_id": span.trace_id,
            "span_id": span.span_id,
            "parent_span_id": span.parent_span_id,
            "name": span.name,
            "kind": "internal",
            "start_time_unix_nano": span.start_time_unix_nano,
            "end_time_unix_nano": time.time_ns(),
            "status": {"code": "OK" if ok else "ERROR", "message": excerpt(message, self.excerpt_chars)},
            "attributes": {key: self._bounded(value) for key, value in merged.items()},
            "resource": self.resource,
        }
        self.emit(record)
        return record

    @contextmanager
    def span(self, name: str, **attributes: object) -> Iterator[Span]:
        """Open a span for a block; it ends with status ERROR if the block raises."""
        opened = self.start_span(name, attributes=attributes)
        token = self._current.set(opened)
        try:
            yield opened
        except BaseException as exc:
            self.end_span(opened, ok=False, message=f"{type(exc).__name__}: {exc}")
            raise
        else:
            self.end_span(opened)
        finally:
            self._current.reset(token)

    def emit(self, record: dict[str, Any]) -> None:
        """Store one finished span record (the default drops it)."""

    def close(self) -> None:
        """Release what the writer holds."""

    def _bounded(self, value: object) -> object:
        if isinstance(value, str):
            return excerpt(value, self.excerpt_chars)
        if isinstance(value, (list, tuple)):
            return [self._bounded(item) for item in value[:50]]
        return value


class NullTraceWriter(TraceWriter):
    """A writer that keeps nothing (the runtime's writer before ``bind_workspace``)."""


class MemoryTraceWriter(TraceWriter):
    """Keeps the last ``maxlen`` records in :attr:`records` (for tests and embedding)."""

    def __init__(self, *, maxlen: int = 10_000, **kwargs: Any) -> None:
        check_number("maxlen", maxlen, whole=True)
        super().__init__(**kwargs)
        self.records: deque[dict[str, Any]] = deque(maxlen=maxlen)

    def emit(self, record: dict[str, Any]) -> None:
        self.records.append(record)


class JsonlTraceWriter(TraceWriter):
    """Appends one JSON line per span to ``path`` (created with its folder on first write)."""

    def __init__(self, path: str | os.PathLike[str], **kwargs: Any) -> None:
        check_type("path", path, (str, os.PathLike))
        super().__init__(**kwargs)
        self.path = Path(path)
        self._fd: int | None = None
        self._lock = threading.Lock()

    def emit(self, record: dict[str, Any]) -> None:
        line = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        with self._lock:
            if self._fd is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
            os.write(self._fd, line)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)  # unset when __init__ failed
        if fd is not None:
            os.close(fd)


def read_spans(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The span records of a JSONL trace file; a torn last line is skipped."""
    records: list[dict[str, Any]] = []
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return records
    for line in text.splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records
