"""A process that exports traces leaves in bounded time, however slowly its OTLP receiver answers.

The receiver is a real local HTTP server; the exporting process is a real Python process that
sets tracing up, ends many spans (several batches) and leaves, so its exit runs as a user's would.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import semif_agent

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is not installed")
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from semif_agent.telemetry._setup import EXPORT_TIMEOUT, SHUTDOWN_TIMEOUT

pytestmark = pytest.mark.slow

SPANS = 2048  # four batches of the batch processor, all queued when the process leaves
EXPORTER = textwrap.dedent(
    """
    import sys
    from semif_agent import spans, telemetry

    assert telemetry.configure(sys.argv[1])
    for number in range(int(sys.argv[2])):
        with spans.source().span(f"work {number}"):
            pass
    print("leaving", flush=True)
    """
)


@dataclass
class Receiver:
    """An OTLP/HTTP receiver on a free port: counts the spans it is sent; while ``slow``, answers only when released."""

    slow: bool
    spans: int = 0
    requests: int = 0
    release: threading.Event = field(default_factory=threading.Event)
    url: str = ""


@pytest.fixture
def receiver(request: pytest.FixtureRequest) -> Iterator[Receiver]:
    kept = Receiver(slow=request.param == "slow")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            sent = ExportTraceServiceRequest.FromString(body)
            with lock:
                kept.requests += 1
                kept.spans += sum(len(s.spans) for r in sent.resource_spans for s in r.scope_spans)
            if kept.slow:
                kept.release.wait()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    kept.url = f"http://127.0.0.1:{server.server_address[1]}"
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    try:
        yield kept
    finally:
        kept.release.set()
        server.shutdown()
        server.server_close()


def export_and_leave(url: str) -> tuple[float, str]:
    """Run a process that ends :data:`SPANS` spans with tracing to ``url`` and leaves: how long it took to leave
    once its work was done, and what it wrote to stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    src = os.path.dirname(os.path.dirname(semif_agent.__file__))
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    process = subprocess.Popen(
        [sys.executable, "-c", EXPORTER, url, str(SPANS)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    try:
        assert process.stdout.readline().strip() == "leaving"
        done = time.monotonic()
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, stderr
    return time.monotonic() - done, stderr


@pytest.mark.parametrize("receiver", ["slow"], indirect=True)
def test_a_slow_receiver_does_not_hold_the_process_exit(receiver: Receiver) -> None:
    took, stderr = export_and_leave(receiver.url)
    # the export under way when the process leaves ends within its timeout; the batches still queued are dropped
    # once the shutdown time is spent, not sent one by one to a receiver that takes its time over each
    assert took < SHUTDOWN_TIMEOUT + EXPORT_TIMEOUT + 2.0, f"leaving took {took:.1f} s"
    assert 1 <= receiver.requests < SPANS // 512
    assert "spans were not exported: the trace receiver did not take them before the process left" in stderr


@pytest.mark.parametrize("receiver", ["prompt"], indirect=True)
def test_a_prompt_receiver_gets_every_span_as_the_process_leaves(receiver: Receiver) -> None:
    _, stderr = export_and_leave(receiver.url)
    assert receiver.spans == SPANS
    assert "not exported" not in stderr
