"""Rows and writers the decision-log tests share: a route decision, rows read as decisions, a writer killed mid-write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from semif_agent.engine import DecisionRequest, DecisionResult, Option
from semif_agent.records import AnyRow, DecisionRow


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


def decisions(rows: Iterable[AnyRow]) -> list[DecisionRow]:
    """``rows`` read back, each of which must be a decision."""
    read = list(rows)
    assert all(isinstance(row, DecisionRow) for row in read), [row.kind for row in read]
    return [row for row in read if isinstance(row, DecisionRow)]


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
