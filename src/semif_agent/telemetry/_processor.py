"""OpenTelemetry as a processor of the span pipeline: each span of :mod:`semif_agent.spans`, made again with the SDK.

Set up by :func:`~._setup.configure` (and :func:`~._setup.configure_from`
when tracing is asked for): from then on every span of the process (a run,
its phases and decisions, an Agent's turns, model and tool calls, a skill's
scripts and hooks) is also an OpenTelemetry span, with the same name, times,
status and attributes, nested as it was. OpenTelemetry is imported here only
once a span arrives, that is once tracing is on.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ..spans import Span, SpanProcessor
from ._setup import flush, tracer
from ._spans import end_span, set_error, start_span

if TYPE_CHECKING:
    from opentelemetry.trace import Span as OtelSpan


class OpenTelemetryProcessor(SpanProcessor):
    """Makes each span an OpenTelemetry span of :func:`~._setup.tracer` (nothing while tracing is off).

    A span whose parent went through this processor nests under that parent's
    OpenTelemetry span; one without (a run's top span) nests under the
    application's current OpenTelemetry span, if any.
    """

    def __init__(self) -> None:
        self._open: dict[str, OtelSpan] = {}
        self._lock = threading.Lock()

    def on_span_start(self, span: Span) -> None:
        found = tracer()
        if found is None:
            return
        with self._lock:
            parent = self._open.get(span.parent_span_id) if span.parent_span_id else None
        made = start_span(
            found,
            span.name,
            parent=parent,
            start_ns=span.start_time_unix_nano,
            attributes=span.attributes,
            client=span.kind == "client",
        )
        with self._lock:
            self._open[span.span_id] = made

    def on_span_end(self, span: Span) -> None:
        with self._lock:
            made = self._open.pop(span.span_id, None)
        if made is None:
            return
        if not span.ok:
            kind = span.attributes.get("error.type")
            set_error(made, span.message, kind if isinstance(kind, str) else None)
        end_span(made, end_ns=span.end_time_unix_nano, attributes=span.attributes)

    def force_flush(self) -> None:
        flush()
