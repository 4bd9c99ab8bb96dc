"""Rows and writers the decision-log tests share: a route decision, and a writer killed mid-write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from semif_agent.engine import DecisionRequest, DecisionResult, Option
from semif_agent.records import DecisionRow


def decision(run: str, step: int, state: str = "Add a note: buy milk", kind: str = "route", **extra) -> dict:
    asked = DecisionRequest(state, "Which skill?", [Option("todos.add", "Add a task"), Option("none")])
    return DecisionRow.of(
        run_id=run,
        step=step,
        kind=kind,
        skill=None,
        request=asked,
        result=DecisionResult(selected="todos.add", scores={"todos.add": 0.5}, engine="lexical"),
        **extra,
    ).to_row()


def kill_mid_write(writer: str, path: Path) -> None:
    """Run the ``writer`` script on ``path`` until it prints "ready", then kill it while it writes on."""
    proc = subprocess.Popen([sys.executable, "-c", writer, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
