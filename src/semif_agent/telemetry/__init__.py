"""OpenTelemetry traces of what the package does, for any tool that reads OTLP (Phoenix, Jaeger, Langfuse, Tempo).

Off by default, at no cost: nothing of OpenTelemetry is imported until
tracing is asked for, by ``[telemetry]`` in ``semif.toml`` (``enabled =
true``, ``otlp_endpoint = "http://127.0.0.1:4318"``) or by the standard
``OTEL_EXPORTER_OTLP_ENDPOINT`` variable (see :func:`configure_from`), or
by calling :func:`configure`. An application that set up an OpenTelemetry
``TracerProvider`` of its own gets the spans there instead.

The spans follow the OpenTelemetry GenAI semantic conventions where they
apply (``invoke_agent``, ``chat``, ``execute_tool`` with ``gen_ai.*``
attributes: :class:`semif_agent.agent.TracingAgentCallback`), and add our
own for a SemIf run (``semif.run`` over ``semif.route``, ``semif.predict``,
``semif.act``, ``semif.assess``) and each decision (``semif.decision``).

Tracing on means one more processor in the process's span pipeline
(:mod:`semif_agent.spans`): :class:`OpenTelemetryProcessor`, so the spans of
a skill's scripts and hooks, written to ``.semif/skill-trace.jsonl`` as
before, reach the same backend, nested under the run or turn that ran them.
"""

from __future__ import annotations

from ._setup import (
    DEFAULT_ENDPOINT,
    OTEL_EXTRA,
    OpenTelemetryProcessor,
    configure,
    configure_from,
    flush,
    shutdown,
    telemetry_endpoint,
    tracer,
)
from ._spans import attribute_value, end_span, now_ns, set_error, start_span

__all__ = [
    "DEFAULT_ENDPOINT",
    "OTEL_EXTRA",
    "OpenTelemetryProcessor",
    "attribute_value",
    "configure",
    "configure_from",
    "end_span",
    "flush",
    "now_ns",
    "set_error",
    "shutdown",
    "start_span",
    "telemetry_endpoint",
    "tracer",
]
