"""An exporter that stops sending once the process is leaving, so a slow receiver cannot hold its exit.

OpenTelemetry's batch processor, when shut down (at exit), sends every
batch still queued, one after another, and waits up to 30 seconds for them:
a receiver that answers slowly holds the process that long. Wrapped in a
:class:`LeavingExporter`, batches are sent as before until
:meth:`LeavingExporter.leave_within` is called; from then on a batch is
sent only until that deadline, and the rest are dropped (one warning says
how many). Only the export already under way when the deadline passes is
waited for, and it ends within the exporter's own timeout.

Imported only when tracing is set up (it imports the OpenTelemetry SDK).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

log = logging.getLogger("semif_agent.telemetry")


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
