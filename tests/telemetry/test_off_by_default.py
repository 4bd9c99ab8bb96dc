"""Tracing costs nothing unless asked for, and asking for it without the SDK only warns: real `semif run` processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import semif_agent

SRC = Path(semif_agent.__file__).resolve().parents[1]
ANSWERS = ["email", "email.compose", "Alice", "success"]


def semif_run(root: Path, tmp_path: Path, *, before: str = "", env: dict[str, str] | None = None):
    """``semif run`` in a new interpreter (after ``before``): (the process, the modules it had imported)."""
    script = tmp_path / "answers.json"
    script.write_text(json.dumps(ANSWERS))
    args = ["run", "Email Alice about lunch", "-w", str(root), "--engine", f"scripted:{script}", "--json"]
    code = (
        f"{before}\nimport atexit, json, sys\n"
        "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))\n"
        f"from semif_agent.cli import main\nmain({args!r}, prog_name='semif')\n"
    )
    base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    base["PYTHONPATH"] = os.pathsep.join([str(SRC), base.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**base, **(env or {})}, timeout=180
    )
    modules = set(json.loads(done.stderr.strip().splitlines()[-1]))
    return done, modules


def test_a_plain_run_imports_nothing_of_opentelemetry(make_workspace, tmp_path: Path) -> None:
    done, modules = semif_run(make_workspace(), tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["skill"] == "email.compose"
    assert "semif_agent.telemetry" in modules  # the seam is there, and it stayed idle
    assert sorted(m for m in modules if m.startswith("opentelemetry")) == []


@pytest.mark.slow
def test_tracing_asked_for_without_the_sdk_warns_once_and_the_run_goes_on(make_workspace, tmp_path: Path) -> None:
    root = make_workspace(settings="[telemetry]\nenabled = true\n")
    done, _ = semif_run(root, tmp_path, before="import sys\nsys.modules['opentelemetry'] = None  # not installed")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["assessment"]["label"] == "success"
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: tracing is asked for but OpenTelemetry is not installed (pip install 'semif-agent[otel]'); "
        "going on untraced"
    ]


@pytest.mark.slow
def test_the_environment_variable_alone_turns_tracing_on(make_workspace, tmp_path: Path) -> None:
    # nothing listens there: the spans are lost at exit, quietly, and the run is unchanged
    done, modules = semif_run(make_workspace(), tmp_path, env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["skill"] == "email.compose"
    assert "opentelemetry.sdk.trace" in modules
