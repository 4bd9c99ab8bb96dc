"""A trace receiver that cannot be reached is one short line on stderr, once per process, not the exporter's own.

The exporting process is a real Python process sending several batches to a local port nothing listens on.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import textwrap

import pytest

import semif_agent

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is not installed")
from semif_agent.telemetry._leaving import _short_reason

EXPORTER = textwrap.dedent(
    """
    import sys
    from semif_agent import spans, telemetry

    assert telemetry.configure(sys.argv[1])
    for batch in range(2):
        with spans.source().span(f"work {batch}"):
            pass
        telemetry.flush()
    telemetry.shutdown()
    print("done", flush=True)
    """
)


def closed_port() -> int:
    """A local port nothing listens on (it was free a moment ago, and is closed again)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.slow
def test_an_unreachable_receiver_is_one_line_once_per_process() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    src = os.path.dirname(os.path.dirname(semif_agent.__file__))
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", EXPORTER, url], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr
    assert done.stderr.splitlines() == [
        f"semif: cannot send spans to {url}/v1/traces: Connection refused; spans are dropped"
    ]


@pytest.mark.parametrize(
    ("said", "reason"),
    [
        ("Failed to export %s batch code: %s, reason: %s", "HTTP 404 Not Found"),
        ("Failed to export %s batch due to timeout, max retries or shutdown.", "no answer in time"),
    ],
)
def test_the_reason_is_a_few_words(said: str, reason: str) -> None:
    args = ("spans", 404, "Not Found") if "code" in said else ("spans",)
    record = logging.LogRecord("exporter", logging.ERROR, __file__, 1, said, args, None)
    assert _short_reason(record) == reason
