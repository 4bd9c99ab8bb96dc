"""``semif eval`` shows the act gate's trade-off: what the threshold in force lets act on the dataset, as a process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from semif_agent.engine import local_available

pytestmark = pytest.mark.skipif(not local_available(), reason="the local engine is not installed")

UNSURE = "Jot down: ask the bakery about gluten-free bread"  # notes.add at about 20% on a fresh starter
SURE = "Remind me to renew the passport"  # todos.add, sure: acts
QUESTION = "What's on my calendar next week?"  # calendar.list_events reads: acts
FREE = "Am I free on Friday afternoon?"  # routed to calendar.add_event: a lookup never runs a skill that writes


def test_eval_reports_the_gate_at_the_threshold_semif_run_acts_at(semif, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    assert semif("init", str(ws)).returncode == 0
    dataset = tmp_path / "requests.jsonl"
    rows = [
        (UNSURE, "notes.add"),
        (SURE, "todos.add"),
        (QUESTION, "calendar.list_events"),
        (FREE, "calendar.list_events"),
    ]
    dataset.write_text("".join(json.dumps({"text": t, "skill": s}) + "\n" for t, s in rows))

    done = semif("eval", str(dataset), "-w", str(ws), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    act_at = report["act_threshold"]
    assert (
        act_at["source"] == "measured" and 0 < act_at["threshold"] < 0.5
    )  # the starter has enough examples: measured, under the default
    for metrics in report["strategies"].values():
        assert metrics["acted"] + metrics["handed_back"] == pytest.approx(1.0)
    # the strategy semif run routes with: what each run does, request by request
    in_use = report["strategies"][act_at["strategy"]]
    assert in_use["acted"] == 0.75 and in_use["acted_accuracy"] == 1.0  # the lookup to a writing skill never acts
    ran = [json.loads(semif("run", t, "-w", str(ws), "--json", "--no-log").stdout) for t, _ in rows]
    assert [r["handed_back"] for r in ran] == [False, False, False, True]

    high = json.loads(semif("eval", str(dataset), "-w", str(ws), "--json", "--act-threshold", "0.5").stdout)
    assert high["act_threshold"] == {**high["act_threshold"], "threshold": 0.5, "source": "set"}
    assert high["strategies"][act_at["strategy"]]["acted"] == 0.5  # the unsure note is handed back at 50%
    ran = [
        json.loads(semif("run", t, "-w", str(ws), "--json", "--no-log", "--act-threshold", "0.5").stdout)
        for t, _ in rows
    ]
    assert [r["handed_back"] for r in ran] == [True, False, False, True]

    table = semif("eval", str(dataset), "-w", str(ws), "--strategy", act_at["strategy"], "--act-threshold", "0.5")
    assert table.returncode == 0, table.stderr
    assert "act gate at threshold 0.5" in table.stdout
    line = next(s for s in table.stdout.splitlines()[::-1] if s.startswith(act_at["strategy"]))
    assert line.split()[1:] == ["50.0%", "100.0%", "50.0%"]
    assert "acted right of those, the ones run by their own skill" in table.stdout  # the legend

    bad = semif("eval", str(dataset), "-w", str(ws), "--act-threshold", "1.5")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and "act_threshold" in bad.stderr
