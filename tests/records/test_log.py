"""The decision log is append-only, crash-safe, and readable after a crash."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from semif_agent.engine import DecisionLog, DecisionRequest, DecisionResult, Option
from semif_agent.engine.log import TornLineWarning, decision_row
from semif_agent.errors import LogError


def row(run: str, step: int, kind: str = "route") -> dict:
    asked = DecisionRequest("state", "question?", [Option("a", "A"), Option("none")])
    return decision_row(
        run_id=run,
        step=step,
        kind=kind,
        skill=None,
        request=asked,
        result=DecisionResult(selected="a", scores={"a": 0.5}, engine="lexical"),
    )


def test_rows_round_trip_with_schema_version(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "d.jsonl")
    log.append(row("r1", 1))
    log.extend([row("r1", 2), row("r2", 1)])
    rows = list(log.read())
    assert [(r["run_id"], r["step"]) for r in rows] == [("r1", 1), ("r1", 2), ("r2", 1)]
    assert all(r["v"] == 1 and r["ts"] > 0 for r in rows)
    assert rows[0]["options"] == [{"id": "a", "description": "A"}, {"id": "none", "description": ""}]


def test_outcome_rows_are_joined_onto_their_runs(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "d.jsonl")
    log.extend([row("r1", 1), row("r2", 1)])
    log.append({"run_id": "r1", "kind": "outcome", "outcome": "success"})
    rows = list(log.read(with_outcomes=True))
    assert [(r["run_id"], r["outcome"]) for r in rows] == [("r1", "success"), ("r2", None)]
    assert [r["run_id"] for r in log.filter(outcome="success")] == ["r1"]
    assert [r["run_id"] for r in log.filter(last_runs=1)] == ["r2"]


def test_torn_last_line_is_skipped_with_a_warning_and_the_next_row_starts_fresh(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    log = DecisionLog(path)
    log.extend([row("r1", 1), row("r1", 2)])
    with path.open("ab") as handle:
        handle.write(b'{"run_id": "r1", "step": 3, "sta')  # a write cut short
    with pytest.warns(TornLineWarning, match="torn last line"):
        assert len(list(log.read())) == 2
    log.append(row("r2", 1))
    with pytest.warns(TornLineWarning):
        rows = list(log.read())
    assert [(r["run_id"], r["step"]) for r in rows] == [("r1", 1), ("r1", 2), ("r2", 1)]


def test_missing_log_reads_as_empty(tmp_path: Path) -> None:
    assert list(DecisionLog(tmp_path / "nope.jsonl").read()) == []


WRITER = """
import sys
from semif_agent.engine import DecisionLog
log = DecisionLog(sys.argv[1])
big = "x" * 200_000
i = 0
while True:
    i += 1
    log.append({"run_id": "crash", "step": i, "state": big})
    if i == 20:
        print("ready", flush=True)
"""


def test_a_run_killed_mid_write_leaves_every_earlier_row_intact(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TornLineWarning)
        rows = list(DecisionLog(path).read())
    steps = [r["step"] for r in rows]
    assert len(steps) >= 20
    assert steps == list(range(1, len(steps) + 1)), "rows before the kill must all be intact and in order"
    DecisionLog(path).append({"run_id": "after", "step": 1})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TornLineWarning)
        assert list(DecisionLog(path).read())[-1]["run_id"] == "after"
    lines = path.read_bytes().split(b"\n")
    assert json.loads(lines[-2])["run_id"] == "after"


def test_a_symlink_in_place_of_the_log_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious\n")
    (tmp_path / "d.jsonl").symlink_to(target)
    log = DecisionLog(tmp_path / "d.jsonl")
    with pytest.raises(LogError, match=r"d\.jsonl is a symbolic link; refusing to follow it"):
        log.append(row("r1", 1))
    with pytest.raises(LogError, match="symbolic link"):
        list(log.read())
    assert target.read_text() == "precious\n"


def test_a_dangling_symlink_is_not_followed_to_create_a_file(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").symlink_to(tmp_path / "created-through-the-link.jsonl")
    with pytest.raises(LogError, match="symbolic link"):
        DecisionLog(tmp_path / "d.jsonl").append(row("r1", 1))
    assert not (tmp_path / "created-through-the-link.jsonl").exists()


def test_a_directory_or_a_fifo_in_place_of_the_log_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").mkdir()
    with pytest.raises(LogError, match=r"d\.jsonl is a directory"):
        DecisionLog(tmp_path / "d.jsonl").append(row("r1", 1))
    with pytest.raises(LogError, match=r"d\.jsonl is a directory"):
        list(DecisionLog(tmp_path / "d.jsonl").read())
    assert list((tmp_path / "d.jsonl").iterdir()) == []
    os.mkfifo(tmp_path / "f.jsonl")
    with pytest.raises(LogError, match=r"f\.jsonl is not a regular file"):
        DecisionLog(tmp_path / "f.jsonl").append(row("r1", 1))
    with pytest.raises(LogError, match=r"f\.jsonl is not a regular file"):
        list(DecisionLog(tmp_path / "f.jsonl").read())
