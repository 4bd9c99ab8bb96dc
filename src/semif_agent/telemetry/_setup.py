"""Whether spans are recorded, and where they go: the one tracer provider of the process, set up once, lazily.

The provider is process-wide by nature (OpenTelemetry's own is a global):
it is held here, not on any agent or runner, and every agent and runner of
the process shares it. Nothing here imports OpenTelemetry until tracing is
asked for. Once it is on, the process's span pipeline (:mod:`semif_agent.spans`)
gets an :class:`OpenTelemetryProcessor`: each span of the process (a run,
its phases and decisions, an Agent's turns, model and tool calls, a skill's
scripts and hooks) is made again as an OpenTelemetry span, with the same
name, times, status and attributes, nested as it was.
"""

from __future__ import annotations

import atexit
import importlib.metadata
import os
import sys
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import spans
from ._spans import end_span, set_error, start_span

if TYPE_CHECKING:
    from opentelemetry import trace as otel_trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Span as OtelSpan
    from opentelemetry.trace import Tracer

    from ._leaving import LeavingExporter

DEFAULT_ENDPOINT = "http://localhost:4318"
"""Where an OTLP/HTTP receiver listens unless told otherwise (Phoenix, Jaeger and the Collector all do)."""
OTEL_EXTRA = "pip install 'semif-agent[otel]'"
SERVICE_NAME = "semif-agent"
EXPORT_TIMEOUT = 3.0
"""Seconds one export (a batch of spans) may take, retries included, unless ``OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT``
says."""
SHUTDOWN_TIMEOUT = 2.0
"""Seconds the spans still queued when the process leaves (or :func:`shutdown` is called) may take to go out; what
is left then is dropped. With the export under way, a slow receiver holds the exit this plus one export at most."""
_TIMEOUT_VARIABLES = {"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"}
_TRACES_PATH = "/v1/traces"
_SCOPE = "semif_agent"


@dataclass
class _Tracing:
    """The process's tracing: our provider (when we made one) and what was tried already."""

    provider: TracerProvider | None = None
    tracer: Tracer | None = None
    settled: bool = False  # configure_from decided once; later calls keep what it decided
    warned: bool = False
    processor: spans.SpanProcessor | None = None  # ours in the span pipeline, while tracing is on
    leaving: LeavingExporter | None = None  # the OTLP exporter of our provider, told when the process leaves
    exit_hooked: bool = False  # shutdown() runs at exit


_tracing = _Tracing()


def telemetry_endpoint(
    table: Mapping[str, object] | None = None, environ: Mapping[str, str] | None = None
) -> str | None:
    """The OTLP/HTTP traces URL that ``[telemetry]`` (``table``) and the environment ask for; ``None``: tracing off.

    ``enabled = false`` and ``OTEL_SDK_DISABLED=true`` turn it off whatever else is set. Otherwise the first of:
    ``otlp_endpoint``, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (a full URL, taken as it is),
    ``OTEL_EXPORTER_OTLP_ENDPOINT``, and :data:`DEFAULT_ENDPOINT` when ``enabled = true``; a base URL gets
    ``/v1/traces`` added, as the OTLP exporters add it.
    """
    table = table or {}
    env = os.environ if environ is None else environ
    if table.get("enabled") is False or env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if table.get("otlp_endpoint"):
        return _traces_url(str(table["otlp_endpoint"]))
    if env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip():
        return env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"].strip()
    if env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip():
        return _traces_url(env["OTEL_EXPORTER_OTLP_ENDPOINT"].strip())
    if table.get("enabled") is True:
        return _traces_url(DEFAULT_ENDPOINT)
    return None


def _traces_url(base: str) -> str:
    base = base.rstrip("/")
    return base if base.endswith(_TRACES_PATH) else base + _TRACES_PATH


def configure_from(table: Mapping[str, object] | None = None, environ: Mapping[str, str] | None = None) -> bool:
    """Start exporting if ``[telemetry]`` (``table``) or the environment asks for it; whether spans are recorded.

    Decided once per process: the first runner or agent that asks sets tracing up, the rest share it; a look
    without a ``table`` (an Agent's turn) that finds nothing asked decides nothing, so a runner's settings may
    still ask later. An application's own tracer provider, when it set one, is used as it is. Asked for without
    the SDK installed: one warning naming the extra, and everything goes on untraced.
    """
    if _tracing.settled or _tracing.provider is not None:
        return _spans_to_tracer()
    endpoint = telemetry_endpoint(table, environ)
    if endpoint is None and table is None:
        return _spans_to_tracer()
    _tracing.settled = True
    if endpoint is None or _application_provider() is not None:
        return _spans_to_tracer()
    service = (table or {}).get("service_name")
    return configure(endpoint, service_name=service if isinstance(service, str) and service else SERVICE_NAME)


def configure(
    endpoint: str | None = None, *, service_name: str = SERVICE_NAME, exporter: SpanExporter | None = None
) -> bool:
    """Record spans and export them: to ``exporter`` as they end, else in batches over OTLP/HTTP to ``endpoint``.

    ``endpoint`` is a receiver's base URL (``http://127.0.0.1:4318``) or its traces URL; by default
    :data:`DEFAULT_ENDPOINT`. Replaces a provider set up here before (flushing it first). False, with one
    warning, when the OpenTelemetry SDK is not installed.
    """
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    except ImportError:
        _warn_missing_sdk()
        return False
    leaving = None
    if exporter is not None:
        processor: SimpleSpanProcessor | BatchSpanProcessor = SimpleSpanProcessor(exporter)
    else:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            _warn_missing_sdk()
            return False
        from ._leaving import LeavingExporter, say_export_failures_once

        timeout = None if _TIMEOUT_VARIABLES & os.environ.keys() else EXPORT_TIMEOUT
        url = _traces_url(endpoint or DEFAULT_ENDPOINT)
        say_export_failures_once(url)
        leaving = LeavingExporter(OTLPSpanExporter(endpoint=url, timeout=timeout))
        processor = BatchSpanProcessor(leaving)
    shutdown()
    # shut down at exit by shutdown() (bounded), not by the SDK's own hook (which waits up to 30 s)
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}), shutdown_on_exit=False)
    provider.add_span_processor(processor)
    _tracing.provider, _tracing.leaving, _tracing.settled = provider, leaving, True
    if not _tracing.exit_hooked:
        _tracing.exit_hooked = True
        atexit.register(shutdown)
    return _spans_to_tracer()


def _spans_to_tracer() -> bool:
    """Send the span pipeline to OpenTelemetry if there is a tracer (ours or the application's); whether there is."""
    if tracer() is None:
        return False
    if _tracing.processor is None:
        _tracing.processor = OpenTelemetryProcessor()
    spans.add_span_processor(_tracing.processor)
    return True


def _warn_missing_sdk() -> None:
    if not _tracing.warned:
        _tracing.warned = True
        warnings.warn(
            f"tracing is asked for but OpenTelemetry is not installed ({OTEL_EXTRA}); going on untraced",
            RuntimeWarning,
            stacklevel=4,
        )


def _application_provider() -> otel_trace.TracerProvider | None:
    """The tracer provider the application set globally, if it imported OpenTelemetry and set a real one."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return None
    found: otel_trace.TracerProvider = provider
    return found


def tracer() -> Tracer | None:
    """The tracer spans are made with; ``None`` when tracing is off (then nothing is to be recorded)."""
    if _tracing.provider is not None:
        if _tracing.tracer is None:
            _tracing.tracer = _tracing.provider.get_tracer(_SCOPE, _version())
        return _tracing.tracer
    provider = _application_provider()
    if provider is None:
        return None
    found: Tracer = provider.get_tracer(_SCOPE, _version())
    return found


def _version() -> str | None:
    try:
        return importlib.metadata.version("semif-agent")
    except importlib.metadata.PackageNotFoundError:
        return None


def flush(timeout_millis: int = 30_000) -> bool:
    """Export every span ended so far (they go in batches); whether all went out in time."""
    if _tracing.provider is None:
        return True
    return bool(_tracing.provider.force_flush(timeout_millis))


def shutdown(timeout: float = SHUTDOWN_TIMEOUT) -> None:
    """Flush and stop the provider set up here (tracing is then off until configured again); run at exit too.

    Spans still queued for the OTLP receiver may take ``timeout`` seconds more to go out, then are dropped (a
    warning says how many), so a slow or stuck receiver cannot hold the process.
    """
    provider, leaving = _tracing.provider, _tracing.leaving
    _tracing.provider, _tracing.tracer, _tracing.leaving = None, None, None
    if _tracing.processor is not None:
        spans.remove_span_processor(_tracing.processor)
    if leaving is not None:
        leaving.leave_within(timeout)
    if provider is not None:
        provider.shutdown()


class OpenTelemetryProcessor(spans.SpanProcessor):
    """Makes each span an OpenTelemetry span of :func:`tracer` (nothing while tracing is off).

    A span whose parent went through this processor nests under that parent's
    OpenTelemetry span; one without (a run's top span) nests under the
    application's current OpenTelemetry span, if any.
    """

    def __init__(self) -> None:
        self._open: dict[str, OtelSpan] = {}
        self._lock = threading.Lock()

    def on_span_start(self, span: spans.Span) -> None:
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

    def on_span_end(self, span: spans.Span) -> None:
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
