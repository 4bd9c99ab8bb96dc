"""One span pipeline: runs, turns, decisions, skill scripts and hooks all reach every processor, nested as they ran."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from semif_agent import spans
from semif_agent.agent import Agent, TracingAgentCallback
from semif_agent.catalog import MemoryTraceWriter, read_spans
from semif_agent.engine import ScriptedEngine
from semif_agent.llm import ScriptedProvider
from semif_agent.loop import SkillRunner
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

from ..agent._support import calls, collect
from ..agent.test_skills_discovery import lexical_agent
from ..loop.test_skill_md_run import write_skill

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the sandbox is POSIX")

NOTE = 'print("noted")\n'


def noting_skill(root: Path) -> Path:
    """A skill with a script the model may run and a hook around every round."""
    folder = root / "noter"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: noter\ndescription: Takes notes.\nhooks:\n  pre_step: scripts/note.py\n---\nRun scripts/note.py.\n"
    )
    (folder / "scripts" / "note.py").write_text(NOTE)
    return folder


def turn_with_a_script_and_hooks(tmp_path: Path, *, agent_name: str = "noter-agent") -> list:
    """One Agent turn: a hook before each of its two rounds, and the model runs the skill's script once."""
    noting_skill(tmp_path / "skills")
    provider = ScriptedProvider(
        [calls(("run_skill_script", {"name": "noter", "script": "scripts/note.py"}, "call_s")), "noted it"]
    )
    agent = (
        Agent(llm=provider)
        .with_skills_directory(tmp_path / "skills", allow_scripts=True, workspace=tmp_path / "work")
        .with_callbacks([TracingAgentCallback(agent_name=agent_name)])
    )
    agent.skills.activate("noter")
    return collect(agent.stream("take a note"))


@pytest.fixture
def memory() -> Iterator[MemoryTraceWriter]:
    """Every span of the process kept in memory, in place of the processors there were."""
    before = spans.span_processors()
    kept = MemoryTraceWriter()
    spans.set_span_processors([kept])
    yield kept
    spans.set_span_processors(before)


def named(records, name: str) -> list:
    return [r for r in records if r["name"] == name]


def test_a_processor_the_user_adds_gets_the_turn_with_its_scripts_and_hooks_nested_under_it(memory, tmp_path):
    events = turn_with_a_script_and_hooks(tmp_path)
    assert events[-1].text == "noted it"
    records = list(memory.records)
    (turn,) = named(records, "invoke_agent noter-agent")
    hooks, scripts = named(records, "skill.hook"), named(records, "skill.script")
    assert [h["attributes"]["hook.type"] for h in hooks] == ["pre_step", "pre_step"]  # one per round
    assert [s["attributes"]["script.stdout_excerpt"] for s in scripts] == ["noted\n"]
    for span in [*hooks, *scripts]:
        assert span["parent_span_id"] == turn["span_id"] and span["trace_id"] == turn["trace_id"]
        assert span["status"]["code"] == "OK"
    assert [r["name"] for r in records if r["parent_span_id"] == turn["span_id"] and r["name"].startswith("chat")] == [
        "chat scripted",
        "chat scripted",
    ]
    # the workspace's own trace file keeps what it always held, now with the turn as the parent
    on_disk = read_spans(tmp_path / "work" / ".semif" / "skill-trace.jsonl")
    assert [r["span_id"] for r in named(on_disk, "skill.script")] == [scripts[0]["span_id"]]
    assert set(on_disk[0]) == set(scripts[0])


def test_a_run_its_phases_and_decisions_reach_the_same_processors(memory, make_workspace) -> None:
    root = make_workspace()
    engine = ScriptedEngine(["email", "email.compose", "Alice", "success"])
    result = SkillRunner(Workspace.load(root), engine=engine).run("Email Alice that the report is ready")
    records = list(memory.records)
    (run,) = named(records, "semif.run")
    assert run["parent_span_id"] is None and run["attributes"]["semif.run.id"] == result.run_id
    phases = [r for r in records if r["parent_span_id"] == run["span_id"]]
    assert sorted(p["name"] for p in phases) == ["semif.act", "semif.assess", "semif.predict", "semif.route"]
    decisions = named(records, "semif.decision")
    assert sorted(d["attributes"]["semif.decision.choice"] for d in decisions) == sorted(
        ["email", "email.compose", "Alice", "success"]
    )
    assert {d["parent_span_id"] for d in decisions} <= {p["span_id"] for p in phases}


class Failing(spans.SpanProcessor):
    def __init__(self) -> None:
        self.shut = False

    def on_span_end(self, span: spans.Span) -> None:
        raise RuntimeError("this processor is broken")

    def shutdown(self) -> None:
        self.shut = True


def test_a_failing_processor_is_skipped_and_replacing_processors_shuts_the_old_ones_down(memory, tmp_path) -> None:
    broken = Failing()
    spans.add_span_processor(broken)
    spans.add_span_processor(broken)  # added once
    assert spans.span_processors() == (memory, broken)
    events = turn_with_a_script_and_hooks(tmp_path)
    assert events[-1].text == "noted it"
    assert named(memory.records, "skill.script")  # the processor after it still got every span
    spans.set_span_processors([memory])
    assert broken.shut and spans.span_processors() == (memory,)


def test_with_no_processor_nothing_is_built_and_the_trace_file_is_as_before(tmp_path) -> None:
    before = spans.span_processors()
    spans.set_span_processors([])
    try:
        assert not spans.source().enabled
        turn_with_a_script_and_hooks(tmp_path)
    finally:
        spans.set_span_processors(before)
    on_disk = read_spans(tmp_path / "work" / ".semif" / "skill-trace.jsonl")
    assert sorted(r["name"] for r in on_disk if r["name"] != "skill.activate") == [
        "skill.hook",
        "skill.hook",
        "skill.script",
    ]
    assert all(r["parent_span_id"] is None for r in on_disk)  # no turn span was opened to nest under


def test_the_script_of_a_skill_md_skill_a_run_ends_at_nests_under_that_run(memory, tmp_path) -> None:
    root = create_workspace(tmp_path / "ws")
    write_skill(root, "greeter", "Greet someone by name.", script="import sys\nprint('hello', sys.argv[1])\n")
    engine = ScriptedEngine(fn=lambda r: r.options[0].id)
    result = SkillRunner(Workspace.load(root), engine=engine, allow_scripts=True).run("Ada", skill="greeter")
    assert "hello Ada" in result.action.action_log
    (run,) = named(memory.records, "semif.run")
    (script,) = named(memory.records, "skill.script")
    assert script["parent_span_id"] == run["span_id"] and script["trace_id"] == run["trace_id"]
    assert script["attributes"]["script.stdout_excerpt"] == "hello Ada\n"


def test_the_skill_shortlist_an_agent_routed_to_is_a_span_under_its_turn(memory) -> None:
    provider = ScriptedProvider(["ok"])
    agent = lexical_agent(provider).with_callbacks([TracingAgentCallback()])
    collect(agent.stream("I need to sort out my mortgages"))
    (turn,) = named(memory.records, "invoke_agent semif-agent")
    (shortlist,) = named(memory.records, "semif.shortlist")
    assert shortlist["parent_span_id"] == turn["span_id"]
    assert shortlist["attributes"]["semif.skills"][0] == "mortgages-helper"
