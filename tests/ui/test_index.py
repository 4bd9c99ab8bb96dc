"""The log index: the same run records as the decision log gives, kept up to date by reading only appended bytes."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from semif_agent.engine import DecisionRequest, DecisionResult, Option
from semif_agent.errors import LogError
from semif_agent.records import DecisionLog, DecisionRow, OutcomeRow
from semif_agent.ui.index import LogIndex, RunFilter
from semif_agent.ui.run_view import run_view


def decision(run_id: str, text: str, *, engine: str = "lexical", selected: str = "email", p: float = 0.8) -> dict:
    asked = DecisionRequest(text, "Which category?", [Option("email", "Email"), Option("none", "None")])
    answer = DecisionResult(selected, probabilities={selected: p}, engine=engine, latency_ms=1.0)
    return DecisionRow.of(run_id=run_id, step=1, kind="route", skill=None, request=asked, result=answer).to_row()


def outcome(run_id: str, text: str, skill: str | None, label: str, **extra: Any) -> dict:
    return OutcomeRow(run_id=run_id, skill=skill, request=text, outcome=label, **extra).to_row()


def write_runs(log: DecisionLog) -> None:
    log.extend(
        [decision("r1", "Email Alice the report"), outcome("r1", "Email Alice the report", "email.compose", "success")]
    )
    log.extend(
        [decision("r2", "Add a note: milk", engine="local"), outcome("r2", "Add a note: milk", "todos.add", "failure")]
    )
    log.add_label("r2", by="ann", skill="notes.add", outcome="failure")


def test_the_index_holds_the_records_the_log_gives(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "decisions.jsonl")
    write_runs(log)
    index = LogIndex(log.path)
    assert index.refresh() is True
    assert [record for _, record in index.records()] == log.runs()
    assert index.refresh() is False  # nothing appended since


def test_only_appended_whole_lines_are_read(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "decisions.jsonl")
    write_runs(log)
    index = LogIndex(log.path)
    index.refresh()
    version = index.version
    # Earlier bytes changed in place (same length) go unnoticed: proof that only new bytes are read.
    data = log.path.read_bytes()
    log.path.write_bytes(data.replace(b"Email Alice the report", b"Email Bruno the report"))
    line = json.dumps({"v": 1, "ts": time.time(), **decision("r3", "Plan the offsite")}) + "\n"
    with open(log.path, "ab") as handle:
        handle.write(line[:40].encode())  # a row still being written
    assert index.refresh() is False and "r3" not in index.runs
    with open(log.path, "ab") as handle:
        handle.write(line[40:].encode() + b"not json\n")
    assert index.refresh() is True and index.version > version
    assert index.runs["r3"].summary().request == "Plan the offsite"
    assert index.runs["r1"].summary().request == "Email Alice the report"
    assert index.skipped == 1


def test_a_replaced_log_is_read_again(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "decisions.jsonl")
    write_runs(log)
    index = LogIndex(log.path)
    index.refresh()
    fresh = DecisionLog(tmp_path / "fresh.jsonl")
    fresh.extend([decision("r9", "Only this one"), outcome("r9", "Only this one", None, "failure")])
    os.replace(fresh.path, log.path)
    assert index.refresh() is True
    assert list(index.runs) == ["r9"]


def test_runs_filter_and_page_newest_first(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "decisions.jsonl")
    write_runs(log)
    log.extend(
        [decision("r4", "Email Bob the minutes"), outcome("r4", "Email Bob the minutes", "email.compose", "unclear")]
    )
    index = LogIndex(log.path)
    index.refresh()

    def ids(**wanted: str) -> list[str]:
        return [record.run_id for _, record in index.page(RunFilter(**wanted))[0]]

    assert ids() == ["r4", "r2", "r1"]
    assert ids(text="EMAIL the") == ["r4", "r1"]
    assert ids(skill="todos.add") == ["r2"]
    assert ids(outcome="failure") == ["r2"]
    assert ids(label="labelled") == ["r2"] and ids(label="unlabelled") == ["r4", "r1"]
    assert ids(engine="local") == ["r2"]
    today = time.strftime("%Y-%m-%d")
    assert ids(since=today, until=today) == ["r4", "r2", "r1"] and ids(until="2000-01-01") == []
    first, total = index.page(RunFilter(), page=2, size=2)
    assert total == 3 and [record.run_id for _, record in first] == ["r1"]


def test_a_label_of_a_run_the_log_does_not_hold_makes_no_run(tmp_path: Path) -> None:
    path = tmp_path / "decisions.jsonl"
    path.write_text(json.dumps({"run_id": "ghost", "kind": "label", "skill": None, "by": "x"}) + "\n")
    index = LogIndex(path)
    index.refresh()
    assert index.runs == {} and DecisionLog(path).runs() == []


def test_a_changed_file_outside_the_workspace_is_never_read(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "data").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("do not show\n")
    (root / "data" / "draft.txt").write_text("To: Alice\n")
    log = DecisionLog(root / "data" / "decisions.jsonl")
    log.extend(
        [
            decision("r1", "Email Alice"),
            outcome(
                "r1",
                "Email Alice",
                "email.compose",
                "success",
                changes={"created": ["data/draft.txt", "../secret.txt"]},
            ),
        ]
    )
    index = LogIndex(log.path)
    index.refresh()
    view = run_view(index, None, root, "r1")
    draft, secret = view.changes
    assert draft.diff[-1] == "+To: Alice" and draft.diff[0] == "--- /dev/null"
    assert secret.diff is None and secret.why == "not shown (outside the workspace)"
    assert [option.id for option in view.decisions[0].options if option.chosen] == ["email"]


def test_a_log_that_is_a_link_is_refused_as_the_log_refuses_it(tmp_path: Path) -> None:
    real = DecisionLog(tmp_path / "elsewhere.jsonl")
    write_runs(real)
    (tmp_path / "decisions.jsonl").symlink_to(real.path)
    with pytest.raises(LogError, match="is a symbolic link"):
        LogIndex(tmp_path / "decisions.jsonl").refresh()


def test_a_run_page_shows_the_diff_the_run_logged_not_the_file_now(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "data").mkdir(parents=True)
    (root / "data" / "list.txt").write_text("milk\nchanged since\n")
    logged = ["--- a/data/list.txt", "+++ b/data/list.txt", "@@ -1,2 +1,2 @@", " milk", "-bread", "+eggs"]
    log = DecisionLog(root / "data" / "decisions.jsonl")
    log.extend(
        [
            decision("r1", "Swap bread for eggs"),
            outcome(
                "r1",
                "Swap bread for eggs",
                "notes.add",
                "success",
                changes={"modified": ["data/list.txt"]},
                diffs={"data/list.txt": logged},
            ),
        ]
    )
    index = LogIndex(log.path)
    index.refresh()
    (change,) = run_view(index, None, root, "r1").changes
    assert change.diff == logged and change.why == "as the run left it"
