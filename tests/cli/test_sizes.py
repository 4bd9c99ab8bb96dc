"""Sizes are bounded: a request over the 64 KiB cap is a one-line error wherever it comes in (run, --batch, the
Agent's skill tool) and nothing runs or is logged for it; no log row is larger than 256 KiB, however much a
skill returns, and a cut value says how much was cut."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from semif_agent._sync import run_sync
from semif_agent.agent.agent_skills.code_tools import skill_tool
from semif_agent.engine import create_engine
from semif_agent.errors import UserError
from semif_agent.loop import SkillRunner
from semif_agent.records._fit import ROW_BYTES, fit_row, size_of
from semif_agent.skills import REQUEST_BYTES, Request
from semif_agent.workspace import Workspace

from .conftest import Semif

BIG_STATE = 400 * 1024  # over a row's cap, and with its action log under the 1 MiB a body's result line may hold

BODY = f"""
from semif_agent.skills import ActionResult, Prediction


def predict(ctx, request):
    return Prediction(text=request.text)


def act(ctx, request, prediction):
    return ActionResult(action_log="notes.big: " + "log " * {BIG_STATE // 4}, new_state="x" * {BIG_STATE})
"""

OVER = "a" * (REQUEST_BYTES + 1)


@pytest.fixture
def ws(make_workspace) -> Path:
    return make_workspace({"notes.big": BODY}, settings='[engine]\nname = "lexical"\n', admitted=True)


def log_of(root: Path) -> Path:
    return root / "data" / "decisions.jsonl"


def test_a_request_over_the_cap_is_one_line_and_runs_nothing(semif: Semif, ws: Path) -> None:
    done = semif("run", OVER, "-w", str(ws), "--skill", "notes.big", "--yes")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0 and "over the cap of 65,536 bytes" in done.stderr
    assert not log_of(ws).exists() or log_of(ws).read_text() == ""
    assert Request("é" * (REQUEST_BYTES // 2)).text  # the cap counts bytes: 64 KiB of UTF-8 is taken


def test_a_batch_entry_over_the_cap_fails_and_the_others_run(semif: Semif, ws: Path, tmp_path: Path) -> None:
    batch = tmp_path / "batch.jsonl"
    batch.write_text(
        json.dumps({"text": OVER, "skill": "notes.big"})
        + "\n"
        + json.dumps({"text": "hi", "skill": "notes.big"})
        + "\n"
    )
    done = semif("run", "--batch", str(batch), "-w", str(ws), "--yes", "--json")
    report, end = json.JSONDecoder().raw_decode(done.stdout)  # the report, then the error line of what failed
    assert done.returncode == 1 and "over the cap" in json.loads(done.stdout[end:])["error"]
    over, ran = sorted(report["runs"], key=lambda entry: entry["index"])
    assert "over the cap" in over["error_before_run"] and len(over["text"]) < 1000
    assert ran["outcome"] in ("success", "failure") and ran["run_id"]


def test_the_agents_skill_tool_refuses_a_request_over_the_cap(ws: Path) -> None:
    runner = SkillRunner(Workspace.load(ws), engine=create_engine("lexical"))
    tool = skill_tool(runner, runner.tree.get("notes.big"))
    assert tool.input_schema["properties"]["request"]["maxLength"] == REQUEST_BYTES
    with pytest.raises(UserError, match="over the cap"):
        run_sync(tool.fn(request=OVER))
    assert not log_of(ws).exists() or log_of(ws).read_text() == ""


def test_a_huge_result_adds_at_most_the_row_cap_per_row_to_the_log(semif: Semif, ws: Path) -> None:
    done = semif("run", "make it big", "-w", str(ws), "--skill", "notes.big", "--yes", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    lines = log_of(ws).read_bytes().splitlines()
    assert all(len(line) <= ROW_BYTES for line in lines)
    outcome = next(json.loads(line) for line in lines if json.loads(line)["kind"] == "outcome")
    assert outcome["new_state"].startswith("xxx") and outcome["new_state"].endswith(" bytes cut]")
    assert outcome["action_log"].endswith(" bytes cut]") and outcome["skill"] == "notes.big"


def test_fitting_a_row_keeps_every_field_and_the_small_ones_whole() -> None:
    row = {
        "kind": "outcome",
        "run_id": "r1",
        "skill": "notes.big",
        "new_state": "\x1b" * 400_000,
        "output": {"stdout": "y" * 500_000, "stderr": "e"},
    }
    fitted = fit_row(row)
    assert size_of(fitted) <= ROW_BYTES and set(fitted) == set(row)
    assert {k: fitted[k] for k in ("kind", "run_id", "skill")} == {
        "kind": "outcome",
        "run_id": "r1",
        "skill": "notes.big",
    }
    assert fitted["output"]["stderr"] == "e" and fitted["output"]["stdout"].endswith(" bytes cut]")
    assert fitted["new_state"].endswith(" bytes cut]")
    assert fit_row({"kind": "label", "run_id": "r1"}) == {"kind": "label", "run_id": "r1"}
