"""`semif run` on a SKILL.md skill: its instructions without a model, the Agent with one, its script when allowed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from semif_agent.assistant.skill_runs import AgentSkillExecutor
from semif_agent.cli import main
from semif_agent.engine import ScriptedEngine
from semif_agent.llm import ScriptedProvider
from semif_agent.llm.errors import RateLimitError
from semif_agent.loop import SkillRunner
from semif_agent.records import DecisionLog, OutcomeRow
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "skills-corpus"


@pytest.fixture
def corpus_workspace(tmp_path: Path) -> Path:
    """The starter workspace with the 24 real corpus skills in skills/."""
    root = create_workspace(tmp_path / "ws")
    for skill_md in CORPUS.glob("*/*/SKILL.md"):
        shutil.copytree(skill_md.parent, root / "skills" / skill_md.parent.name)
    return root


def write_skill(root: Path, name: str, description: str, *, script: str | None = None) -> Path:
    folder = root / "skills" / name
    (folder / "scripts").mkdir(parents=True)
    extra = "script: scripts/run.py\n" if script else ""
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\n\nSay hello.\n"
    )
    if script:
        (folder / "scripts" / "run.py").write_text(script)
    return folder


def test_without_a_model_the_route_ends_at_the_skill_and_its_instructions_are_printed(corpus_workspace: Path) -> None:
    cli = CliRunner()
    result = cli.invoke(main, ["run", "debug a failing test", "-w", str(corpus_workspace)])
    assert result.exit_code == 0, result.output
    assert "skill       systematic-debugging" in result.output
    instructions = (CORPUS / "superpowers" / "systematic-debugging" / "SKILL.md").read_text().split("---", 2)[2].strip()
    assert "instructions of systematic-debugging" in result.output
    assert instructions.splitlines()[0] in result.output and instructions.splitlines()[-1] in result.output
    listed = cli.invoke(main, ["log", "-w", str(corpus_workspace), "--json", "--decisions"])
    rows = [json.loads(line) for line in listed.output.splitlines()]
    routes = [r for r in rows if r["kind"] == "route"]
    assert routes[-1]["selected"] == "systematic-debugging"
    assert {r["kind"] for r in rows} == {"route"}
    assert all(r["outcome"] == "unclear" for r in rows)  # instructions handed back: nobody acted on them yet
    assert "assessment  unclear (its instructions were handed back" in result.output


def test_run_json_carries_the_instructions(corpus_workspace: Path) -> None:
    result = CliRunner().invoke(main, ["run", "x", "--skill", "brainstorming", "-w", str(corpus_workspace), "--json"])
    data = json.loads(result.output)
    assert data["skill"] == "brainstorming" and "Brainstorming" in data["instructions"]


def test_with_a_model_the_agent_follows_the_skill_activated(corpus_workspace: Path) -> None:
    provider = ScriptedProvider(
        ["Found it: the fixture resets the clock. I added a failing test first, then fixed it."]
    )
    ws = Workspace.load(corpus_workspace)
    runner = SkillRunner(
        ws,
        engine=ScriptedEngine(fn=lambda r: "success" if "Did the skill" in r.question else r.options[0].id),
        skill_md_executor=AgentSkillExecutor(provider),
    )
    result = runner.run("debug a failing test", skill="systematic-debugging")
    system = "\n".join(m.content for m in provider.requests[0].messages if m.role == "system")
    assert '<skill_content name="systematic-debugging"' in system
    assert "Systematic Debugging" in system
    assert result.action.new_state.startswith("Found it")
    assert "followed the skill's instructions in 1 round" in result.action.action_log
    assert result.instructions is None
    rows = list(DecisionLog(ws.log_path).read())
    assert [r.kind for r in rows if r.run_id == result.run_id] == ["assess", "outcome"]


def test_a_model_failure_is_a_logged_failure_not_a_crash(corpus_workspace: Path) -> None:
    provider = ScriptedProvider([RateLimitError("slow down", provider="scripted", model="m")])
    ws = Workspace.load(corpus_workspace)
    runner = SkillRunner(
        ws, engine=ScriptedEngine(fn=lambda r: r.options[0].id), skill_md_executor=AgentSkillExecutor(provider)
    )
    result = runner.run("debug a failing test", skill="systematic-debugging")
    assert result.assessment.label == "failure" and "following the skill failed" in result.error
    outcome = [r for r in DecisionLog(ws.log_path).read() if isinstance(r, OutcomeRow)][-1]
    assert outcome.outcome == "failure" and outcome.skill == "systematic-debugging"


def test_a_script_entry_point_runs_sandboxed_when_allowed(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    write_skill(
        root, "greeter", "Greet someone by name.", script="import sys\nprint('hello from', ' '.join(sys.argv[1:]))\n"
    )
    ws = Workspace.load(root)
    engine = ScriptedEngine(fn=lambda r: r.options[0].id)
    allowed = SkillRunner(ws, engine=engine, allow_scripts=True).run("greet Ada", skill="greeter")
    assert "ran its script scripts/run.py (exit 0): hello from greet Ada" in allowed.action.action_log
    assert allowed.instructions is None
    refused = SkillRunner(ws, engine=engine).run("greet Ada", skill="greeter")
    assert "scripts are not allowed" in refused.action.action_log
    assert refused.instructions.startswith("# greeter")


def test_a_failing_script_is_reported(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    write_skill(root, "broken", "Always fails.", script="raise SystemExit('no luck')\n")
    result = SkillRunner(
        Workspace.load(root), engine=ScriptedEngine(fn=lambda r: r.options[0].id), allow_scripts=True
    ).run("go", skill="broken")
    assert (
        "its script scripts/run.py failed (exit" in result.action.action_log and "no luck" in result.action.action_log
    )
    assert result.action.new_state == "go"


def test_the_model_calls_of_a_run_name_the_run(corpus_workspace: Path) -> None:
    from semif_agent.llm.calllog import logged, read_calls

    ws = Workspace.load(corpus_workspace)
    provider = logged(ScriptedProvider(["First answer.", "Second answer."]), ws, purpose="run")
    runner = SkillRunner(
        ws,
        engine=ScriptedEngine(fn=lambda r: "success" if "Did the skill" in r.question else r.options[0].id),
        skill_md_executor=AgentSkillExecutor(provider),
    )
    first = runner.run("debug a failing test", skill="systematic-debugging")
    second = runner.run("debug another failing test", skill="systematic-debugging")
    calls = list(read_calls(DecisionLog(ws.model_calls_path)))
    assert [call.run_id for call in calls] == [first.run_id, second.run_id]
    assert all(call.context.get("purpose") == "run" for call in calls)
