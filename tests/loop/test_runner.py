"""The skill loop: every failure of a body becomes a clear, logged result; nothing is lost."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from semif_agent.engine import ScriptedEngine
from semif_agent.loop import SkillRunner
from semif_agent.records import DecisionLog, DecisionRow, OutcomeRow
from semif_agent.workspace import Workspace

from ..conftest import SEED_BODY

TEXT = "Email Alice that the quarterly report is ready"


def runner(root: Path, replies: list, **kwargs) -> SkillRunner:
    return SkillRunner(Workspace.load(root), engine=ScriptedEngine(replies), **kwargs)


def body(source: str) -> str:
    return "from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction\n" + textwrap.dedent(
        source
    )


def outcome_rows(root: Path) -> list[OutcomeRow]:
    return [r for r in DecisionLog(root / "data" / "decisions.jsonl").read() if isinstance(r, OutcomeRow)]


def test_the_seed_body_runs_verbatim_and_every_decision_is_logged(make_workspace) -> None:
    root = make_workspace()
    result = runner(root, ["email", "email.compose", "Alice", "success"]).run(TEXT)
    assert result.skill == "email.compose" and result.error is None
    draft = root / "data" / "drafts" / f"{result.request.id}.txt"
    assert draft.read_text() == f"To: Alice\nBody: {TEXT}\n"
    assert result.changes.created == [f"data/drafts/{result.request.id}.txt"]
    assert result.assessment.label == "success"
    rows = list(DecisionLog(root / "data" / "decisions.jsonl").read(with_outcomes=True))
    assert [(r.row.step, r.row.kind, r.row.selected) for r in rows if isinstance(r.row, DecisionRow)] == [
        (1, "route", "email"),
        (2, "route", "email.compose"),
        (3, "predict", "Alice"),
        (4, "assess", "success"),
    ]
    assert all(r.row.run_id == result.run_id and r.outcome == "success" for r in rows)
    asked = rows[2].row
    assert isinstance(asked, DecisionRow) and asked.question == "Which contact is the intended recipient?"
    assert asked.options[-1] == {"id": "none", "description": "None of the listed contacts."}
    assert asked.skill == "email.compose" and isinstance(rows[0].row, DecisionRow) and rows[0].row.skill is None


def test_a_request_that_fits_nothing_is_handed_back(make_workspace) -> None:
    root = make_workspace()
    result = runner(root, ["none"]).run("What's the weather in Lisbon?")
    assert result.skill is None
    assert result.handed_back and result.to_dict()["handed_back"] is True  # as its text says, in every output
    assert result.action.new_state == "What's the weather in Lisbon?"
    assert "no category fits" in result.action.action_log
    assert result.assessment.label == "unclear"
    assert outcome_rows(root)[-1].outcome == "unclear"


def test_none_at_the_skill_level_is_handed_back_too(make_workspace) -> None:
    result = runner(make_workspace(), ["email", "none"]).run("Email archive cleanup")
    assert result.skill is None and "no skill of the 'email' category" in result.route.reason
    assert result.action.new_state == "Email archive cleanup"


def test_a_stub_is_navigable_and_says_so(make_workspace) -> None:
    root = make_workspace({"email.compose": SEED_BODY, "email.archive": None})
    result = runner(root, ["email", "email.archive"]).run("archive old mail")
    assert result.skill == "email.archive"
    assert "stub" in result.action.action_log and result.action.new_state == "archive old mail"
    assert result.assessment.label == "failure"


def test_a_body_with_a_syntax_error_is_a_clear_failure(make_workspace) -> None:
    root = make_workspace({"email.compose": "def predict(ctx, request)\n    return 1\n"})
    result = runner(root, ["email", "email.compose"]).run(TEXT)
    assert (
        "compose.py: the body fails the contract, so it was not run: line 1: [criterion 1] the body does not "
        "compile" in result.action.action_log
    )
    assert result.action.new_state == TEXT and result.assessment.label == "failure"
    assert outcome_rows(root)[-1].error


def test_an_admitted_body_that_no_longer_compiles_is_refused_before_it_loads(make_workspace) -> None:
    root = make_workspace(admitted=True)
    (root / "data" / "skills" / "email" / "compose.py").write_text("def predict(ctx, request)\n    return 1\n")
    result = runner(root, ["email", "email.compose"]).run(TEXT)
    assert "the body changed since it was admitted and fails the contract" in result.action.action_log
    assert "line 1: [criterion 1]" in result.action.action_log and result.assessment.label == "failure"


def test_a_body_missing_act_is_a_contract_error(make_workspace) -> None:
    root = make_workspace({"email.compose": "def predict(ctx, request):\n    return None\n"})
    result = runner(root, ["email", "email.compose"]).run(TEXT)
    assert "does not define act" in result.action.action_log
    assert result.assessment.label == "failure"


def test_a_body_that_raises_becomes_a_logged_result(make_workspace) -> None:
    root = make_workspace(
        {
            "email.compose": body("""
        def predict(ctx, request):
            return Prediction(text="ok", decisions=[])

        def act(ctx, request, prediction):
            contacts = {}
            return contacts["Alice"]
    """)
        }
    )
    result = runner(root, ["email", "email.compose"]).run(TEXT)
    assert "act raised KeyError at line 8: 'Alice'" in result.action.action_log
    assert result.action.new_state == TEXT
    assert outcome_rows(root)[-1].outcome == "failure"


def test_wrong_return_types_are_refused(make_workspace) -> None:
    root = make_workspace(
        {
            "email.compose": body("""
        def predict(ctx, request):
            return "recipient is Alice"

        def act(ctx, request, prediction):
            raise AssertionError("not reached")
    """)
        },
        admitted=True,
    )
    result = runner(root, ["email", "email.compose"]).run(TEXT)
    assert "predict returned str, not Prediction" in result.action.action_log


@pytest.mark.parametrize("how", ["data_path", "open", "pathlib", "sqlite", "subprocess"])
def test_writes_outside_the_data_dirs_are_refused(make_workspace, tmp_path: Path, how: str) -> None:
    outside = tmp_path / "outside.txt"
    writes = {
        "data_path": f"ctx.data_path({str(outside)!r})",
        "open": f"open({str(outside)!r}, 'w').write('x')",
        "pathlib": f"__import__('pathlib').Path({str(outside)!r}).write_text('x')",
        "sqlite": f"__import__('sqlite3').connect({str(outside)!r}).execute('create table t(x)')",
        "subprocess": f"__import__('subprocess').run(['touch', {str(outside)!r}])",
    }
    root = make_workspace(
        {
            "email.compose": body(f"""
        def predict(ctx, request):
            return Prediction(text="ok", decisions=[])

        def act(ctx, request, prediction):
            inside = ctx.data_path("drafts", "ok.txt")
            inside.parent.mkdir(parents=True, exist_ok=True)
            inside.write_text("allowed")
            {writes[how]}
            return ActionResult(action_log="wrote", new_state="done")
    """)
        },
        admitted=True,
    )
    result = runner(root, ["email", "email.compose"]).run(TEXT)
    assert not outside.exists()
    assert (root / "data" / "drafts" / "ok.txt").read_text() == "allowed"
    assert "act failed" in result.action.action_log
    assert "may not" in result.action.action_log and result.assessment.label == "failure"


def test_a_write_through_a_symlink_out_of_the_data_dir_is_refused(make_workspace, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    root = make_workspace(
        {
            "email.compose": body("""
        def predict(ctx, request):
            return Prediction(text="ok", decisions=[])

        def act(ctx, request, prediction):
            ctx.data_path("link", "x.txt").write_text("x")
            return ActionResult(action_log="wrote", new_state="done")
    """)
        }
    )
    (root / "data" / "drafts").mkdir()
    (root / "data" / "drafts" / "link").symlink_to(outside)
    result = runner(root, ["email", "email.compose"]).run(TEXT)
    assert not (outside / "x.txt").exists()
    assert "outside the data dirs" in result.action.action_log


def test_a_budget_overrun_fails_fast_even_if_the_body_swallows_it(make_workspace) -> None:
    root = make_workspace(
        {
            "email.compose": body("""
        def predict(ctx, request):
            made = []
            for _ in range(10):
                ask = DecisionRequest(request.text, "Again?", [Option("yes"), Option("none")])
                try:
                    made.append((ask, ctx.engine.call(ask)))
                except Exception:
                    break
            return Prediction(text="ok", decisions=made)

        def act(ctx, request, prediction):
            return ActionResult(action_log="done", new_state="done")
    """)
        },
        budgets={"email.compose": 2},
    )
    engine = ScriptedEngine(["email", "email.compose"], default="yes")
    result = SkillRunner(Workspace.load(root), engine=engine).run(TEXT)
    assert "exceeded its cost_budget of 2 engine calls" in result.action.action_log
    assert result.assessment.label == "failure"
    kinds = [r.kind for r in result.rows]
    assert kinds == ["route", "route", "predict", "predict", "outcome"], "no third call reached the engine"
    assert len(engine.calls) == 4


def test_a_body_that_hangs_is_abandoned(make_workspace) -> None:
    root = make_workspace(
        {
            "email.compose": body("""
        import time
        def predict(ctx, request):
            time.sleep(2)
        def act(ctx, request, prediction):
            pass
    """)
        },
        admitted=True,
    )
    result = runner(root, ["email", "email.compose"], body_timeout=0.2).run(TEXT)
    assert "did not finish in time" in result.action.action_log


def test_running_a_named_skill_skips_routing(make_workspace) -> None:
    root = make_workspace()
    result = runner(root, ["Bob", "success"]).run("Write to Bob about lunch", skill="email.compose")
    assert [r.kind for r in result.rows] == ["predict", "assess", "outcome"]
    assert (root / "data" / "drafts" / f"{result.request.id}.txt").read_text().startswith("To: Bob")


def test_json_projection_has_the_documented_keys(make_workspace) -> None:
    result = runner(make_workspace(), ["email", "email.compose", "Alice", "success"]).run(TEXT)
    data = json.loads(json.dumps(result.to_dict()))
    assert {"skill", "action_log", "new_state", "assessment", "decisions", "log"} <= set(data)
    assert len(data["decisions"]) == 4 and data["assessment"]["label"] == "success"


DIFFING = """
from pathlib import Path
from semif_agent.skills import ActionResult, Prediction

def predict(ctx, request):
    return Prediction(text="go")

def act(ctx, request, prediction):
    notes = Path(ctx.config["notes"])
    notes.mkdir(parents=True, exist_ok=True)
    (notes / "list.txt").write_text("milk\\nbread\\n" if request.text == "first" else "milk\\neggs\\n")
    (notes / "blob.bin").write_bytes(bytes(range(256)) * (2 if request.text == "first" else 3))
    return ActionResult(action_log="wrote the list", new_state="done")
"""


def test_a_run_logs_the_diffs_of_the_text_files_it_changed(make_workspace) -> None:
    root = make_workspace({"email.compose": body(DIFFING)}, admitted=True)
    run = runner(root, [])
    first = run.run("first", skill="email.compose")
    second = run.run("second", skill="email.compose")
    created, modified = outcome_rows(root)
    assert first.changes.created == ["data/notes/blob.bin", "data/notes/list.txt"]
    assert created.diffs == {
        "data/notes/list.txt": ["--- /dev/null", "+++ b/data/notes/list.txt", "@@ -0,0 +1,2 @@", "+milk", "+bread"]
    }
    assert second.changes.modified == ["data/notes/blob.bin", "data/notes/list.txt"]
    lines = (modified.diffs or {})["data/notes/list.txt"]
    assert "-bread" in lines and "+eggs" in lines and " milk" in lines
    assert "data/notes/blob.bin" not in (modified.diffs or {})  # not text: listed as changed, no diff
