"""The assessment: the judge's verdict weighed against what the run observably did, through the real loop."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from semif_agent.cli import main
from semif_agent.engine import ScriptedEngine, create_engine
from semif_agent.loop import SkillRunner
from semif_agent.records import DecisionLog, DecisionRow, OutcomeRow
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

from ..conftest import SEED_BODY

TEXT = "Email Alice that the quarterly report is ready"


def verdict(label: str, p: float) -> dict:
    """A judge's answer with probabilities, the rest shared by the other two labels."""
    rest = [other for other in ("success", "failure", "unclear") if other != label]
    return {"selected": label, "probabilities": {label: p, rest[0]: (1 - p) * 0.8, rest[1]: (1 - p) * 0.2}}


def body(act_source: str) -> str:
    """A compose body whose ``act`` is ``act_source``; ``predict`` makes no decision."""
    return (
        "from semif_agent.skills import ActionResult, Prediction\n"
        + textwrap.dedent("""
        def predict(ctx, request):
            return Prediction(text="recipient is Alice", decisions=[])
    """)
        + textwrap.dedent(act_source)
    )


def run(root: Path, replies: list, text: str = TEXT, **kwargs):
    ws = Workspace.load(root)
    engine = ScriptedEngine(replies)
    return SkillRunner(ws, engine=engine).run(text, **kwargs), engine


def outcome_row(root: Path) -> OutcomeRow:
    return [r for r in DecisionLog(root / "data" / "decisions.jsonl").read() if isinstance(r, OutcomeRow)][-1]


def assess_rows(root: Path) -> list[DecisionRow]:
    return [
        r
        for r in DecisionLog(root / "data" / "decisions.jsonl").read()
        if isinstance(r, DecisionRow) and r.kind == "assess"
    ]


def test_an_error_is_a_failure_without_asking_the_judge(make_workspace) -> None:
    root = make_workspace(
        {
            "email.compose": body("""
        def act(ctx, request, prediction):
            raise ConnectionError("the mail server is down")
    """)
        },
        admitted=True,
    )  # the checker would refuse an act that never returns; this is about a raise at run time
    result, engine = run(root, ["email", "email.compose"])  # no verdict queued: asking the judge would fail
    assert result.assessment.label == "failure"
    assert "the mail server is down" in result.assessment.reason
    assert result.assessment.evidence["rule"] == "error" and result.assessment.evidence["error"] is True
    assert len(engine.calls) == 2 and not assess_rows(root)


def test_a_hand_back_is_a_failure_even_when_the_judge_says_success(make_workspace) -> None:
    root = make_workspace(
        {
            "email.compose": body("""
        def act(ctx, request, prediction):
            return ActionResult("email.compose: no contact matches the request; no draft written.", request.text)
    """)
        }
    )
    result, _ = run(root, ["email", "email.compose", verdict("success", 0.95)])
    assert result.assessment.label == "failure"
    assert result.assessment.reason == "it handed the request back without acting"
    assert result.assessment.evidence["handed_back"] is True and result.assessment.evidence["rule"] == "hand-back"
    assert [r.selected for r in assess_rows(root)] == ["success"], "the judge's own reading is still logged"


def test_a_hand_back_that_changed_files_is_unclear(make_workspace) -> None:
    root = make_workspace(
        {
            "email.compose": body("""
        def act(ctx, request, prediction):
            ctx.data_path("drafts", "half.txt").parent.mkdir(parents=True, exist_ok=True)
            ctx.data_path("drafts", "half.txt").write_text("To: Alice")
            return ActionResult("email.compose: gave up half way.", request.text)
    """)
        }
    )
    result, _ = run(root, ["email", "email.compose", verdict("failure", 0.9)])
    assert (
        result.assessment.label == "unclear"
        and result.assessment.reason == "it handed the request back but created data/drafts/half.txt"
    )


def test_success_claimed_with_nothing_done_is_unclear(make_workspace) -> None:
    root = make_workspace(
        {
            "email.compose": body("""
        def act(ctx, request, prediction):
            return ActionResult("email.compose: sent the email to Alice.", "Email sent to Alice.")
    """)
        }
    )
    result, _ = run(root, ["email", "email.compose", verdict("success", 0.97)])
    assert result.changes.empty
    assert result.assessment.label == "unclear"
    assert result.assessment.reason == "judged success (p=0.97), but nothing was changed for a request to 'email'"


def test_an_answer_that_found_nothing_is_not_a_success(make_workspace) -> None:
    root = make_workspace(
        {
            "email.list_drafts": body("""
        def act(ctx, request, prediction):
            return ActionResult("email.list_drafts: looked for drafts to Alice.", "No drafts to Alice.")
    """)
        }
    )
    result, _ = run(root, ["email", "email.list_drafts", verdict("success", 0.97)], text="Did I email Alice yet?")
    assert result.assessment.label == "unclear"
    assert result.assessment.reason == (
        "judged success (p=0.97), but it found nothing, which does not show it looked in the right place"
    )
    assert result.assessment.evidence["found_nothing"] is True


def test_a_written_file_with_a_confident_judge_is_a_success(make_workspace) -> None:
    root = make_workspace()
    result, _ = run(root, ["email", "email.compose", "Alice", verdict("success", 0.95)])
    assert result.assessment.label == "success"
    draft = f"data/drafts/{result.request.id}.txt"
    assert result.assessment.reason == f"judged success (p=0.95), and it created {draft}"


EMPTY_DRAFT = body("""
    def act(ctx, request, prediction):
        target = ctx.data_path("drafts", f"{request.id}.txt")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("To: David Okafor <david@example.com>\\nSubject: (no subject)\\n\\nHi David,\\n\\nBest regards,\\n")
        return ActionResult(f"email.compose: wrote draft {target}.", f"Draft written to {target.name} for David.")
""")


@pytest.mark.parametrize("said", ["success", "failure"])
def test_a_draft_that_carries_none_of_the_message_is_not_a_success(make_workspace, said) -> None:
    """A new user's "Tell my boss I'm out sick today" became a draft reading only "Hi David, Best regards", judged a
    success at 96%: the message was lost. What the run wrote is read against the request's words, not trusted."""
    root = make_workspace({"email.compose": EMPTY_DRAFT})
    text = "Email my boss I'm out sick today"  # the test workspace's compose says "email", not "tell"
    result, _ = run(root, ["email", "email.compose", verdict(said, 0.96)], text=text)
    draft = f"data/drafts/{result.request.id}.txt"
    assert result.assessment.evidence["carries_request"] is False
    if said == "success":
        assert result.assessment.label == "unclear"
        assert result.assessment.reason == (
            f"judged success (p=0.96), but what it wrote carries none of the request's words (created {draft})"
        )
    else:  # the written file does not speak against the judge's failure: the message is not in it
        assert result.assessment.label == "failure"
    out = CliRunner().invoke(main, ["log", "show", result.run_id, "-w", str(root)])
    assert "none of the request's words" in out.output


def test_a_draft_that_carries_the_message_is_read_as_carrying_it(make_workspace) -> None:
    root = make_workspace()
    result, _ = run(root, ["email", "email.compose", "Alice", verdict("success", 0.95)])
    assert result.assessment.evidence["carries_request"] is True and result.assessment.label == "success"


def test_an_unsure_success_verdict_stands_when_the_run_shows_what_was_asked(make_workspace) -> None:
    """An embedded judge's probabilities are a similarity model's: a correct draft can get 0.6. The draft the
    request asked for, written by the skill it fits, bears the verdict out; "unclear" is for runs a person must check."""
    root = make_workspace()
    result, _ = run(root, ["email", "email.compose", "Alice", verdict("success", 0.6)])
    draft = f"data/drafts/{result.request.id}.txt"
    assert result.assessment.label == "success"
    assert result.assessment.reason == f"judged success (p=0.60), and it created {draft} and reported no problem"
    assert result.assessment.evidence["rule"] == "judge and evidence"


def test_an_unsure_judge_gives_unclear_when_nothing_bears_it_out(tmp_path: Path) -> None:
    """A SKILL.md script that only printed something for a request to change something: the run shows nothing done."""
    root = create_workspace(tmp_path / "ws")
    folder = root / "skills" / "reminder" / "scripts"
    folder.mkdir(parents=True)
    (folder.parent / "SKILL.md").write_text(
        "---\nname: reminder\ndescription: Add a reminder.\nscript: scripts/run.py\n---\n# Reminders\n"
    )
    (folder / "run.py").write_text("print('ok')\n")
    engine = ScriptedEngine([verdict("success", 0.6)])
    result = SkillRunner(Workspace.load(root), engine=engine, allow_scripts=True).run(
        "Add a reminder to water the plants", skill="reminder"
    )
    assert result.assessment.label == "unclear" and "too unsure" in result.assessment.reason
    assert result.assessment.evidence["rule"] == "unsure"


def test_a_failure_verdict_against_the_asked_for_file_is_unclear(make_workspace) -> None:
    root = make_workspace()
    result, _ = run(root, ["email", "email.compose", "Alice", verdict("failure", 0.9)])
    assert result.assessment.label == "unclear"
    assert result.assessment.reason.startswith("judged failure (p=0.90), but it created data/drafts/")


def test_a_failure_verdict_the_log_agrees_with_stands_even_when_unsure(make_workspace) -> None:
    root = make_workspace(
        {
            "email.compose": body("""
        def act(ctx, request, prediction):
            return ActionResult("email.compose: could not reach the mail server.", "Not sent.")
    """)
        }
    )
    result, _ = run(root, ["email", "email.compose", verdict("failure", 0.6)])
    assert result.assessment.label == "failure"
    assert result.assessment.reason == "judged failure (p=0.60), and its log says it could not act"
    unsure, _ = run(make_workspace(name="ws2"), ["email", "email.compose", "Alice", verdict("failure", 0.6)])
    assert unsure.assessment.label == "unclear", "a written draft and an unsure failure verdict settle nothing"


def test_a_result_that_rests_on_a_close_call_is_unclear(make_workspace) -> None:
    root = make_workspace()
    close = {"selected": "Alice", "probabilities": {"Alice": 0.49, "Bob": 0.47, "none": 0.04}}
    result, _ = run(root, ["email", "email.compose", close, verdict("success", 0.95)])
    assert result.assessment.label == "unclear"
    assert (
        "'Alice' to 'Which contact is the intended recipient?' was a close call (margin 0.02)"
        in result.assessment.reason
    )


def test_a_calendar_event_for_an_email_request_is_not_a_success(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    text = "Email Grace that I accept the offer tomorrow at 10am"
    result, _ = run(root, [verdict("success", 0.97)], text=text, skill="calendar.add_event")
    assert result.changes.created and result.changes.created[0].startswith("data/calendar/")
    assert result.assessment.label == "unclear"
    assert "the request asks to 'email', which calendar.add_event does not do" in result.assessment.reason
    assert result.assessment.evidence["fits"] is False and result.assessment.evidence["verb"] == "email"
    drafted, _ = run(root, [verdict("success", 0.97)], text=text, skill="email.compose")  # Grace is named: no decision
    assert drafted.assessment.label == "success" and drafted.assessment.evidence["fits"] is True


def test_the_evidence_is_in_the_outcome_row(make_workspace) -> None:
    root = make_workspace()
    result, _ = run(root, ["email", "email.compose", "Alice", verdict("success", 0.95)])
    row = outcome_row(root)
    assert row.run_id == result.run_id and row.outcome == "success"
    assert row.reason == result.assessment.reason
    assert row.evidence == {
        "error": False,
        "handed_back": False,
        "could_not": False,
        "changed": 1,
        "confined": True,
        "answered": True,
        "found_nothing": False,
        "asks": "change",
        "verb": "email",
        "fits": True,
        "close_call": None,
        "carries_request": True,
        "rule": "judge",
        "judge": {"label": "success", "p": 0.95, "margin": 0.91},
        "gate": result.gate.to_dict(),
    }
    assert row.evidence["gate"]["acts"] is True and row.evidence["gate"]["asks"] == "change"
    assert result.to_dict()["assessment"]["evidence"] == row.evidence


def test_runs_the_loop_settles_alone_log_their_evidence_too(make_workspace) -> None:
    root = make_workspace({"email.compose": SEED_BODY, "email.archive": None})
    run(root, ["email", "email.archive"], text="archive old mail")
    assert (outcome_row(root).evidence or {})["rule"] == "stub"
    run(root, ["none"], text="What's the weather in Lisbon?")
    row = outcome_row(root)
    assert row.outcome == "unclear" and (row.evidence or {})["rule"] == "no skill"


@pytest.fixture(scope="module")
def local_engine():
    return create_engine("local")


@pytest.mark.parametrize(
    ("text", "skill", "label"),
    [
        (TEXT, "email.compose", "success"),
        ("Add a meeting with David", "calendar.add_event", "failure"),  # no time given: the skill hands it back
        # a correct listing the embedded judge was unsure of (p 0.57) while it read "no files changed"
        ("Which files did I change recently?", "files.recent", "success"),
        # the wrong skill: not a success however sure the judge is
        ("Email Bob that the invoice was paid", "todos.add", "unclear"),
        ("Schedule lunch with Alice on Friday at noon", "todos.add", "unclear"),
        ("Show my open tasks", "notes.search", "unclear"),
    ],
)
def test_the_local_engine_labels_plain_runs_of_the_starter_workspace(
    tmp_path: Path, local_engine, text, skill, label
) -> None:
    result = SkillRunner(Workspace.load(create_workspace(tmp_path / "ws")), engine=local_engine).run(text, skill=skill)
    assert result.assessment.label == label, result.assessment.reason


def test_the_local_engine_does_not_label_a_correct_empty_search_a_failure(tmp_path: Path, local_engine) -> None:
    ws = Workspace.load(create_workspace(tmp_path / "ws"))
    result = SkillRunner(ws, engine=local_engine).run("Find my passport scan", skill="files.find")
    assert "no file under" in result.action.action_log
    assert result.assessment.verdict == "failure", "the judge alone reads 'no match' as failure"
    assert result.assessment.label == "unclear"


def test_the_local_engine_does_not_label_a_script_that_printed_its_answer_a_failure(
    tmp_path: Path, local_engine
) -> None:
    root = create_workspace(tmp_path / "ws")
    folder = root / "skills" / "unit-converter" / "scripts"
    folder.mkdir(parents=True)
    (folder.parent / "SKILL.md").write_text(
        "---\nname: unit-converter\ndescription: Convert distances between miles "
        "and kilometres.\nscript: scripts/run.py\n---\n# Units\n"
    )
    (folder / "run.py").write_text("print('12 miles is 19.31 km')\n")
    result = SkillRunner(Workspace.load(root), engine=local_engine, allow_scripts=True).run(
        "Convert 12 miles to kilometres", skill="unit-converter"
    )
    assert result.action.new_state == "12 miles is 19.31 km"
    assert result.assessment.label != "failure", result.assessment.reason


def test_semif_run_prints_the_label_and_its_reason(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    result = CliRunner().invoke(
        main,
        ["run", "Add a meeting with David", "--skill", "calendar.add_event", "-w", str(root), "--engine", "lexical"],
    )
    assert result.exit_code == 0, result.output
    assert "assessment  failure (it handed the request back without acting)" in result.output


def test_a_contraction_the_log_quotes_is_not_the_skill_saying_it_could_not_act(tmp_path: Path) -> None:
    """The starter's draft of "Tell Bob I can't make the party" logs its subject, "I can't make the party": that is
    the message, not the skill saying it could not act."""
    ws = Workspace.load(create_workspace(tmp_path / "ws"))
    result = SkillRunner(ws, engine=ScriptedEngine([verdict("success", 0.9)])).run(
        "Tell Bob I can't make the party", skill="email.compose"
    )
    assert "I can't make the party" in result.action.action_log
    assert result.assessment.evidence["could_not"] is False and result.assessment.label == "success"
