"""An exporter that stops sending once the process is leaving, so a slow receiver cannot hold its exit.

OpenTelemetry's batch processor, when shut down (at exit), sends every
batch still queued, one after another, and waits up to 30 seconds for them:
a receiver that answers slowly holds the process that long. Wrapped in a
:class:`LeavingExporter`, batches are sent as before until
:meth:`LeavingExporter.leave_within` is called; from then on a batch is
sent only until that deadline, and the rest are dropped (one warning says
how many). Only the export already under way when the deadline passes is
waited for, and it ends within the exporter's own timeout.

A receiver that cannot be reached is said once per process, in one line
(``semif: cannot send spans to URL: Connection refused; spans are dropped``),
instead of the exporter's own long lines at each retry of each batch
(:func:`say_export_failures_once`).

Imported only when tracing is set up (it imports the OpenTelemetry SDK).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from .._text import clip

log = logging.getLogger("semif_agent.telemetry")

EXPORTER_LOGGERS = (
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.exporter.otlp.proto.http._common",
    "opentelemetry.exporter.otlp.common.http",
)
"""The loggers the OTLP/HTTP span exporter says a failed export on (in the versions we know)."""


class LeavingExporter(SpanExporter):
    """``exporter``, sending nothing more once the deadline :meth:`leave_within` set has passed."""

    def __init__(self, exporter: SpanExporter) -> None:
        self.exporter = exporter
        self._deadline: float | None = None  # time.monotonic() after which batches are dropped
        self._dropped = 0
        self._lock = threading.Lock()

    def leave_within(self, seconds: float) -> None:
        """Send what is queued for at most ``seconds`` more (the process is leaving), then drop the rest."""
        with self._lock:
            self._deadline = time.monotonic() + max(0.0, seconds)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._lock:
            late = self._deadline is not None and time.monotonic() >= self._deadline
            if late:
                self._dropped += len(spans)
        if late:
            return SpanExportResult.FAILURE
        return self.exporter.export(spans)

    def shutdown(self) -> None:
        if self._dropped:
            log.warning(
                "%d spans were not exported: the trace receiver did not take them before the process left",
                self._dropped,
            )
        self.exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.exporter.force_flush(timeout_millis)


class _ExportFailures(logging.Filter):
    """Holds back the exporter's lines about an export that failed; the first makes our one line, once per process."""

    def __init__(self) -> None:
        super().__init__()
        self.url = ""
        self.said = False
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING or "export" not in str(record.msg).lower():
            return True
        with self._lock:
            said, self.said = self.said, True
        if not said:
            log.warning("semif: cannot send spans to %s: %s; spans are dropped", self.url, _short_reason(record))
        return False


_failures = _ExportFailures()


def say_export_failures_once(url: str) -> None:
    """From now on, a failed export to ``url`` is one line of ours for the whole process, not the exporter's lines."""
    _failures.url = url
    for name in EXPORTER_LOGGERS:
        logger = logging.getLogger(name)
        if _failures not in logger.filters:
            logger.addFilter(_failures)


def _short_reason(record: logging.LogRecord) -> str:
    """Why an export failed, in a few words: the system's reason (``Connection refused``), the HTTP status, or the
    exporter's words shortened."""
    text = clip(record.getMessage(), 2000)
    system = re.search(r"\[Errno -?\d+\] ([^'\"\])\]]+)", text)
    if system:
        return system.group(1).strip()
    status = re.search(r"code: (\d+), reason: ([^,]+)", text)
    if status:
        return f"HTTP {status.group(1)} {status.group(2).strip()}".strip()
    if "timed out" in text.lower() or "timeout" in text.lower():
        return "no answer in time"
    return clip(text, 80)
