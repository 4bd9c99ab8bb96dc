"""Spans of skill activity, one JSON line each, shaped like OpenTelemetry spans.

Each record::

    {"trace_id": "<32 hex>", "span_id": "<16 hex>", "parent_span_id": "<16 hex>" | null,
     "name": "skill.script", "kind": "internal",
     "start_time_unix_nano": 1700000000000000000, "end_time_unix_nano": ...,
     "status": {"code": "OK" | "ERROR", "message": "..."},
     "attributes": {"skill.id": "custom@x", ...},
     "resource": {"service.name": "semif-agent", "agent.id": "..."}}

A writer is a :class:`~semif_agent.spans.SpanSource` that is also its own
first processor: the spans the runtime opens go to the writer's
:meth:`~TraceWriter.emit`, then to every processor of the process
(OpenTelemetry among them when tracing is on), so a skill script's span sits
in the workspace's file and in the trace of the run or turn that ran it. A
span opened while another is current (in the same task) becomes its child and
shares its trace id. Long text attributes are cut to a bounded excerpt
(:func:`excerpt`). :class:`JsonlTraceWriter` appends each record with one
``write`` on an ``O_APPEND`` descriptor, so concurrent writers never
interleave lines; :class:`MemoryTraceWriter` keeps records in memory. Both
are processors too: ``add_span_processor(MemoryTraceWriter())`` keeps every
span of the process.
"""

from __future__ import annotations

import json
import os
import threading
from collections import deque
from pathlib import Path
from typing import TypedDict, Unpack

from ..errors import check_number, check_type
from ..spans import EXCERPT_CHARS, SERVICE_NAME, Span, SpanProcessor, SpanRecord, SpanSource, excerpt

__all__ = [
    "EXCERPT_CHARS",
    "JsonlTraceWriter",
    "MemoryTraceWriter",
    "NullTraceWriter",
    "Span",
    "TraceWriter",
    "excerpt",
    "read_spans",
]


class WriterOptions(TypedDict, total=False):
    """What every writer takes besides its own arguments (see :class:`TraceWriter`)."""

    service_name: str
    resource: dict[str, object] | None
    excerpt_chars: int


class TraceWriter(SpanSource, SpanProcessor):
    """A span source that hands each finished record to :meth:`emit` (which subclasses define), then to the
    process's processors."""

    _keeps_spans = False

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls._keeps_spans = any(
            getattr(cls, name) is not getattr(TraceWriter, name)
            for name in ("emit", "on_span_end", "end_span", "start_span")
        )

    def __init__(
        self,
        *,
        service_name: str = SERVICE_NAME,
        resource: dict[str, object] | None = None,
        excerpt_chars: int = EXCERPT_CHARS,
    ) -> None:
        super().__init__(
            service_name=service_name,
            resource=resource,
            excerpt_chars=excerpt_chars,
            processors=(self,) if self._keeps_spans else (),
        )

    def on_span_end(self, span: Span) -> None:
        self.emit(span.to_record())

    def emit(self, record: SpanRecord) -> None:
        """Store one finished span record (the default drops it)."""

    def close(self) -> None:
        """Release what the writer holds."""


class NullTraceWriter(TraceWriter):
    """A writer that keeps nothing (the runtime's writer before ``bind_workspace``)."""


class MemoryTraceWriter(TraceWriter):
    """Keeps the last ``maxlen`` records in :attr:`records` (for tests and embedding)."""

    def __init__(self, *, maxlen: int = 10_000, **options: Unpack[WriterOptions]) -> None:
        check_number("maxlen", maxlen, whole=True)
        super().__init__(**options)
        self.records: deque[SpanRecord] = deque(maxlen=maxlen)

    def emit(self, record: SpanRecord) -> None:
        self.records.append(record)


class JsonlTraceWriter(TraceWriter):
    """Appends one JSON line per span to ``path`` (created with its folder on first write)."""

    def __init__(self, path: str | os.PathLike[str], **options: Unpack[WriterOptions]) -> None:
        check_type("path", path, (str, os.PathLike))
        super().__init__(**options)
        self.path = Path(path)
        self._fd: int | None = None
        self._lock = threading.Lock()

    def emit(self, record: SpanRecord) -> None:
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


def read_spans(path: str | os.PathLike[str]) -> list[SpanRecord]:
    """The span records of a JSONL trace file; a torn last line is skipped."""
    records: list[SpanRecord] = []
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
