"""Making spans: the few calls the loop and the Agent need, so neither imports OpenTelemetry itself.

Only called with a tracer from :func:`~._setup.tracer`, that is when tracing
is on: OpenTelemetry is imported here, inside the calls, never before.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .._text import clip

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

TEXT_KEPT = 1000  # characters of a text attribute (a request, a question, a tool's result) kept on a span
AttributeValue = str | bool | int | float | list[str] | list[bool] | list[int] | list[float]


def now_ns() -> int:
    """Now, in nanoseconds since the epoch (a span's clock)."""
    return time.time_ns()


def attribute_value(value: object) -> AttributeValue | None:
    """``value`` as an OpenTelemetry attribute: scalars as they are, text clipped, the rest as JSON; None drops it."""
    if value is None:
        return None
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return clip(value, TEXT_KEPT)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return [clip(v, TEXT_KEPT) for v in value]
    return clip(json.dumps(value, ensure_ascii=False, default=str), TEXT_KEPT)


def _attributes(attributes: Mapping[str, object] | None) -> dict[str, AttributeValue]:
    kept: dict[str, AttributeValue] = {}
    for key, value in (attributes or {}).items():
        shown = attribute_value(value)
        if shown is not None:
            kept[key] = shown
    return kept


def start_span(
    tracer: Tracer,
    name: str,
    *,
    parent: Span | None = None,
    start_ns: int | None = None,
    attributes: Mapping[str, object] | None = None,
    client: bool = False,
) -> Span:
    """A span started (at ``start_ns``, else now) under ``parent``, else under the current span; end it yourself."""
    from opentelemetry import trace

    context = trace.set_span_in_context(parent) if parent is not None else None
    return tracer.start_span(
        name,
        context=context,
        kind=trace.SpanKind.CLIENT if client else trace.SpanKind.INTERNAL,
        attributes=_attributes(attributes),
        start_time=start_ns,
    )


def end_span(span: Span, *, end_ns: int | None = None, attributes: Mapping[str, object] | None = None) -> None:
    """Set ``attributes`` on ``span`` and end it (at ``end_ns``, else now)."""
    kept = _attributes(attributes)
    if kept:
        span.set_attributes(kept)
    span.end(end_time=end_ns)


def set_error(span: Span, description: str, error_type: str | None = None) -> None:
    """Mark ``span`` failed, with the ``error.type`` attribute the conventions name."""
    from opentelemetry.trace import Status, StatusCode

    span.set_status(Status(StatusCode.ERROR, clip(description, TEXT_KEPT)))
    span.set_attribute("error.type", error_type or "error")
